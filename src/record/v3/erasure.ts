/**
 * Erasure of a value in a `stepchain/v3` record (spec/ERASURE.md; docs/design/format-v3.md §9): the unit's
 * value is replaced in place by a `$stepchain:erased` marker that keeps its digest, and the record moves to
 * *sealed form* — its seed deleted, every other slot key kept (`keys`), the erased slot's remaining salts kept
 * in preorder (`salts`), and `bind` (B) stored since it can no longer be recomputed. R, B and the step hash
 * are unchanged, so the head, every checkpoint and every cosignature stay valid; the erased value's salt
 * existed only as a derivation of the destroyed seed/slot key, so nothing left can test a guess.
 *
 * Pure (no Node imports): the chain verifier runs `ErasureLedger`, a writer runs `eraseUnit`.
 */
import { StepchainError } from '../../errors.js';
import { b64u, fromB64u } from './base64url.js';
import { canonicalJsonTrusted } from '../../canonical/jcs.js';
import { RESERVED_PREFIX } from '../../canonical/limits.js';
import { digestUtf8, toHex } from '../../canonical/sha256.js';
import {
  CHUNKS_MARKER,
  CommitError,
  PART_MARKER,
  SALT_BYTES,
  KEY_BYTES,
  V3_SLOTS,
  WITHHELD_MARKER,
  commitSlot,
  derivedSalts,
  listedSalts,
  rootOf,
  seedFromHex,
  slotKey,
  type SaltSource,
  type Unit,
} from './commit.js';

export { b64u, fromB64u };
export { ERASURE_OWN, erasureInputOf, type ErasureInput } from './erasure-input.js';

export const ERASED_MARKER = `${RESERVED_PREFIX}erased`;
export const ERASURE_KIND = 'erasure';

/** `{"digest": D, "erasure": S}`: what an erased marker holds (the unit's digest, the erasure record's step_id). */
export interface ErasedBody {
  digest: string;
  erasure: string;
}

/** An erased unit found in a sealed record. */
export interface ErasedUnit extends ErasedBody {
  /** JSON Pointer of the erased unit (a member's pointer ends with a name nobody can read any more: its digest stands in). */
  path: string;
}

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;
const STEP_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export type ErasureErrorCode =
  | 'ERASURE_TARGET_INVALID'
  | 'ERASURE_CONTENDED'
  | 'ERASURE_SIGNED'
  | 'ERASURE_INSIDE_PART'
  | 'ERASURE_CHUNK'
  | 'ERASURE_MISMATCH'
  | 'MARKER_INVALID'
  | 'ROOT_MISMATCH'
  | 'SEALED_INVALID';

/** Why an erasure could not be made or a sealed record cannot be read; nothing was written. */
export class ErasureError extends StepchainError<ErasureErrorCode> {
  constructor(
    code: ErasureErrorCode,
    message: string,
    readonly path?: string,
  ) {
    super(code, message, path === undefined ? {} : { location: { path } });
    this.name = 'ErasureError';
  }
}

function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
function unescapeToken(t: string): string {
  return t.replace(/~1/g, '/').replace(/~0/g, '~');
}

function erasedBodyOf(v: unknown): ErasedBody | null {
  if (!isObj(v)) return null;
  const k = Object.keys(v);
  if (
    k.length !== 2 ||
    !DIGEST_RE.test(String(v.digest)) ||
    typeof v.erasure !== 'string' ||
    !STEP_ID_RE.test(v.erasure)
  )
    return null;
  return { digest: v.digest as string, erasure: v.erasure };
}

/**
 * Whether a marker object found in a stored v3 line is a well-formed erased marker (spec/ERASURE.md §2):
 * `{"$stepchain:erased":{"digest":D,"erasure":S}}` alone (an element, or a whole slot), or beside an object's
 * members `"$stepchain:erased":[{"digest":D,"erasure":S},…]` sorted by digest without repeats. Returns why not.
 */
export function erasedMarkerDefect(obj: Record<string, unknown>): string | null {
  const body = obj[ERASED_MARKER];
  if (Array.isArray(body)) {
    if (body.length === 0) return 'erased members are a non-empty list of {"digest","erasure"}';
    let prev = '';
    for (const b of body) {
      const e = erasedBodyOf(b);
      if (e === null) return 'an erased member is {"digest":"sha256:<hex>","erasure":"<step_id>"}';
      if (e.digest <= prev) return 'erased members are sorted by digest without repeats';
      prev = e.digest;
    }
    return null;
  }
  if (Object.keys(obj).length !== 1) return 'an erased value is an object with the one member "$stepchain:erased"';
  return erasedBodyOf(body) === null
    ? 'an erased value is {"$stepchain:erased":{"digest":"sha256:<hex>","erasure":"<step_id>"}}'
    : null;
}

/** Every erased unit of a sealed record's slot value, with its pointer (members: the parent's pointer + "/" + the marker's index is unknown: the digest names it). */
export function collectErased(v: unknown, path: string, out: ErasedUnit[]): void {
  if (Array.isArray(v)) {
    v.forEach((x, k) => collectErased(x, `${path}/${k}`, out));
    return;
  }
  if (!isObj(v)) return;
  if (ERASED_MARKER in v) {
    const body = v[ERASED_MARKER];
    if (Array.isArray(body)) {
      for (const b of body) {
        const e = erasedBodyOf(b);
        if (e !== null) out.push({ ...e, path: `${path}/${ERASED_MARKER}` });
      }
    } else {
      const e = erasedBodyOf(body);
      if (e !== null) out.push({ ...e, path });
      return;
    }
  }
  for (const k of Object.keys(v)) if (k !== ERASED_MARKER) collectErased(v[k], `${path}/${escapePointer(k)}`, out);
}

/** The value with erased markers rewritten as the public walk's withheld markers (their digests given, no salt taken). */
function asWithheld(v: unknown, path: string): unknown {
  if (Array.isArray(v)) return v.map((x, k) => asWithheld(x, `${path}/${k}`));
  if (!isObj(v)) return v;
  if (WITHHELD_MARKER in v || CHUNKS_MARKER in v)
    throw new ErasureError('MARKER_INVALID', 'a stored record holds no withheld or chunk markers', path);
  const keys = Object.keys(v);
  // A part reference commits only its address: the public walk takes exactly {"digest": A} (§2).
  if (keys.length === 1 && keys[0] === PART_MARKER) {
    const body = v[PART_MARKER];
    return isObj(body) && typeof body.digest === 'string' ? { [PART_MARKER]: { digest: body.digest } } : v;
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    if (k === ERASED_MARKER) {
      const body = v[k];
      if (Array.isArray(body)) out[WITHHELD_MARKER] = body.map((b) => (b as ErasedBody).digest);
      else return { [WITHHELD_MARKER]: (body as ErasedBody).digest };
    } else {
      // Defined, not assigned: a member named "__proto__" (legal JSON) would otherwise set the prototype and vanish.
      const value = asWithheld(v[k], `${path}/${escapePointer(k)}`);
      if (k === '__proto__')
        Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
      else out[k] = value;
    }
  }
  return out;
}

type Rec = Record<string, unknown>;

/** Whether a parsed v3 record is in sealed form (no seed; bind, keys, salts). */
export function isSealed(r: Rec): boolean {
  return r.seed === undefined && r.bind !== undefined && r.keys !== undefined && r.salts !== undefined;
}

interface SlotSource {
  salts: SaltSource;
  /** For listed salts: whether every one was used (checked after the walk). */
  done(): boolean;
  keyed: boolean;
}

/** Where each slot's salts come from: the seed (private form) or `keys` / `salts` (sealed form). */
function slotSources(r: Rec): SlotSource[] {
  if (typeof r.seed === 'string') {
    const seed = seedFromHex(r.seed);
    if (seed === null) throw new ErasureError('SEALED_INVALID', 'seed must be 64 lowercase hex digits');
    return V3_SLOTS.map((_, j) => ({ salts: derivedSalts(slotKey(seed, j)), done: () => true, keyed: true }));
  }
  const keys = r.keys;
  const salts = r.salts;
  if (!isObj(keys) || !isObj(salts))
    throw new ErasureError('SEALED_INVALID', 'a sealed record has the objects keys and salts');
  for (const n of [...Object.keys(keys), ...Object.keys(salts)]) {
    if (!(V3_SLOTS as readonly string[]).includes(n))
      throw new ErasureError('SEALED_INVALID', `keys and salts name slots only (found ${JSON.stringify(n)})`);
  }
  return V3_SLOTS.map((slot) => {
    const inKeys = slot in keys;
    if (inKeys === slot in salts)
      throw new ErasureError('SEALED_INVALID', `slot ${slot} must be in exactly one of keys and salts`);
    if (inKeys) {
      const k = typeof keys[slot] === 'string' ? fromB64u(keys[slot]) : null;
      if (k?.length !== KEY_BYTES)
        throw new ErasureError('SEALED_INVALID', `keys.${slot} must be ${KEY_BYTES} bytes in base64url`);
      return { salts: derivedSalts(k), done: () => true, keyed: true };
    }
    const s = typeof salts[slot] === 'string' ? fromB64u(salts[slot]) : null;
    if (s === null || s.length % SALT_BYTES !== 0)
      throw new ErasureError('SEALED_INVALID', `salts.${slot} must be whole ${SALT_BYTES}-byte salts in base64url`);
    const list = listedSalts(s);
    return { salts: list, done: () => list.used() === list.total(), keyed: false };
  });
}

/**
 * R of a record from what it holds — its seed, or (sealed form) its kept keys and salts with erased units'
 * digests as given — and, when asked, the units of one slot in preorder (sealed: without the erased ones).
 */
export function rootOfRemaining(r: Rec, collect?: { slot: string; units: Unit[] }): string {
  const sources = slotSources(r);
  const digests = V3_SLOTS.map((slot, j) => {
    const src = sources[j]!;
    const value = r[slot];
    const sealed = typeof r.seed !== 'string';
    if (sealed && src.keyed && containsErased(value))
      throw new ErasureError(
        'MARKER_INVALID',
        `slot ${slot} holds an erased unit, so its key cannot be kept; its salts are`,
        `/${slot}`,
      );
    const walked = sealed ? asWithheld(value, `/${slot}`) : value;
    let d: Uint8Array;
    try {
      d = commitSlot(slot, walked, src.salts, {
        public: sealed,
        ...(collect?.slot === slot ? { collect: collect.units } : {}),
      });
    } catch (e) {
      if (e instanceof CommitError)
        throw new ErasureError(e.code === 'SECRETS_INVALID' ? 'SEALED_INVALID' : 'MARKER_INVALID', e.message, e.path);
      throw e;
    }
    if (!src.done())
      throw new ErasureError(
        'SEALED_INVALID',
        `salts.${slot} holds more salts than the slot has remaining units`,
        `/${slot}`,
      );
    return d;
  });
  return 'sha256:' + toHex(rootOf(digests));
}

function containsErased(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(containsErased);
  if (!isObj(v)) return false;
  return ERASED_MARKER in v || Object.values(v).some(containsErased);
}

/** The envelope texts the step hash covers (FORMAT §14.5) of a parsed record. */
function stepHashOfRecord(r: Rec, bind: string): string {
  let out = '{"bind":"' + bind + '"';
  for (const n of ['kind', 'prev_hash', 'ref', 'root', 'seq', 'step_id', 'ts', 'v'])
    out += ',"' + n + '":' + canonicalJsonTrusted(r[n]);
  return digestUtf8(out + '}');
}

/** B of a private record: SHA-256 of its canonical line without step_hash. */
function bindOfPrivate(r: Rec): string {
  const rest: Rec = { ...r };
  delete rest.step_hash;
  return digestUtf8(canonicalJsonTrusted(rest));
}

export interface Erased {
  /** The record after erasure (sealed form), and its canonical line with a newline. */
  record: Rec;
  line: string;
  digest: string;
  /** Part addresses the erased value referenced (their files may be deletable: spec/ERASURE.md §4 step 6). */
  parts: string[];
}

/** The unit digest at `path` of a record (private or sealed), or an ErasureError when no such unit is there. */
export function unitAt(r: Rec, path: string): { unit: Unit; units: Unit[] } {
  const tokens = path.split('/');
  if (tokens[0] !== '' || tokens.length < 2 || !(V3_SLOTS as readonly string[]).includes(unescapeToken(tokens[1]!))) {
    throw new ErasureError(
      'ERASURE_TARGET_INVALID',
      `path ${JSON.stringify(path)} is not a JSON Pointer into a slot (${V3_SLOTS.join(', ')})`,
      path,
    );
  }
  const slot = unescapeToken(tokens[1]!);
  const units: Unit[] = [];
  rootOfRemaining(r, { slot, units });
  const unit = units.find((u) => u.path === path);
  if (unit === undefined || unit.kind === 'chunk')
    refuseUnsupported(r, path, tokens.slice(1).map(unescapeToken), unit?.kind === 'chunk');
  if (unit === undefined || unit.kind === 'chunk' || (slot === 'meta' && r.meta === undefined)) {
    throw new ErasureError(
      'ERASURE_TARGET_INVALID',
      `no member or element at ${path} in seq ${String(r.seq)} (already erased, inside a part, a chunk, or absent)`,
      path,
    );
  }
  return { unit, units };
}

/**
 * The refusals of spec/ERASURE.md §6.3, each saying why and what to do instead: a unit inside a part (its
 * bytes are one file shared by every record that references it, bound by the SHA-256 each reference holds),
 * and a chunk of a long string (the string is the smallest erasable unit). Returns when neither applies.
 */
function refuseUnsupported(r: Rec, path: string, tokens: readonly string[], chunk: boolean): void {
  if (chunk) {
    const whole = path.replace(/#\d+$/, '');
    throw new ErasureError(
      'ERASURE_CHUNK',
      `${path} of seq ${String(r.seq)} is one chunk of a long string: a chunk cannot be erased alone (its string is the smallest erasable unit); erase the whole string, ${whole}`,
      path,
    );
  }
  let v: unknown = r;
  for (let i = 0; i < tokens.length; i++) {
    if (isObj(v) && isObj(v[`${RESERVED_PREFIX}part`]) && Object.keys(v).length === 1) {
      const holder = '/' + tokens.slice(0, i).map(escapePointer).join('/');
      throw new ErasureError(
        'ERASURE_INSIDE_PART',
        `${path} of seq ${String(r.seq)} lies inside a part (spec/PARTS.md: a large value stored once per journal, shared by every record that references it): a unit inside a part cannot be erased alone in this version; erase the member that holds the part, ${holder}, in this record and in every other record that references it (stepchain erase <store> --match-path), and the part is deleted once nothing references it`,
        path,
      );
    }
    const t = tokens[i]!;
    if (Array.isArray(v)) v = /^(0|[1-9]\d*)$/.test(t) ? v[Number(t)] : undefined;
    else if (isObj(v)) v = Object.prototype.hasOwnProperty.call(v, t) ? v[t] : undefined;
    else return;
  }
}

/** Kinds whose `input` is a statement the approver signed, and whose `meta` holds the key and signature (spec/APPROVALS.md). */
export const isSignedDecision = (r: Rec): boolean => r.kind === 'approval.granted' || r.kind === 'approval.denied';

/**
 * Refusals beyond `unitAt`'s (spec/ERASURE.md §6.3): a unit of an approver's signed decision (erasing it voids
 * the signature), a unit holding a value erased earlier (its erasure record would lose its marker). Checked by
 * `eraseUnit`: before an erasure is recorded and when a recorded one is carried out.
 */
export function refuseUnerasable(r: Rec, path: string, voidDecision = false): void {
  const tokens = path.split('/').slice(1).map(unescapeToken);
  const slot = tokens[0];
  if (!voidDecision && isSignedDecision(r) && (slot === 'input' || slot === 'meta')) {
    throw new ErasureError(
      'ERASURE_SIGNED',
      `${path} of seq ${String(r.seq)} is part of an approval decision that counts (the ${String(r.kind)} record's input is the statement an approver signed, its meta the key and signature; spec/APPROVALS.md): erasing any of it would void the signature and make the decision a problem (ERASURE.md §6.3); nothing was written. Only a decision a verifier already reports as a problem (no such request, a signature that does not hold, repeated, expired) can have values erased; this one goes only with its journal (retention)`,
      path,
    );
  }
  let v: unknown = r;
  for (const t of tokens) {
    if (Array.isArray(v)) v = /^(0|[1-9]\d*)$/.test(t) ? v[Number(t)] : undefined;
    else if (isObj(v)) v = Object.prototype.hasOwnProperty.call(v, t) ? v[t] : undefined;
    else return;
  }
  const inside: ErasedUnit[] = [];
  collectErased(v, path, inside);
  if (inside.length > 0)
    throw new ErasureError(
      'ERASURE_TARGET_INVALID',
      `${path} of seq ${String(r.seq)} holds a value erased earlier (by ${inside[0]!.erasure}): erasing the whole of it would remove the marker that erasure record is checked against; nothing was written. Erase its remaining members or elements one by one instead`,
      path,
    );
}

function partAddresses(v: unknown, out: string[]): void {
  if (Array.isArray(v)) v.forEach((x) => partAddresses(x, out));
  else if (isObj(v)) {
    const p = v[`${RESERVED_PREFIX}part`];
    if (isObj(p) && typeof p.digest === 'string' && Object.keys(v).length === 1) out.push(p.digest);
    else Object.values(v).forEach((x) => partAddresses(x, out));
  }
}

/**
 * Erases the unit at `path` of record `r` (private or sealed form), naming the erasure record `erasureStepId`.
 * Checks before returning that R and the step hash are unchanged; throws ErasureError otherwise.
 */
export function eraseUnit(r: Rec, path: string, erasureStepId: string, expectDigest?: string, voided = false): Erased {
  // Also when a recorded erasure is completed: one that would void a signature or orphan an earlier marker
  // (two erasures of nested units racing) stays pending and is reported, rather than making the journal invalid.
  refuseUnerasable(r, path, voided); // voided: a decision that already counts as none (erase/decision.ts)
  const rootBefore = rootOfRemaining(r);
  if (rootBefore !== r.root)
    throw new ErasureError(
      'ROOT_MISMATCH',
      `seq ${String(r.seq)}: its root does not commit to its values; nothing is erased from a record that does not verify deep`,
    );
  const { unit, units } = unitAt(r, path);
  const digest = 'sha256:' + toHex(unit.digest);
  if (expectDigest !== undefined && expectDigest !== digest)
    throw new ErasureError(
      'ERASURE_MISMATCH',
      `the unit at ${path} of seq ${String(r.seq)} has digest ${digest}, not the ${expectDigest} named`,
      path,
    );
  const inside = (u: Unit): boolean => u === unit || u.path.startsWith(path + '/') || u.path.startsWith(path + '#');
  const kept = units.filter((u) => !inside(u));
  const tokens = path.split('/').slice(1).map(unescapeToken);
  const slot = tokens[0]!;
  const out: Rec = JSON.parse(JSON.stringify(r)) as Rec;
  const marker = { digest, erasure: erasureStepId };
  const parts: string[] = [];
  if (tokens.length === 1) {
    partAddresses(out[slot], parts);
    out[slot] = { [ERASED_MARKER]: marker };
  } else {
    let parent: unknown = out[slot];
    for (const t of tokens.slice(1, -1)) parent = Array.isArray(parent) ? parent[Number(t)] : (parent as Rec)[t];
    const last = tokens[tokens.length - 1]!;
    if (Array.isArray(parent)) {
      partAddresses(parent[Number(last)], parts);
      parent[Number(last)] = { [ERASED_MARKER]: marker };
    } else {
      const obj = parent as Rec;
      partAddresses(obj[last], parts);
      delete obj[last];
      const list = ((obj[ERASED_MARKER] as ErasedBody[] | undefined) ?? []).concat([marker]);
      list.sort((a, b) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0));
      obj[ERASED_MARKER] = list;
    }
  }
  let saltBytes = new Uint8Array(kept.length * SALT_BYTES);
  kept.forEach((u, i) => saltBytes.set(u.salt, i * SALT_BYTES));
  if (typeof r.seed === 'string') {
    const seed = seedFromHex(r.seed)!;
    out.bind = bindOfPrivate(r);
    delete out.seed;
    const keys: Rec = {};
    V3_SLOTS.forEach((s, j) => {
      if (s !== slot) keys[s] = b64u(slotKey(seed, j));
    });
    out.keys = keys;
    out.salts = { [slot]: b64u(saltBytes) };
    seed.fill(0);
  } else {
    const keys = { ...(out.keys as Rec) };
    delete keys[slot];
    out.keys = keys;
    out.salts = { ...(out.salts as Rec), [slot]: b64u(saltBytes) };
  }
  saltBytes.fill(0);
  saltBytes = new Uint8Array(0);
  // What remains must still give R and the step hash: the head and every checkpoint stay valid.
  const rootAfter = rootOfRemaining(out);
  if (rootAfter !== r.root)
    throw new ErasureError(
      'ROOT_MISMATCH',
      `erasing ${path} of seq ${String(r.seq)} would change its root (${rootAfter}); nothing was written`,
    );
  if (stepHashOfRecord(out, out.bind as string) !== r.step_hash)
    throw new ErasureError(
      'SEALED_INVALID',
      `erasing ${path} of seq ${String(r.seq)} would change its step hash; nothing was written`,
    );
  return { record: out, line: canonicalJsonTrusted(out) + '\n', digest, parts };
}
