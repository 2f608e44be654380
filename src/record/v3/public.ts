/**
 * A `stepchain/v3` record in public form checked against its `root` (spec/REDACTION.md §13.6 steps 2–4;
 * FORMAT.md §14.6): `secrets` read, every shown value recomputed as disclosed units from their salts, withheld
 * digests taken as given, R compared with `root`. The public profile's step hash uses it (v3.ts), so no
 * verifier path — a journal, a receipt read without the publication checks, the page — accepts a shown value
 * that the root does not bind. The publication checks (src/redact) report the same problems with their codes.
 * Pure; never throws on hostile input.
 */
import { isObject, setMember, type Json } from '../../canonical/json.js';
import { isDigest, toHex } from '../../canonical/sha256.js';
import {
  CommitError,
  V3_SLOTS as SLOTS,
  WITHHELD_MARKER as WITHHELD,
  commitSlot,
  derivedSalts,
  listedSalts,
  rootOf,
  slotKey,
} from './commit.js';

export interface PublicRecordProblem {
  code: 'ROOT_MISMATCH' | 'SECRETS_INVALID' | 'MARKER_INVALID' | 'SECRET_PUBLISHED' | 'HASH_MISMATCH';
  field: string;
  path?: string;
  message: string;
}

const digestOf = (d: Uint8Array): string => 'sha256:' + toHex(d);
const b64u = (b: Uint8Array): string => {
  let bin = '';
  for (const x of b) bin += String.fromCharCode(x);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

/** Strict base64url without padding (RFC 4648 §5): exactly one text per byte string, or null. */
export function b64uDecode(text: unknown): Uint8Array | null {
  if (typeof text !== 'string' || text.length % 4 === 1 || !/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const pad = (4 - (text.length % 4)) % 4;
  const std = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat(pad);
  let bin: string;
  try {
    bin = atob(std);
  } catch {
    return null;
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return b64u(out) === text ? out : null;
}

const hexToBytes = (h: string): Uint8Array => {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
};

/** `secrets` of a public record: a seed, or keys and salts per slot; else why not. */
function readSecrets(
  sec: unknown,
): { seed: Uint8Array | null; keys: Record<string, unknown>; salts: Record<string, unknown> } | string {
  let seed: Uint8Array | null = null;
  let keys: Record<string, unknown> = {};
  let salts: Record<string, unknown> = {};
  if (
    isObject(sec) &&
    Object.keys(sec).join(',') === 'seed' &&
    typeof sec.seed === 'string' &&
    /^[0-9a-f]{64}$/.test(sec.seed)
  )
    seed = hexToBytes(sec.seed);
  else if (
    isObject(sec) &&
    Object.keys(sec).sort().join(',') === 'keys,salts' &&
    isObject(sec.keys) &&
    isObject(sec.salts)
  ) {
    keys = sec.keys;
    salts = sec.salts;
    for (const s of [...Object.keys(keys), ...Object.keys(salts)])
      if (!SLOTS.includes(s as (typeof SLOTS)[number])) return `secrets names ${JSON.stringify(s)}, which is no slot`;
    for (const s of Object.keys(keys))
      if (s in salts)
        return `slot ${s} is in both secrets.keys and secrets.salts; a slot is disclosed by one or the other`;
  } else return 'secrets must be {"seed": 64 hex} or {"keys": {slot: key}, "salts": {slot: salts}}';
  return { seed, keys, salts };
}

const NO_SALTS: SlotSalts = { source: () => null, listed: null };

interface SlotSalts {
  source: () => Uint8Array | null;
  /** The salts listed for the slot, to count the ones left over (null: derived from a key). */
  listed: ReturnType<typeof listedSalts> | null;
}

/** Where a shown slot's salts come from: the seed's or the slot's key, or the salts listed for it; else the problem. */
function slotSalts(
  name: string,
  j: number,
  v: Json | undefined,
  seed: Uint8Array | null,
  keys: Record<string, unknown>,
  salts: Record<string, unknown>,
): SlotSalts | PublicRecordProblem[] {
  if (seed !== null || name in keys) {
    const key = seed !== null ? slotKey(seed, j) : b64uDecode(keys[name]);
    if (key?.length !== 16)
      return [
        {
          code: 'SECRETS_INVALID',
          field: 'secrets',
          path: `/keys/${name}`,
          message: `secrets.keys.${name} must be 16 bytes in base64url`,
        },
      ];
    if (hasMarker(v))
      return [
        {
          code: 'SECRET_PUBLISHED',
          field: name,
          path: `/${name}`,
          message: `${name} withholds a unit but is disclosed by its slot key, which opens that unit: a partly withheld slot is disclosed by the salts of its disclosed units`,
        },
      ];
    return { source: derivedSalts(key), listed: null };
  } else if (name in salts) {
    const all = b64uDecode(salts[name]);
    if (all === null || all.length === 0 || all.length % 16 !== 0)
      return [
        {
          code: 'SECRETS_INVALID',
          field: 'secrets',
          path: `/salts/${name}`,
          message: `secrets.salts.${name} must be one or more 16-byte salts in base64url`,
        },
      ];
    const listed = listedSalts(all);
    return { source: listed, listed };
  } else {
    return [
      {
        code: 'SECRETS_INVALID',
        field: name,
        path: `/${name}`,
        message: `${name} is shown but "secrets" holds no salt for it: a disclosed value needs its salt, and shown text that no salt binds is not the original record's`,
      },
    ];
  }
}

export function publicRecordProblems(record: unknown): PublicRecordProblem[] {
  const problems: PublicRecordProblem[] = [];
  if (!isObject(record)) return [{ code: 'MARKER_INVALID', field: '', message: 'a public record is a JSON object' }];
  for (const m of ['seed', 'keys']) {
    if (m in record)
      problems.push({
        code: 'SECRET_PUBLISHED',
        field: m,
        message: `a public record carries "${m}", which opens every unit of the record: a publication carries "secrets" only`,
      });
  }
  if (!isDigest(record.root))
    problems.push({ code: 'MARKER_INVALID', field: 'root', message: 'root must be a digest' });
  if (!isDigest(record.bind))
    problems.push({ code: 'MARKER_INVALID', field: 'bind', message: 'bind must be a digest' });
  const secrets = readSecrets(record.secrets);
  if (typeof secrets === 'string')
    return [...problems, { code: 'SECRETS_INVALID', field: 'secrets', message: secrets }];
  const { seed, keys, salts } = secrets;
  if (problems.length > 0) return problems;

  const digests: Uint8Array[] = [];
  for (let j = 0; j < SLOTS.length; j++) {
    const name = SLOTS[j]!;
    // An erased unit (ERASURE.md §2) counts as its digest, as a withheld one does: neither takes a salt.
    const v = erasedAsWithheld(record[name] as Json | undefined);
    const wholeMarker = isObject(v) && WITHHELD in v && !Array.isArray(v[WITHHELD]);
    if (wholeMarker && (seed !== null || name in keys || name in salts)) {
      return [
        {
          code: 'SECRETS_INVALID',
          field: name,
          path: `/${name}`,
          message: `the withheld ${name} has secrets of its own in "secrets"; a slot withheld whole has none`,
        },
      ];
    }
    const salted = wholeMarker ? NO_SALTS : slotSalts(name, j, v, seed, keys, salts);
    if (Array.isArray(salted)) return salted;
    const { source, listed: salts0 } = salted;
    try {
      digests.push(commitSlot(name, v, source, { public: true }));
    } catch (e) {
      if (!(e instanceof CommitError)) throw e;
      return [{ code: e.code, field: name, path: e.path, message: e.message }];
    }
    if (salts0 !== null && salts0.used() !== salts0.total()) {
      return [
        {
          code: 'SECRETS_INVALID',
          field: 'secrets',
          path: `/salts/${name}`,
          message: `secrets.salts.${name} holds ${salts0.total() - salts0.used()} salts more than ${name} has disclosed units`,
        },
      ];
    }
  }
  const root = digestOf(rootOf(digests));
  if (root !== record.root) {
    return [
      {
        code: 'ROOT_MISMATCH',
        field: 'root',
        message: `the disclosed values and withheld digests give root ${root}, not the record's ${String(record.root)}: a shown value, name, chunk, order or withheld digest is not the original`,
      },
    ];
  }
  return [];
}

const ERASED = '$stepchain:erased';

/**
 * A public value with its erased markers read as withheld digests: `{"$stepchain:erased":{"digest":D,…}}` as
 * `{"$stepchain:withheld":D}`, an object's erased list merged into its withheld list. Malformed erased
 * markers are left as they are (the walk then refuses the reserved name, or the chain check the marker).
 */
export function erasedAsWithheld(v: Json | undefined): Json | undefined {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => erasedAsWithheld(x)!);
  if (!(ERASED in v)) {
    let changed = false;
    const out: Record<string, Json> = {};
    for (const k of Object.keys(v)) {
      const x = erasedAsWithheld(v[k])!;
      setMember(out, k, x);
      if (x !== v[k]) changed = true;
    }
    return changed ? out : v;
  }
  const body = v[ERASED];
  const digestOfBody = (b: unknown): string | null =>
    isObject(b) && Object.keys(b).length === 2 && typeof b.digest === 'string' && typeof b.erasure === 'string'
      ? b.digest
      : null;
  if (!Array.isArray(body)) {
    const d = Object.keys(v).length === 1 ? digestOfBody(body) : null;
    return d === null ? v : { [WITHHELD]: d };
  }
  const digests = body.map(digestOfBody);
  if (digests.some((d) => d === null)) return v;
  const out: Record<string, Json> = {};
  for (const k of Object.keys(v)) if (k !== ERASED) setMember(out, k, erasedAsWithheld(v[k])!);
  const held = Array.isArray(v[WITHHELD]) ? v[WITHHELD] : [];
  out[WITHHELD] = [...held, ...(digests as string[])].sort();
  return out;
}

function hasMarker(v: Json | undefined): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some(hasMarker);
  // A part reference is no marker: the part's own public file withholds what it withholds (REDACTION.md §13.10).
  return Object.keys(v).some((k) => (k.startsWith('$stepchain:') && k !== '$stepchain:part') || hasMarker(v[k]));
}
