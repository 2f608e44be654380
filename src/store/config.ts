/**
 * A journal's config (store/types.ts JournalConfig): its defaults and limits (spec/FORMAT.md §7, spec/FILE-STORE.md §5), and
 * the checks every store runs on the options it is given. A store that keeps its own settings checks
 * them itself; these are the ones that decide a journal's bytes.
 */
import { intOption } from './ids.js';
import type { CreateOptions, JournalConfig } from './types.js';

export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;
export const MIN_SEGMENT_BYTES = 4096;
export const MAX_SEGMENT_BYTES = 2 ** 40;
export const DEFAULT_BLOB_THRESHOLD = 64 * 1024;
export const MIN_BLOB_THRESHOLD = 1024;
/** Capped far below MAX_LINE_BYTES, so five inline content fields always fit one line. */
export const MAX_BLOB_THRESHOLD = 1024 * 1024;

/** The config `options` ask for, each missing setting taken from `defaults`; OPTION_INVALID names a bad one. */
export function journalConfig(
  options: Pick<CreateOptions, 'segmentBytes' | 'blobThreshold'>,
  defaults: JournalConfig,
): JournalConfig {
  return {
    blobThreshold: intOption(
      'blobThreshold',
      options.blobThreshold,
      defaults.blobThreshold,
      MIN_BLOB_THRESHOLD,
      MAX_BLOB_THRESHOLD,
    ),
    segmentBytes: intOption(
      'segmentBytes',
      options.segmentBytes,
      defaults.segmentBytes,
      MIN_SEGMENT_BYTES,
      MAX_SEGMENT_BYTES,
    ),
  };
}

/** The built-in defaults, checked against a store's options. */
export function defaultConfig(options: Pick<CreateOptions, 'segmentBytes' | 'blobThreshold'>): JournalConfig {
  return journalConfig(options, { blobThreshold: DEFAULT_BLOB_THRESHOLD, segmentBytes: DEFAULT_SEGMENT_BYTES });
}
