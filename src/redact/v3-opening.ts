/**
 * Opening one withheld unit of a v3 publication later (spec/REDACTION.md §13.7, design §14.4): the journal
 * holder gives the unit's salt (and the salts of the units inside it, in preorder) and its value; anyone
 * holding the public receipt checks that they give the digest the receipt shows at that place. It reveals
 * that unit and nothing else: each salt is an independent PRF output of the record's seed.
 */
import { isObject, type Json, type JsonObject } from '../canonical/json.js';
import { parsePointer } from '../canonical/pointer.js';
import { isDigest, toHex } from '../canonical/sha256.js';
import { assertIJson } from '../canonical/validate.js';
import type { ChainSource } from '../chain/source.js';
import {
  CHUNKS_MARKER,
  CommitError,
  TAG,
  V3_SLOTS,
  WITHHELD_MARKER,
  chunkString,
  commitRecord,
  commitSlot,
  escapedText,
  listedSalts,
  seedFromHex,
  sha256Concat,
  stringChunks,
} from '../record/v3/commit.js';
import type { ByteInput } from '../receipt/verify.js';
import type { DisclosureProblemCode } from './disclose.js';
import { RedactError } from './errors.js';
import { partRefOf } from '../record/v3/parts.js';
import { isSealed } from '../record/v3/erasure.js';
import { b64uDecode, unitTree } from './v3-public.js';
import { verifyPublishedReceipt, type VerifyPublishedOptions } from './verify.js';

export const UNIT_OPENING_FORMAT = 'stepchain-opening/v2';

/** `{format, manifest_digest, seq, path, chunk?, salts, value}`: `value` of a withheld member is its value (its name is the path's last token). */
export interface UnitOpening {
  format: typeof UNIT_OPENING_FORMAT;
  manifest_digest: string;
  seq: number;
  path: string;
  chunk?: number;
  /** The unit's salt, then the salts of the units inside it in preorder, concatenated, base64url. */
  salts: string;
  /** The unit's value (a chunk: the string it encodes). */
  value: Json;
}

/** What a unit opening's receipt is held to besides verifying as a publication: a pinned key or head. */
type Pins = Omit<VerifyPublishedOptions, 'locate'>;

export interface UnitOpeningReport {
  ok: boolean;
  problems: { code: DisclosureProblemCode; message: string }[];
  seq: number | null;
  path: string | null;
  value: Json | null;
}

const b64u = (b: Uint8Array): string =>
  btoa(String.fromCharCode(...b))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** The member or element `t` of `v`: own members only, so a token "__proto__" names a member, never the prototype. */
function childAt(v: Json | undefined, t: string): Json | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) return v[Number(t)];
  return Object.prototype.hasOwnProperty.call(v, t) ? v[t] : undefined;
}

/** The opening of the withheld unit at (seq, path[, chunk]) of a v3 journal, for the receipt with `manifestDigest`. */
export async function openUnitV3(
  source: ChainSource,
  seq: number,
  path: string,
  manifestDigest: string,
  chunk?: number,
): Promise<UnitOpening> {
  let line: string | null = null;
  for await (const l of source.lines({ from: seq, to: seq })) line = l.text;
  if (line === null) throw new RedactError('ARGUMENT_INVALID', `the journal has no step ${seq}`);
  const record = JSON.parse(line) as JsonObject;
  const seed = typeof record.seed === 'string' ? seedFromHex(record.seed) : null;
  if (seed === null)
    throw new RedactError(
      'SOURCE_INVALID',
      isSealed(record)
        ? `step ${seq} was sealed by an erasure (spec/ERASURE.md §2): its seed is gone, and disclosing what it still holds is not supported yet`
        : `step ${seq} is not a stored stepchain/v3 record with its seed`,
    );
  const values: Record<string, Json> = {};
  for (const s of V3_SLOTS) if (s in record) values[s] = record[s]!;
  const inPart = partOnTheWay(record, path);
  if (inPart !== null)
    throw new RedactError(
      'ARGUMENT_INVALID',
      `${path} of step ${seq} lies inside part ${inPart} (a value stored once, spec/PARTS.md), which the publication declares as that part's: disclosing a unit inside a part is not supported yet`,
    );
  const c = commitRecord(values, seed, { units: true });
  const slot = parsePointer(path)[0];
  const units = c.units.filter((u) => u.slot === slot);
  const tree = slot === undefined ? null : unitTree(slot in record, record[slot], units.length);
  const at = units.findIndex((u) => u.kind !== 'chunk' && u.path === path);
  if (tree === null || at < 0) throw new RedactError('ARGUMENT_INVALID', `step ${seq} has no unit at ${path}`);
  const target = chunk === undefined ? at : tree.children[at]!.filter((k) => units[k]!.kind === 'chunk')[chunk];
  if (target === undefined)
    throw new RedactError('ARGUMENT_INVALID', `the string at ${path} of step ${seq} has no chunk ${String(chunk)}`);
  // The unit, then everything below it, in preorder.
  const inside = (i: number): boolean => i === target || (tree.parent[i]! >= 0 && inside(tree.parent[i]!));
  const salts = units.filter((u) => inside(u.index)).map((u) => u.salt);
  const all = new Uint8Array(16 * salts.length);
  salts.forEach((s, k) => all.set(s, 16 * k));
  let value: Json = valueAt(record, path);
  // An absent slot withheld: its marker commits to the absence, and there is no value to open.
  if (value === undefined)
    throw new RedactError('ARGUMENT_INVALID', `${path} is absent from step ${seq}: there is no value to disclose`);
  if (chunk !== undefined) value = chunkString(stringChunks(value as string)![chunk]!);
  return {
    format: UNIT_OPENING_FORMAT,
    manifest_digest: manifestDigest,
    seq,
    path,
    ...(chunk === undefined ? {} : { chunk }),
    salts: b64u(all),
    value,
  };
}

/** The address of the part reference met on the way to `path`, or at it, or null. */
function partOnTheWay(record: JsonObject, path: string): string | null {
  let v: Json | undefined = record;
  for (const t of parsePointer(path)) {
    v = childAt(v, t);
    const ref = partRefOf(v);
    if (ref !== null) return ref.digest;
  }
  return null;
}

function valueAt(record: JsonObject, path: string): Json {
  let v: Json = record;
  for (const t of parsePointer(path)) v = Array.isArray(v) ? v[Number(t)]! : (v as JsonObject)[t]!;
  return v;
}

/** Why a document is not a unit opening, or null. */
function openingDefect(p: unknown): string | null {
  if (!isObject(p)) return 'an opening is a JSON object';
  const names = Object.keys(p).sort().join(',');
  if (
    names !== 'format,manifest_digest,path,salts,seq,value' &&
    names !== 'chunk,format,manifest_digest,path,salts,seq,value'
  )
    return 'an opening has exactly format, manifest_digest, seq, path, salts, value (and chunk for a chunk)';
  if (p.format !== UNIT_OPENING_FORMAT) return `format must be ${JSON.stringify(UNIT_OPENING_FORMAT)}`;
  if (!isDigest(p.manifest_digest)) return 'manifest_digest must be a digest';
  if (!Number.isSafeInteger(p.seq) || (p.seq as number) < 0) return 'seq must be an integer ≥ 0';
  if ('chunk' in p && (!Number.isSafeInteger(p.chunk) || (p.chunk as number) < 0))
    return 'chunk must be an integer ≥ 0';
  if (typeof p.path !== 'string') return 'path must be a JSON Pointer';
  try {
    if (parsePointer(p.path).length === 0) return 'path must point into a slot';
  } catch {
    return 'path must be a JSON Pointer';
  }
  const s = b64uDecode(p.salts);
  if (s === null || s.length === 0 || s.length % 16 !== 0)
    return 'salts must be one or more 16-byte salts in base64url';
  try {
    assertIJson(p.value, { refuseReserved: true });
  } catch (e) {
    return `value is not I-JSON: ${e instanceof Error ? e.message : String(e)}`;
  }
  return null;
}

/** Verifies a unit opening against a published v3 receipt. Never throws on the receipt's or the proof's content. */
export async function verifyUnitOpening(bytes: ByteInput, proof: unknown, pins: Pins = {}): Promise<UnitOpeningReport> {
  const report: UnitOpeningReport = { ok: false, problems: [], seq: null, path: null, value: null };
  const fail = (code: DisclosureProblemCode, message: string): UnitOpeningReport => {
    report.problems.push({ code, message });
    return report;
  };
  const defect = openingDefect(proof);
  if (defect) return fail('PROOF_INVALID', defect);
  const p = proof as UnitOpening;
  [report.seq, report.path] = [p.seq, p.path];
  const published = await verifyPublishedReceipt(bytes, { ...pins, locate: { seq: p.seq, step: true } });
  if (!published.ok || published.publication === null)
    return fail(
      'RECEIPT_INVALID',
      published.ok
        ? 'the receipt is not a publication'
        : `the receipt does not verify: ${published.problems[0]?.code ?? 'unknown'}`,
    );
  if (published.manifest_digest !== p.manifest_digest)
    return fail(
      'MANIFEST_MISMATCH',
      `the opening was made for manifest ${p.manifest_digest}; this receipt's is ${published.manifest_digest}`,
    );
  if (published.located_line === null) return fail('NOT_REDACTED', `the receipt has no step ${p.seq}`);
  const tokens = parsePointer(p.path);
  const record = JSON.parse(published.located_line) as JsonObject;
  // Where the digest stands: a withheld slot, element or chunk holds one; an object's withheld list holds a member's.
  const parent = (n: number): Json | undefined => {
    let v: Json | undefined = record;
    for (const t of tokens.slice(0, n)) v = childAt(v, t);
    return v;
  };
  const here = parent(tokens.length);
  const up = parent(tokens.length - 1);
  let candidates: string[] = [];
  let kind: 'member' | 'element' | 'chunk' = 'member';
  if (p.chunk !== undefined) {
    const list = isObject(here) && Array.isArray(here[CHUNKS_MARKER]) ? here[CHUNKS_MARKER] : null;
    const c = list?.[p.chunk];
    if (isObject(c) && typeof c[WITHHELD_MARKER] === 'string') candidates = [c[WITHHELD_MARKER]];
    kind = 'chunk';
  } else if (isObject(here) && typeof here[WITHHELD_MARKER] === 'string') {
    candidates = [here[WITHHELD_MARKER]];
    kind = Array.isArray(up) ? 'element' : 'member';
  } else if (here === undefined && isObject(up) && Array.isArray(up[WITHHELD_MARKER])) {
    candidates = up[WITHHELD_MARKER].filter((d): d is string => typeof d === 'string');
  }
  if (candidates.length === 0)
    return fail(
      'NOT_REDACTED',
      `nothing is withheld at step ${p.seq}, ${p.path}${p.chunk === undefined ? '' : ` chunk ${p.chunk}`}`,
    );
  const salts = listedSalts(b64uDecode(p.salts)!);
  let digest: Uint8Array;
  try {
    if (kind === 'chunk') {
      if (typeof p.value !== 'string') return fail('PROOF_INVALID', 'a chunk opens to a string');
      digest = sha256Concat([Uint8Array.of(TAG.chunk), salts()!, escapedText(p.value)]);
    } else if (kind === 'element') {
      return fail('PROOF_INVALID', 'opening a withheld array element is not supported yet');
    } else {
      digest = commitSlot(tokens[tokens.length - 1]!, p.value, salts);
    }
  } catch (e) {
    if (e instanceof CommitError) return fail('COMMITMENT_MISMATCH', e.message);
    throw e;
  }
  if (salts.used() !== salts.total())
    return fail(
      'COMMITMENT_MISMATCH',
      `the opening carries ${salts.total() - salts.used()} salts more than the value has units`,
    );
  if (!candidates.includes('sha256:' + toHex(digest)))
    return fail(
      'COMMITMENT_MISMATCH',
      `the salts and value do not give the digest withheld at step ${p.seq}, ${p.path}`,
    );
  report.ok = true;
  report.value = p.value;
  return report;
}
