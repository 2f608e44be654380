/** The CanonicalError a call throws: any other error is rethrown, and a call that returns fails the test. */
import { CanonicalError } from '../../src/canonical/errors.js';

export function refusal(fn: () => unknown): CanonicalError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CanonicalError) return e;
    throw e;
  }
  throw new Error('not refused');
}
