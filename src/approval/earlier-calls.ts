/**
 * The calls a chain recorded before the approval requests that present them (spec/APPROVALS.md §5 step 4):
 * the first record of each distinct call, by the SHA-256 of its compared form (calls.ts callForm), never the
 * calls themselves. A verifier keeps this for the whole chain, so it is held compactly (record/seen.ts): the
 * digest's 32 bytes, the first record's seq and kind, and its step_id in an arena, per distinct call.
 *
 * Only a request asks this table anything, and most chains hold none: the calls read from stored lines (verify's
 * hot path, `stored`) are noted as they come — digest, seq and step_id appended, the same bytes a table entry
 * holds — and entered into the table, in chain order, only when something reads or enters it (a request's
 * question, a call remembered from a parsed record) or when PENDING_MOST are noted. Entering each as it came
 * (its slot found in a table of every call so far, a cache miss apiece) cost `stepchain verify` of the 100 000-step
 * bench journal about 45 ms of its linking thread, 4% of its time (bench/RESULTS.md). Pure.
 */
import { ownString } from '../bytes.js';
import { digestUtf8 } from '../canonical/sha256.js';
import { DigestTable, TextArena, grown } from '../record/seen.js';

/**
 * Calls noted and not yet entered, at most: past it they are entered, and their repeats dropped, so that a chain
 * calling one tool with the same arguments a million times holds about what the table does (≈ 80 bytes a call,
 * about 21 MB at most waiting).
 */
const PENDING_MOST = 1 << 18;
import { nameTextOf } from './calls.js';

interface Earlier {
  id: string;
  seq: number;
  kind: string;
  /** `id` is the step_id's JSON text (read from a stored line), parsed only when reported. */
  idText?: true;
}

export class EarlierCalls {
  /** Each distinct call's form digest; entry i's first record is seqs[i], ids.get(i), kindNames[kinds[i]]. */
  private readonly forms = new DigestTable();
  private seqs = new Float64Array(256);
  private readonly ids = new TextArena();
  /** Whether entry i's id is a step_id's JSON text (read from a stored line). */
  private idIsText = new Uint8Array(256);
  private kinds = new Int32Array(256);
  private readonly kindNames: string[] = [];
  private readonly kindIndex = new Map<string, number>();
  /** The first record of each tool (its name's canonical text, a string's): one of another form may be the same call. */
  private readonly byTool = new Map<string, Earlier>();
  /** Calls read from stored lines and not yet entered (see above): digest bytes, seqs and step_id texts, in order. */
  private pendingDigests = new Uint8Array(32 * 256);
  private pendingSeqs = new Float64Array(256);
  private pendingIds = new TextArena();

  /** A call in hand already in its compared form (calls.ts callForm), presented by no request so far. */
  rememberForm(form: string, id: string, seq: number, kind: string): void {
    this.enterPending();
    const before = this.forms.size;
    const i = this.forms.indexOf(digestUtf8(form), 0, true);
    if (i >= before) this.keep(i, id, false, seq, kind);
    this.rememberTool(nameTextOf(form), id, seq, kind);
  }

  /** A call of tool `nameText` (canonical text of a string name) whose arguments cannot be compared. */
  rememberTool(nameText: string | null, id: string, seq: number, kind: string): void {
    const key = nameText === null ? null : toolKey(nameText);
    if (key !== null && !this.byTool.has(key)) this.byTool.set(ownString(key), { id: ownString(id), seq, kind });
  }

  /**
   * A call read from its stored line: its step_id as JSON text and its key (calls.ts storedKey: its form's digest
   * as 32 one-byte characters, `digest[digestAt, digestAt + 32)`, and its name's text). Noted; entered when the
   * table is next read or entered.
   */
  stored(idText: string, seq: number, digest: string, digestAt: number, nameText: string | null): void {
    const n = this.pendingIds.size;
    if (n === this.pendingSeqs.length) {
      this.pendingSeqs = grown(this.pendingSeqs);
      this.pendingDigests = grown(this.pendingDigests);
    }
    const bytes = this.pendingDigests;
    for (let k = 0, at = 32 * n; k < 32; k++, at++) bytes[at] = digest.charCodeAt(digestAt + k);
    this.pendingSeqs[n] = seq;
    this.pendingIds.add(idText);
    if (n + 1 >= PENDING_MOST) this.enterPending();
    const name = nameText === null ? null : toolKey(nameText);
    if (name !== null && !this.byTool.has(name))
      this.byTool.set(ownString(name), { id: ownString(idText), seq, kind: 'record', idText: true });
  }

  /** The first record that held the call of compared form `form`, if any. */
  find(form: string): { id: string; seq: number; kind: string } | undefined {
    this.enterPending();
    const i = this.forms.indexOf(digestUtf8(form), 0, false);
    if (i < 0) return undefined;
    const [id, seq, kind] = [this.ids.get(i), this.seqs[i]!, this.kindNames[this.kinds[i]!]!];
    return this.idIsText[i] === 1 ? located({ id, seq, kind, idText: true }) : { id, seq, kind };
  }

  /** The first record that ran the tool form `form` names (with any arguments), if any. */
  findTool(form: string): { id: string; seq: number; kind: string } | undefined {
    const name = nameTextOf(form);
    return name === null ? undefined : located(this.byTool.get(toolKey(name)));
  }

  /** The noted calls, entered in the order they came. */
  private enterPending(): void {
    const n = this.pendingIds.size;
    if (n === 0) return;
    for (let k = 0; k < n; k++) {
      const before = this.forms.size;
      const i = this.forms.indexOfBytes(this.pendingDigests, 32 * k, true);
      if (i >= before) this.keep(i, this.pendingIds.get(k), true, this.pendingSeqs[k]!, 'record');
    }
    this.pendingIds = new TextArena();
  }

  /** The first record of a call new to the table, its entry `i` (a later record of the same form is not kept). */
  private keep(i: number, id: string, idIsText: boolean, seq: number, kind: string): void {
    if (i === this.seqs.length) {
      this.seqs = grown(this.seqs);
      this.idIsText = grown(this.idIsText);
      this.kinds = grown(this.kinds);
    }
    this.seqs[i] = seq;
    this.ids.add(id);
    this.idIsText[i] = idIsText ? 1 : 0;
    let k = this.kindIndex.get(kind);
    if (k === undefined) {
      k = this.kindNames.push(ownString(kind)) - 1;
      this.kindIndex.set(this.kindNames[k]!, k);
    }
    this.kinds[i] = k;
  }
}

/** A tool's key: its name's text where short, else that text's digest (a hostile chain's long names are not held). */
const toolKey = (nameText: string): string => (nameText.length > 64 ? '#' + digestUtf8(nameText) : nameText);

/** A remembered record with its step_id as a string (parsed from its JSON text where it was read from a line). */
function located(e: Earlier | undefined): { id: string; seq: number; kind: string } | undefined {
  if (e === undefined) return undefined;
  if (e.idText !== true) return { id: e.id, seq: e.seq, kind: e.kind };
  try {
    return { id: String(JSON.parse(e.id)), seq: e.seq, kind: e.kind };
  } catch {
    return { id: e.id, seq: e.seq, kind: e.kind };
  }
}
