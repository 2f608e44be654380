/**
 * The calls a chain recorded before the approval requests that present them (spec/APPROVALS.md §5 step 4):
 * the first record of each distinct call, by the SHA-256 of its compared form (calls.ts callForm), never the
 * calls themselves, so a verifier holds 32 bytes and a locator per distinct call. Pure.
 */
import { digestUtf8 } from '../canonical/sha256.js';

interface Earlier {
  id: string;
  seq: number;
  kind: string;
  /** `id` is the step_id's JSON text (read from a stored line), parsed only when reported. */
  idText?: true;
}

export class EarlierCalls {
  private readonly byForm = new Map<string, Earlier>();

  /** A call in hand already in its compared form (calls.ts callForm), presented by no request so far. */
  rememberForm(form: string, id: string, seq: number, kind: string): void {
    this.add(form, { id, seq, kind });
  }

  /** A call read from its stored line: its step_id as JSON text and the digest of its compared form (calls.ts storedCall). */
  stored(idText: string, seq: number, formDigest: string): void {
    if (!this.byForm.has(formDigest)) this.byForm.set(formDigest, { id: idText, seq, kind: 'record', idText: true });
  }

  /** The first record that held the call of compared form `form`, if any. */
  find(form: string): { id: string; seq: number; kind: string } | undefined {
    const e = this.byForm.get(digestUtf8(form));
    if (e?.idText !== true) return e;
    try {
      return { ...e, id: String(JSON.parse(e.id)) };
    } catch {
      return e;
    }
  }

  private add(form: string, e: Earlier): void {
    const key = digestUtf8(form);
    if (!this.byForm.has(key)) this.byForm.set(key, e);
  }
}
