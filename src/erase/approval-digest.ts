/**
 * A request written before statement v2 (spec/APPROVALS.md §2.1) stores `input.digest`, an unsalted SHA-256
 * of its presented call: erasing an argument and leaving that digest would leave the argument guessable (a
 * 4-digit PIN falls to 10 000 trials). Erasing any unit of such a request's presented call erases the
 * digest first (spec/ERASURE.md §6.4); a v1 statement naming the digest is signed and cannot be erased, so
 * then the erase is refused. Reads the journal; writes nothing.
 */
import { toHex } from '../canonical/sha256.js';
import { ErasureError, eraseUnit, unitAt } from '../record/v3/erasure.js';
import type { Store } from '../store/types.js';
import type { EraseRequest } from './common.js';

const touchesPresented = (path: string): boolean => path === '/input/presented' || path.startsWith('/input/presented/');

/** The erasure of `/input/digest` that must come before `req`, or null when there is none to make. */
export async function digestErasureFirst(store: Store, id: string, req: EraseRequest): Promise<EraseRequest | null> {
  if (!touchesPresented(req.path)) return null;
  const journal = await store.open(id, { readOnly: true });
  try {
    let request: string | null = null;
    for await (const line of journal.lines({ from: req.seq })) {
      if (!line.text.includes('"approval.')) continue;
      const r = JSON.parse(line.text) as { kind?: unknown; step_id?: unknown; input?: unknown };
      const input = (typeof r.input === 'object' && r.input !== null ? r.input : {}) as Record<string, unknown>;
      if (line.seq === req.seq) {
        if (r.kind !== 'approval.requested' || typeof input.digest !== 'string' || typeof r.step_id !== 'string')
          return null;
        request = r.step_id;
        // The erase asked for is checked first (a dry run on a copy): a refused one erases nothing, the digest included.
        const copy = JSON.parse(line.text) as Parameters<typeof unitAt>[0];
        eraseUnit(copy, req.path, 'erasure:check', 'sha256:' + toHex(unitAt(copy, req.path).unit.digest));
      } else if (
        request !== null &&
        (r.kind === 'approval.granted' || r.kind === 'approval.denied') &&
        input.type === 'stepchain-approval/v1' &&
        input.request === request
      ) {
        throw new ErasureError(
          'ERASURE_SIGNED',
          `${req.path} of seq ${req.seq} is part of a call presented by a request written before statement v2, and the ${r.kind} record at seq ${line.seq} is a stepchain-approval/v1 statement naming that call's unsalted digest: it is signed and cannot be erased, and from it the erased value could be guessed by trying candidates (spec/APPROVALS.md §8); nothing was written. Such a journal is removed only whole (retention)`,
          req.path,
        );
      }
    }
    return request === null ? null : { ...req, path: '/input/digest' };
  } finally {
    await journal.close();
  }
}
