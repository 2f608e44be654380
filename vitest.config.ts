import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The files known to run longest (measured), in the order they start: with few workers, a long file started
 * last runs alone at the end. vitest orders by the durations it cached on an earlier run, and by file size
 * on a fresh checkout (`npm ci`), where these small but slow files would start last. The two fault files
 * starve the CPU on purpose, so they are not started side by side.
 */
const LONGEST_FIRST = [
  'test/faults/postgres.test.ts',
  'test/cli/human-output.test.ts',
  'test/faults/file-store.test.ts',
  'test/attacks/writers.test.ts',
  'test/adapters/crash.test.ts',
  'test/docs/examples.test.ts',
  'test/attacks/',
  'test/cli/hostile-output.test.ts',
  'test/page/',
  'test/faults/',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const path = relative(f.project.config.root, f.moduleId).split('\\').join('/');
      const i = LONGEST_FIRST.findIndex((p) => path.startsWith(p));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    return ordered
      .map((f, i) => ({ f, i, r: rank(f) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .map((x) => x.f);
  }
}

/**
 * The files that run in a fresh module graph of their own (vitest's `isolate`). The rest share one per
 * worker, which saves loading vitest, src/ and the libraries again for every file (back to back, test/record
 * test/canonical test/chain test/diff: CPU 45 s -> 25.5 s, wall 108 s -> 74 s under load). A file belongs
 * here when it changes process-wide state the next file in its worker would see, or relies on a fresh
 * module: fake timers, spies on process streams, process.env, process listeners, the SHA-256 backend
 * (setSha256Backend, vi.resetModules), OpenTelemetry's global context manager and providers, and test/faults,
 * whose helper registers its clean-up hooks when first imported (once per module graph) and whose files
 * starve the CPU on purpose.
 */
const ISOLATED = [
  'test/faults/**/*.test.ts',
  'test/otel/**/*.test.ts',
  'test/adapters/langgraph/ttl.test.ts',
  'test/canonical/sha256-batch.test.ts',
  'test/canonical/sha256-entry.test.ts',
  'test/chain/batch-hash.test.ts',
  'test/receipt/listeners.test.ts',
  'test/redact/cli.test.ts',
  'test/store/postgres.test.ts',
];

/** What both projects share. Not `extends: true`: a project inheriting the root's globalSetup would run it again. */
const shared = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks',
  // Removes each file's temporary directories (test/helpers/tmp.ts) when it ends.
  setupFiles: ['test/setup/temp-dirs.ts'],
} as const;

export default defineConfig({
  test: {
    // One throwaway PostgreSQL server per run, stopped whatever happens (test/setup/pg-runner.mjs), and
    // the npm-shipped Chromium for test/page extracted once, before the test files start. Set here, on the
    // root, it runs once for the whole run; the projects inherit what it provides (inject('pgUrl')).
    globalSetup: ['test/setup/postgres.ts', 'test/page/global-setup.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ISOLATED],
          isolate: false,
        },
      },
      { test: { ...shared, name: 'isolated', include: ISOLATED, isolate: true } },
    ],
    // vitest's default is one worker fewer than the cores: a single file at a time on a 2-core machine, where
    // most files spend their time waiting on the child processes, servers and timers they start, leaving a
    // core idle. Two at least: back to back, test/store 66 s -> 43 s (load ~5), test/runtime 37 s -> 31 s;
    // CPU-bound files gain nothing and lose nothing (test/receipt + test/chain 34 s -> 33 s); three gave no more.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: LongestFirst },
  },
});
