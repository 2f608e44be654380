/**
 * Journals whose reads an erase interrupts at the worst moment, for the tests of erasure against copies
 * (test/erase/erase-live-copy.test.ts, erase-copy-race.test.ts): the race made exact instead of hoped for.
 */
import type { Journal, SeqRange } from '../../src/store/index.js';

/** `journal`, whose every read of lines runs `after` (awaited) once it has yielded its last line. */
export function afterReads<J extends Journal>(journal: J, after: (range: SeqRange) => Promise<void>): J {
  return new Proxy(journal, {
    get(target, name, receiver) {
      if (name !== 'lines') return Reflect.get(target, name, receiver) as unknown;
      return (range: SeqRange = {}) =>
        (async function* () {
          yield* target.lines(range);
          await after(range);
        })();
    },
  });
}
