/**
 * The calls a chain recorded before the approval requests that present them (spec/APPROVALS.md §5 step 4):
 * the first record of each distinct call, by the SHA-256 of its compared form (calls.ts callForm), never the
 * calls themselves, so a verifier holds 32 bytes and a locator per distinct call. Pure.
 */
import { digestUtf8 } from '../canonical/sha256.js';
import { nameTextOf } from './calls.js';

/** The length of a digest's text ("sha256:" and 64 hex digits): a stored key is the digest, then the name's text. */
const DIGEST_TEXT = 71;

interface Earlier {
  id: string;
  seq: number;
  kind: string;
  /** `id` is the step_id's JSON text (read from a stored line), parsed only when reported. */
  idText?: true;
}

/**
 * Stored calls held as read before they are entered in the maps (EarlierCalls.stored): at most this many, so a
 * long chain of one repeated call does not hold a copy per record.
 */
const HELD_AT_MOST = 1 << 18;

export class EarlierCalls {
  private readonly byForm = new Map<string, Earlier>();
  /** The first record of each tool (its name's canonical text, a string's): one of another form may be the same call. */
  private readonly byTool = new Map<string, Earlier>();
  /**
   * Calls read from stored lines, in chain order, not yet entered in the maps: they are entered, in that order,
   * before anything else is remembered or looked up, so the first of each stays first. A chain with no approval
   * request never looks one up, and its verify never enters its calls (one per record: measured 0.6–0.8 µs a
   * record on the thread that links the chain).
   */
  private readonly held: { ids: string[]; seqs: number[]; keys: string[] } = { ids: [], seqs: [], keys: [] };

  /** A call in hand already in its compared form (calls.ts callForm), presented by no request so far. */
  rememberForm(form: string, id: string, seq: number, kind: string): void {
    this.enterHeld();
    this.add(form, { id, seq, kind });
    this.rememberTool(nameTextOf(form), id, seq, kind);
  }

  /** A call of tool `nameText` (canonical text of a string name) whose arguments cannot be compared. */
  rememberTool(nameText: string | null, id: string, seq: number, kind: string): void {
    this.enterHeld();
    const key = nameText === null ? null : toolKey(nameText);
    if (key !== null && !this.byTool.has(key)) this.byTool.set(key, { id, seq, kind });
  }

  /** A call read from its stored line: its step_id as JSON text and its key (calls.ts storedKey: digest, then name). */
  stored(idText: string, seq: number, key: string): void {
    const held = this.held;
    held.ids.push(idText);
    held.seqs.push(seq);
    held.keys.push(key);
    if (held.keys.length >= HELD_AT_MOST) this.enterHeld();
  }

  /** The held stored calls, into the maps in chain order. */
  private enterHeld(): void {
    const { ids, seqs, keys } = this.held;
    for (let i = 0; i < keys.length; i++) this.enter(ids[i]!, seqs[i]!, keys[i]!);
    ids.length = 0;
    seqs.length = 0;
    keys.length = 0;
  }

  private enter(idText: string, seq: number, key: string): void {
    const digest = key.slice(0, DIGEST_TEXT);
    if (!this.byForm.has(digest)) this.byForm.set(digest, { id: idText, seq, kind: 'record', idText: true });
    const name = key.length > DIGEST_TEXT ? toolKey(key.slice(DIGEST_TEXT)) : null;
    if (name !== null && !this.byTool.has(name))
      this.byTool.set(name, { id: idText, seq, kind: 'record', idText: true });
  }

  /** The first record that held the call of compared form `form`, if any. */
  find(form: string): { id: string; seq: number; kind: string } | undefined {
    this.enterHeld();
    return located(this.byForm.get(digestUtf8(form)));
  }

  /** The first record that ran the tool form `form` names (with any arguments), if any. */
  findTool(form: string): { id: string; seq: number; kind: string } | undefined {
    this.enterHeld();
    const name = nameTextOf(form);
    return name === null ? undefined : located(this.byTool.get(toolKey(name)));
  }

  private add(form: string, e: Earlier): void {
    const key = digestUtf8(form);
    if (!this.byForm.has(key)) this.byForm.set(key, e);
  }
}

/** A tool's key: its name's text where short, else that text's digest (a hostile chain's long names are not held). */
const toolKey = (nameText: string): string => (nameText.length > 64 ? '#' + digestUtf8(nameText) : nameText);

/** A remembered record with its step_id as a string (parsed from its JSON text where it was read from a line). */
function located(e: Earlier | undefined): { id: string; seq: number; kind: string } | undefined {
  if (e?.idText !== true) return e;
  try {
    return { id: String(JSON.parse(e.id)), seq: e.seq, kind: e.kind };
  } catch {
    return { id: e.id, seq: e.seq, kind: e.kind };
  }
}
