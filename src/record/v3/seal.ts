/**
 * Sealing a private `stepchain/v3` record (spec/FORMAT.md §14; docs/design/format-v3.md §4.3): its seed and
 * root R — worked out record by record, or for a whole appendMany batch before it is sequenced (R depends on
 * neither seq, prev_hash nor ts: every record's unit tree hashed together, commit-texts.ts) — then the line
 * without step_hash, B = its SHA-256, the step hash over B and the envelope, and the stored line. Pure.
 */
import { digestUtf8, toHex } from '../../canonical/sha256.js';
import type { Envelope, StepTexts } from '../profile.js';
import { commitManyTexts, commitRecordTexts } from './commit-texts.js';
import { CommitError, newSeed, seedFromHex } from './commit.js';

export const RECORD_VERSION_V3 = 3;

/** The members of the step hash's preimage besides `bind` (design §4.3), in JCS order with it. */
const ENVELOPE_NAMES = ['bind', 'kind', 'prev_hash', 'ref', 'root', 'seq', 'step_id', 'ts', 'v'] as const;

/** Not a digest: what a record whose envelope cannot be read hashes to, so it never matches (HASH_MISMATCH). */
export const UNDECIDED = 'sha256:undecided';

/**
 * The step hash from `bind` and the other envelope members' canonical texts (design §4.3). JCS of an
 * object of canonical member texts is their sorted concatenation, and ENVELOPE_NAMES is sorted.
 */
export function stepHashV3(bind: string, texts: (name: string) => string | undefined): string {
  let out = '{"bind":"' + bind + '"';
  for (let i = 1; i < ENVELOPE_NAMES.length; i++) {
    const t = texts(ENVELOPE_NAMES[i]!);
    if (t === undefined) return UNDECIDED;
    out += ENVELOPE_KEYS[i]! + t;
  }
  return digestUtf8(out + '}');
}

/**
 * Each member's `,"name":`, written once: built per member, it made two more string nodes for every member of
 * every record hashed (this preimage is built for each line verify reads: 0.93 → 0.79 µs a line, bench/RESULTS.md).
 */
const ENVELOPE_KEYS = ENVELOPE_NAMES.map((n) => `,"${n}":`);

/** The seed (copied or drawn) and R of a record, as the seal needs them. */
function commitV3(texts: StepTexts, seed: string | undefined): { seed: string; root: string } {
  const seedBytes = seed !== undefined ? seedFromHex(seed) : newSeed();
  if (seedBytes === null)
    throw new CommitError('SECRETS_INVALID', 'a v3 record seed is 64 lowercase hex digits', '/seed');
  // The unit tree from the slots' canonical texts, hashed level by level in batches (v3/commit-texts.ts).
  return { seed: seed ?? toHex(seedBytes), root: 'sha256:' + toHex(commitRecordTexts(texts, seedBytes)) };
}

/**
 * The seeds and roots of a batch's records before it is sequenced (RecordProfile.precommit): every record's
 * tree levels hashed together (v3/commit-texts.ts commitManyTexts). A record with an invalid copied seed or a
 * malformed part reference gets undefined: its seal throws the coded error in its own group.
 */
export function precommitV3(
  items: readonly { texts: StepTexts; seed: string | undefined }[],
): ({ seed: string; root: string } | undefined)[] {
  const texts: StepTexts[] = [];
  const seeds: Uint8Array[] = [];
  const at: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const s = items[i]!.seed;
    const bytes = s !== undefined ? seedFromHex(s) : newSeed();
    if (bytes === null) continue;
    texts.push(items[i]!.texts);
    seeds.push(bytes);
    at.push(i);
  }
  const roots = commitManyTexts(texts, seeds);
  const out: ({ seed: string; root: string } | undefined)[] = Array.from({ length: items.length }, () => undefined);
  for (let k = 0; k < at.length; k++) {
    const root = roots[k]!;
    if (root !== null) out[at[k]!] = { seed: items[at[k]!]!.seed ?? toHex(seeds[k]!), root: 'sha256:' + toHex(root) };
  }
  return out;
}

/*
 * A private line's members in JCS order (sealV3 writes them in this order): error, input, kind, meta, model,
 * prev_hash, prompt, ref, result, root, seed, seq, step_hash, step_id, tool_call, ts, v.
 */

/**
 * Each member's text before its value, `"name":` as the first member and `,"name":` after another: made
 * once, where building it per member made three short strings (each a copy) per member of every line.
 */
interface Head {
  first: string;
  next: string;
}
const head = (name: string): Head => ({ first: '"' + name + '":', next: ',"' + name + '":' });
const ERROR = head('error');
const INPUT = head('input');
const KIND = head('kind');
const META = head('meta');
const MODEL = head('model');
const PREV_HASH = head('prev_hash');
const PROMPT = head('prompt');
const REF = head('ref');
const RESULT = head('result');
const ROOT = head('root');
const SEED = head('seed');
const SEQ = head('seq');

/** `out` with the member (its head, its canonical text) appended, or as it was when the text is absent. */
function put(out: string, h: Head, text: string | undefined): string {
  return text === undefined ? out : out + (out.length === 1 ? h.first : h.next) + text;
}

/**
 * Seals a private v3 record from the canonical texts of its content and meta: draws a seed (or takes the
 * copy's `e.seed`), computes R over the values, assembles the line without step_hash, B = its SHA-256, the
 * step hash, and the stored line. Throws CommitError when a part reference in the texts is malformed.
 */
export function sealV3(texts: StepTexts, e: Envelope): { stepHash: string; line: string; root: string; bind: string } {
  const { root, seed: seedHex } = e.committed ?? commitV3(texts, e.seed);
  // Each envelope text once, for the line and the step hash alike (no closure, no second JSON.stringify).
  const prevHash = '"' + e.prevHash + '"';
  const rootText = '"' + root + '"';
  const seq = String(e.seq);
  const stepId = JSON.stringify(e.stepId);
  const ts = JSON.stringify(e.ts);
  // The members before step_hash (error … seq) and after it (step_id … v), in JCS order (above): B hashes
  // the line without step_hash; the line is the same text with step_hash in its sorted place (built once).
  let before = '{';
  before = put(before, ERROR, texts.error);
  before = put(before, INPUT, texts.input);
  before = put(before, KIND, texts.kind);
  before = put(before, META, texts.meta);
  before = put(before, MODEL, texts.model);
  before = put(before, PREV_HASH, prevHash);
  before = put(before, PROMPT, texts.prompt);
  before = put(before, REF, texts.ref);
  before = put(before, RESULT, texts.result);
  before = put(before, ROOT, rootText);
  before = put(before, SEED, '"' + seedHex + '"');
  before = put(before, SEQ, seq);
  const after =
    ',"step_id":' +
    stepId +
    (texts.tool_call === undefined ? '' : ',"tool_call":' + texts.tool_call) +
    ',"ts":' +
    ts +
    ',"v":' +
    RECORD_VERSION_V3;
  const bind = digestUtf8(before + after + '}');
  // The step hash's preimage as stepHashV3 builds it (ENVELOPE_NAMES, in order), from the same texts.
  const stepHash =
    texts.kind === undefined || texts.ref === undefined
      ? UNDECIDED
      : digestUtf8(
          '{"bind":"' +
            bind +
            '","kind":' +
            texts.kind +
            ',"prev_hash":' +
            prevHash +
            ',"ref":' +
            texts.ref +
            ',"root":' +
            rootText +
            ',"seq":' +
            seq +
            ',"step_id":' +
            stepId +
            ',"ts":' +
            ts +
            ',"v":' +
            RECORD_VERSION_V3 +
            '}',
        );
  const line = before + ',"step_hash":"' + stepHash + '"' + after + '}\n';
  return { stepHash, line, root, bind };
}
