/**
 * The chain-level check of erasure (spec/ERASURE.md §5): sealed records checked deep (what remains gives
 * their root), erased markers and erasure records cross-checked once the chain is read. Pure.
 */
import { V3_SLOTS, WITHHELD_MARKER } from './commit.js';
import {
  ERASED_MARKER,
  ERASURE_KIND,
  ErasureError,
  collectErased,
  erasureInputOf,
  rootOfRemaining,
  unitAt,
  type ErasedUnit,
  type ErasureInput,
} from './erasure.js';
import { toHex } from '../../canonical/sha256.js';

type Rec = Record<string, unknown>;
const isObj = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What the chain-level erasure check reports (spec/ERASURE.md §5). */
export interface ErasureFinding {
  code:
    | 'ERASURE_UNRECORDED'
    | 'ERASURE_MISMATCH'
    | 'ROOT_MISMATCH'
    | 'MARKER_INVALID'
    | 'ERASURE_PENDING'
    | 'ERASURE_OUT_OF_RANGE'
    | 'ERASURE_WITHHELD'
    | 'VALUE_ERASED'
    | 'KIND_UNCHECKED';
  message: string;
  seq: number;
  field: string;
  path?: string;
  /** A notice (never a failure): an erased value, or an erasure recorded but not yet carried out. */
  notice?: true;
}

/**
 * The cross-check of sealed records and erasure records along a chain, fed in chain order. Holds the erased
 * markers and erasure records seen, and the lines of the sealed records (erasures are rare), never the others.
 */
export class ErasureLedger {
  private readonly markers: (ErasedUnit & { seq: number })[] = [];
  private readonly records = new Map<string, { seq: number; input: ErasureInput | null; defect: string | null }>();
  private readonly findings: ErasureFinding[] = [];
  /** The lines of sealed records whose remains give their root, by seq: what a pending erasure is checked against. */
  private readonly sealed = new Map<number, string>();
  /** A publication's records that withhold units, by seq: where (spec/ERASURE.md §5 step 4, withheld). */
  private readonly withheld = new Map<number, WithheldAt[]>();

  /** `startSeq`: the first seq of the range fed (a partial receipt's; 0 for a whole chain). */
  constructor(private readonly startSeq = 0) {}

  /** One record of the chain that is sealed or of kind erasure (others need not be fed). */
  add(text: string): void {
    let r: Rec;
    try {
      const v: unknown = JSON.parse(text);
      if (!isObj(v)) return;
      r = v;
    } catch {
      return;
    }
    const seq = typeof r.seq === 'number' ? r.seq : -1;
    if (r.kind === ERASURE_KIND && typeof r.step_id === 'string') {
      const input = erasureInputOf(r.input);
      // A malformed input matters when a marker names the record (finish); alone it is the kind's notice only.
      if (!this.records.has(r.step_id))
        this.records.set(r.step_id, {
          seq,
          input: typeof input === 'string' ? null : input,
          defect: typeof input === 'string' ? input : null,
        });
    }
    if (r.seed !== undefined) return;
    // A publication's public form (REDACTION.md §13.12): its root is checked with the publication's records
    // (record/v3/public.ts); here only its erased markers are matched with erasure records.
    const publicForm = r.secrets !== undefined && r.keys === undefined;
    if (!publicForm)
      try {
        const root = rootOfRemaining(r);
        if (root !== r.root) {
          this.findings.push({
            code: 'ROOT_MISMATCH',
            message: `seq ${seq} is in sealed form (erased) and what remains of it does not give its root ${String(r.root)} (${root}): a value or kept salt was changed`,
            seq,
            field: 'root',
          });
          return;
        }
      } catch (e) {
        const code = e instanceof ErasureError && e.code === 'MARKER_INVALID' ? 'MARKER_INVALID' : 'ROOT_MISMATCH';
        this.findings.push({
          code,
          message: `seq ${seq} is in sealed form and cannot be checked: ${e instanceof Error ? e.message : String(e)}`,
          seq,
          field: 'root',
          ...(e instanceof ErasureError && e.path ? { path: e.path } : {}),
        });
        return;
      }
    if (publicForm) {
      const hidden: WithheldAt[] = [];
      for (const slot of V3_SLOTS) collectWithheld(r[slot], `/${slot}`, hidden);
      if (hidden.length > 0) this.withheld.set(seq, hidden);
    }
    const found: ErasedUnit[] = [];
    for (const slot of V3_SLOTS) collectErased(r[slot], `/${slot}`, found);
    if (found.length === 0 && publicForm) return;
    if (found.length === 0)
      this.findings.push({
        code: 'ERASURE_UNRECORDED',
        message: `seq ${seq} is in sealed form (its seed deleted) without any erased value: a seed is deleted only by an erasure`,
        seq,
        field: 'seed',
      });
    for (const m of found) this.markers.push({ ...m, seq });
    this.sealed.set(seq, text);
  }

  /**
   * Why a pending erasure record cannot be what it claims of a target in sealed form (null: it can — the unit
   * is there with that digest, or an erased marker there holds that digest). A target in private form was
   * read before the erasure record in this one pass: its path and digest are checked when the erasure is
   * carried out (spec/ERASURE.md §5).
   */
  private pendingDefect(t: ErasureInput): string | null {
    const line = this.sealed.get(t.target);
    if (line === undefined) return null;
    try {
      const found = 'sha256:' + toHex(unitAt(JSON.parse(line) as Rec, t.path).unit.digest);
      return found === t.digest ? null : `the unit at ${t.path} of seq ${t.target} has digest ${found}`;
    } catch {
      const erased = this.markers.some((m) => m.seq === t.target && m.digest === t.digest && pathMatches(t.path, m));
      return erased ? null : `seq ${t.target} holds no unit at ${t.path} with that digest, erased or not`;
    }
  }

  /** The findings once the chain is read: problems, then notices (pending erasures, erased values). */
  finish(): ErasureFinding[] {
    const out = [...this.findings];
    const named = this.erasedFindings(out);
    this.unnamedFindings(out, named);
    return out;
  }

  /** Each erased value against the erasure record it names; the step_ids of the records named. */
  private erasedFindings(out: ErasureFinding[]): Set<string> {
    const named = new Set<string>();
    for (const m of this.markers) {
      named.add(m.erasure);
      const rec = this.records.get(m.erasure);
      const where = m.path.endsWith('/' + ERASED_MARKER)
        ? `a member of ${m.path.slice(0, -ERASED_MARKER.length - 1)}`
        : m.path;
      if (rec !== undefined && rec.defect !== null)
        out.push({
          code: 'ERASURE_MISMATCH',
          message: `seq ${rec.seq}: an erased value (seq ${m.seq}) names this erasure record, whose input is not an erasure's: ${rec.defect}`,
          seq: rec.seq,
          field: 'input',
        });
      if (rec === undefined || rec.input === null || rec.seq <= m.seq) {
        out.push({
          code: 'ERASURE_UNRECORDED',
          message: `seq ${m.seq}: the erased value at ${where} (digest ${m.digest}) names erasure record ${JSON.stringify(m.erasure)}, which is not an erasure record later in the chain`,
          seq: m.seq,
          field: m.path.split('/')[1]!,
          path: m.path,
        });
        continue;
      }
      const t = rec.input;
      if (t.target !== m.seq || t.digest !== m.digest || !pathMatches(t.path, m)) {
        out.push({
          code: 'ERASURE_UNRECORDED',
          message: `seq ${m.seq}: the erased value at ${where} (digest ${m.digest}) is not the one its erasure record (seq ${rec.seq}) names (seq ${t.target}, ${t.path}, ${t.digest})`,
          seq: m.seq,
          field: m.path.split('/')[1]!,
          path: m.path,
        });
        out.push({
          code: 'ERASURE_MISMATCH',
          message: `seq ${rec.seq}: this erasure record names seq ${t.target} ${t.path} digest ${t.digest}, but the value it erased is seq ${m.seq} ${where} digest ${m.digest}`,
          seq: rec.seq,
          field: 'input',
        });
        continue;
      }
      out.push({
        code: 'VALUE_ERASED',
        message: `seq ${m.seq}: the value at ${t.path} was erased by seq ${rec.seq} (${says(t)}); its digest ${m.digest} still binds it`,
        seq: m.seq,
        field: m.path.split('/')[1]!,
        path: t.path,
        notice: true,
      });
    }
    return named;
  }

  /** Each erasure record no erased value names: pending, impossible, or claiming nothing checkable. */
  private unnamedFindings(out: ErasureFinding[], named: ReadonlySet<string>): void {
    for (const [stepId, rec] of this.records) {
      if (named.has(stepId)) continue;
      if (rec.input === null) {
        // It erased nothing and claims nothing checkable: the notice such a record had before the kind was
        // checked, so journals written then keep their verdict (vectors/v3.json chain-kinds-notices).
        out.push({
          code: 'KIND_UNCHECKED',
          message: `seq ${rec.seq}: an erasure record whose input is not an erasure's (${rec.defect ?? ''}) names nothing erased, so what it claims cannot be checked: its integrity is verified`,
          seq: rec.seq,
          field: 'input',
          notice: true,
        });
        continue;
      }
      if (rec.input.target >= rec.seq) {
        out.push({
          code: 'ERASURE_MISMATCH',
          message: `seq ${rec.seq}: an erasure record names seq ${rec.input.target}, which is not earlier in the chain`,
          seq: rec.seq,
          field: 'input',
        });
        continue;
      }
      if (rec.input.target < this.startSeq) {
        // Its target lies before the range (a partial receipt): whether it was carried out cannot be seen here,
        // and saying "pending" would be a claim about records this range does not hold (ERASURE.md §5 step 4).
        out.push({
          code: 'ERASURE_OUT_OF_RANGE',
          message: `seq ${rec.seq}: an erasure of ${rec.input.path} in seq ${rec.input.target}, which lies before this range (it starts at seq ${this.startSeq}): whether it was carried out cannot be checked here; verify the journal, or a receipt that holds seq ${rec.input.target}`,
          seq: rec.seq,
          field: 'input',
          notice: true,
        });
        continue;
      }
      if (withholds(this.withheld.get(rec.input.target), rec.input.path)) {
        // A publication that withholds the unit, or a unit holding it: its erased marker, if there is one, is
        // withheld with it, so whether the erasure was carried out cannot be seen (ERASURE.md §5 step 4).
        out.push({
          code: 'ERASURE_WITHHELD',
          message: `seq ${rec.seq}: an erasure of ${rec.input.path} in seq ${rec.input.target}, which this publication withholds (that unit or one holding it): whether it was carried out cannot be seen here; verify the journal`,
          seq: rec.seq,
          field: 'input',
          notice: true,
        });
        continue;
      }
      const defect = this.pendingDefect(rec.input);
      if (defect !== null) {
        out.push({
          code: 'ERASURE_MISMATCH',
          message: `seq ${rec.seq}: this erasure record names ${rec.input.path} of seq ${rec.input.target} with digest ${rec.input.digest}, but ${defect}: it claims an erasure that cannot be carried out`,
          seq: rec.seq,
          field: 'input',
        });
        continue;
      }
      out.push({
        code: 'ERASURE_PENDING',
        message: `seq ${rec.seq}: the erasure of ${rec.input.path} in seq ${rec.input.target} is recorded but not yet carried out (an erasure was interrupted): run \`stepchain erase <journal> --resume\``,
        seq: rec.seq,
        field: 'input',
        notice: true,
      });
    }
  }
}

/** A marker matches an erasure record's path: the same pointer, or (a member) the pointer's parent plus any name. */
export function pathMatches(path: string, m: ErasedUnit): boolean {
  if (!m.path.endsWith('/' + ERASED_MARKER)) return path === m.path;
  const parent = m.path.slice(0, -ERASED_MARKER.length - 1);
  const i = path.lastIndexOf('/');
  return i > 0 && path.slice(0, i) === parent && i > parent.length - 1;
}

/** A withheld unit of a public record: a whole value at `path`, or (`shown` set) members of the object at `path`. */
interface WithheldAt {
  path: string;
  /** For an object's withheld members: the names it still shows (a member not among them may be withheld). */
  shown?: ReadonlySet<string>;
}

function collectWithheld(v: unknown, path: string, out: WithheldAt[]): void {
  if (Array.isArray(v)) {
    v.forEach((x, k) => collectWithheld(x, `${path}/${k}`, out));
    return;
  }
  if (!isObj(v)) return;
  if (WITHHELD_MARKER in v) {
    if (!Array.isArray(v[WITHHELD_MARKER])) {
      out.push({ path });
      return;
    }
    out.push({ path, shown: new Set(Object.keys(v)) });
  }
  for (const k of Object.keys(v))
    if (k !== WITHHELD_MARKER && k !== ERASED_MARKER) collectWithheld(v[k], `${path}/${escapeToken(k)}`, out);
}

const escapeToken = (k: string): string => k.replace(/~/g, '~0').replace(/\//g, '~1');

/** Whether the unit at `path` is withheld by a public record, whole or inside a withheld unit. */
function withholds(hidden: readonly WithheldAt[] | undefined, path: string): boolean {
  if (hidden === undefined) return false;
  return hidden.some((w) => {
    if (w.shown === undefined) return path === w.path || path.startsWith(`${w.path}/`);
    if (!path.startsWith(`${w.path}/`)) return false;
    const name = path
      .slice(w.path.length + 1)
      .split('/')[0]!
      .replace(/~1/g, '/')
      .replace(/~0/g, '~');
    return !w.shown.has(name);
  });
}

/** An erasure record's reason and by, as a notice shows them (either may have been erased in turn, §3). */
function says(t: ErasureInput): string {
  const reason = t.erased?.includes('reason') === true ? 'reason erased' : `reason ${JSON.stringify(t.reason)}`;
  const by = t.erased?.includes('by') === true ? ', by erased' : t.by === null ? '' : `, by ${JSON.stringify(t.by)}`;
  return reason + by;
}
