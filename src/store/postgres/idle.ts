/**
 * A streamed batch's transaction stays open while its input is read (spec/POSTGRES.md §6.3), and the server
 * ends a session idle inside its transaction past idleTimeoutMs; the driver then reports only a lost
 * connection. A stream whose input paused that long is told so, not to check the server and the firewall
 * (outsider 16).
 */
import { StoreError } from '../errors.js';
import type { DbClient } from './driver.js';
import { isConnectionLoss } from './errors.js';

/** `client` noting the longest pause between the end of one statement and the start of the next. */
export function idleGaps(client: DbClient): { client: DbClient; longest: number } {
  const gaps = { client, longest: 0 };
  let idleFrom = performance.now();
  gaps.client = {
    query: (text, values) => {
      gaps.longest = Math.max(gaps.longest, performance.now() - idleFrom);
      const settled = (): void => void (idleFrom = performance.now());
      const q = client.query(text, values);
      q.then(settled, settled);
      return q;
    },
    release: (destroy) => client.release(destroy),
  } as DbClient;
  return gaps;
}

/** The error of a stream ended for a pause of `longestIdleMs`, or null when `e` is not a lost connection after one. */
export function stalledStream(
  e: unknown,
  longestIdleMs: number,
  ctx: { display: string; idleTimeoutMs: number },
  journal: string,
): StoreError | null {
  // Timers are coarse on both sides: a pause within a tenth of the timeout counts.
  if (!isConnectionLoss(e) || longestIdleMs < ctx.idleTimeoutMs * 0.9) return null;
  return new StoreError(
    'SERVER_ERROR',
    `${ctx.display} ended the streamed batch of journal ${journal}: its input paused ${Math.round(longestIdleMs)} ms while the batch was open, past the idle timeout of ${ctx.idleTimeoutMs} ms (idle_in_transaction_session_timeout); none of the batch was appended`,
    {
      location: { file: ctx.display },
      hint: "feed the batch without pauses that long (read its input first), or append it in smaller batches; a library caller may raise PostgresStore's idleTimeoutMs",
      cause: e,
    },
  );
}
