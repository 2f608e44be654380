import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

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

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One throwaway PostgreSQL server per run, stopped whatever happens (test/setup/pg-runner.mjs), and
    // the npm-shipped Chromium for test/page extracted once, before the test files start.
    globalSetup: ['test/setup/postgres.ts', 'test/page/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: a single file at a time on a 2-core machine, where
    // most files spend their time waiting on the child processes, servers and timers they start, leaving a
    // core idle. Two at least: back to back, test/store 66 s -> 43 s (load ~5), test/runtime 37 s -> 31 s;
    // CPU-bound files gain nothing and lose nothing (test/receipt + test/chain 34 s -> 33 s); three gave no more.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: LongestFirst },
  },
});
