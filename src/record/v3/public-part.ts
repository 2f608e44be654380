/**
 * The public file of a part (spec/REDACTION.md §13.10): what a published receipt carries in place of a
 * part's private file, which holds the part's seed. Its value shows withheld units as markers, as a
 * public record does, and `secrets` gives the salts of what it shows:
 *
 *   value   JCS({"secrets":S,"value":V})
 *   list    JCS({"base":{"$stepchain:part":{"digest":B}},"secrets":S,"tail":[…]})
 *   media   JCS({"media_type":M,"secrets":S,"size":N}) ‖ 0x0A ‖ N raw bytes
 *
 * S is {"key": the part's slot key} when nothing in the part is withheld, else {"salts": the salts of its
 * disclosed units in preorder, unit 0 first}. The reader recomputes the part's address from what the file
 * shows (the deep tier): an address that matches binds every shown byte to the record that references it,
 * and through its root to the original head. Pure; never throws on hostile input.
 */
import type { Json } from '../../canonical/json.js';
import { RESERVED_PREFIX } from '../../canonical/limits.js';
import { scanCanonical } from '../../canonical/scan.js';
import { toHex } from '../../canonical/sha256.js';
import {
  CommitError,
  derivedSalts,
  listedSalts,
  PART_MARKER,
  sha256Concat,
  TAG,
  CHUNKS_MARKER,
  WITHHELD_MARKER,
  Walk,
  type SaltSource,
  type WalkOptions,
} from './commit.js';
import { b64uDecode } from './public.js';

export type PublicPartFile =
  | { kind: 'value'; secrets: PartSecrets; value: Json }
  | { kind: 'list'; secrets: PartSecrets; base: string; tail: Json[] }
  | { kind: 'media'; secrets: PartSecrets; mediaType: string; raw: Uint8Array };

/** A public part's secrets: its slot key (nothing withheld) or its disclosed units' salts (16 bytes each). */
export type PartSecrets = { key: Uint8Array } | { salts: Uint8Array };

const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();
const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;
const MAX_DEPTH = 64;

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The address of a public reference `{"$stepchain:part":{"digest":A}}` (exactly that), else null. */
export function publicPartRefOf(v: unknown): string | null {
  if (!isObject(v)) return null;
  const keys = Object.keys(v);
  if (keys.length !== 1 || keys[0] !== PART_MARKER) return null;
  const b = v[PART_MARKER];
  if (!isObject(b) || Object.keys(b).length !== 1 || typeof b.digest !== 'string' || !DIGEST_RE.test(b.digest))
    return null;
  return b.digest;
}

/** The public reference to a part. */
export function publicPartMarker(address: string): Json {
  return { [PART_MARKER]: { digest: address } };
}

/** Every public reference inside a shown value, with its JSON Pointer (markers are not searched). */
export function publicPartRefsIn(v: Json, path = ''): { address: string; path: string }[] {
  const out: { address: string; path: string }[] = [];
  const walk = (x: Json, p: string, depth: number): void => {
    if (x === null || typeof x !== 'object' || depth > MAX_DEPTH) return;
    const a = publicPartRefOf(x);
    if (a !== null) {
      out.push({ address: a, path: p });
      return;
    }
    if (Array.isArray(x)) x.forEach((e, i) => walk(e, `${p}/${i}`, depth + 1));
    else
      for (const k of Object.keys(x))
        if (k !== WITHHELD_MARKER) walk(x[k]!, `${p}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1);
  };
  walk(v, path, 0);
  return out;
}

function secretsOf(v: unknown): PartSecrets | string {
  if (!isObject(v)) return 'has secrets that are not {"key": …} or {"salts": …}';
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === 'key') {
    const k = b64uDecode(v.key);
    return k !== null && k.length === 16 ? { key: k } : 'has a secrets.key that is not 16 bytes in base64url';
  }
  if (keys.length === 1 && keys[0] === 'salts') {
    const s = b64uDecode(v.salts);
    return s !== null && s.length > 0 && s.length % 16 === 0
      ? { salts: s }
      : 'has secrets.salts that are not one or more 16-byte salts in base64url';
  }
  return 'has secrets that are not {"key": …} or {"salts": …}';
}

/** Whether bytes look like a public part file (its header has `secrets`), without checking more. */
export function isPublicPartFile(bytes: Uint8Array): boolean {
  const nl = bytes.indexOf(0x0a);
  const head = nl < 0 ? bytes : bytes.subarray(0, nl);
  // Canonical JSON sorts members: "secrets" is the first member of a value part, after base / media_type otherwise.
  return (
    head.length > 12 &&
    head[0] === 0x7b &&
    new TextDecoder().decode(head.subarray(0, Math.min(head.length, 200))).includes('"secrets":{')
  );
}

/** Parses a public part file, or says why it is not one: canonical JSON, exactly the kind's members. */
export function parsePublicPartFile(bytes: Uint8Array): PublicPartFile | string {
  const nl = bytes.indexOf(0x0a);
  const head = nl < 0 ? bytes : bytes.subarray(0, nl);
  let text: string;
  try {
    text = decoder.decode(head);
  } catch {
    return 'is not valid UTF-8';
  }
  const scan = scanCanonical(text, { members: false });
  if (scan.defect !== null) return `is not canonical JSON (${scan.defect.code}: ${scan.defect.reason})`;
  const obj = JSON.parse(text) as unknown;
  if (!isObject(obj)) return 'is not a JSON object';
  const names = Object.keys(obj).sort().join(',');
  const secrets = secretsOf(obj.secrets);
  if (nl >= 0) {
    if (names !== 'media_type,secrets,size')
      return 'has a media header whose members are not media_type, secrets, size';
    if (typeof secrets === 'string') return secrets;
    const t = obj.media_type;
    if (typeof t !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(t))
      return 'has a media type that is not 1–255 printable ASCII characters';
    const raw = bytes.subarray(nl + 1);
    if (obj.size !== raw.length) return `says ${String(obj.size)} media bytes and holds ${raw.length}`;
    return { kind: 'media', secrets, mediaType: t, raw };
  }
  if (typeof secrets === 'string') return secrets;
  if (names === 'secrets,value') return { kind: 'value', secrets, value: obj.value as Json };
  if (names === 'base,secrets,tail') {
    const base = publicPartRefOf(obj.base);
    if (base === null) return 'has a base that is not a public part reference';
    if (!Array.isArray(obj.tail) || obj.tail.length === 0) return 'has a tail that is not a non-empty array';
    return { kind: 'list', secrets, base, tail: obj.tail as Json[] };
  }
  return `has members ${names}, which are no public part file's`;
}

/** A reserved member name a public part may not show: anything but withheld and chunk markers and public references. */
export function reservedInPublicPart(v: unknown, depth = 0): string | null {
  if (v === null || typeof v !== 'object') return null;
  if (depth > MAX_DEPTH) return `nests deeper than ${MAX_DEPTH}`;
  if (Array.isArray(v)) {
    for (const x of v) {
      const d = reservedInPublicPart(x, depth + 1);
      if (d !== null) return d;
    }
    return null;
  }
  for (const k of Object.keys(v)) {
    if (k.startsWith(RESERVED_PREFIX) && k !== WITHHELD_MARKER && k !== CHUNKS_MARKER && k !== PART_MARKER)
      return `shows the reserved member name ${JSON.stringify(k)}`;
    const d = reservedInPublicPart((v as Record<string, unknown>)[k], depth + 1);
    if (d !== null) return d;
  }
  return null;
}

function showsWithheld(v: unknown, depth: number): boolean {
  if (v === null || typeof v !== 'object' || depth > MAX_DEPTH) return false;
  if (Array.isArray(v)) return v.some((x) => showsWithheld(x, depth + 1));
  return Object.keys(v).some(
    (k) => k === WITHHELD_MARKER || showsWithheld((v as Record<string, unknown>)[k], depth + 1),
  );
}

/**
 * A part's top unit and, for an array value, its elements' digests (REDACTION.md §13.10): with `base` the
 * elements a list's base part gives, the list's address SHA-256(0x70 ‖ salt 0 ‖ 0x5b ‖ base ‖ tail elements)
 * (PARTS.md §5). Salts come from `salts` in preorder (unit 0 first); with `public`, withheld markers count
 * as their digests. Throws CommitError on a shape it cannot commit.
 */
export function commitPartUnits(
  value: unknown,
  salts: SaltSource,
  options: WalkOptions & { base?: readonly Uint8Array[] } = {},
): { digest: Uint8Array; elements: Uint8Array[] | null } {
  const walk = new Walk('part', salts, options);
  if (!Array.isArray(value)) {
    if (options.base !== undefined) throw new CommitError('MARKER_INVALID', "a list part's tail is an array", '');
    return { digest: walk.unit(TAG.part, 'part', null, value, ''), elements: null };
  }
  const salt = walk.top('');
  const elements = walk.repr(value, '').slice(1);
  const all = options.base === undefined ? elements : [...options.base, ...elements];
  return { digest: sha256Concat([Uint8Array.of(TAG.part), salt, Uint8Array.of(0x5b), ...all]), elements: all };
}

export type PublicPartCheck =
  | { ok: true; address: string; elements: Uint8Array[] | null }
  | { ok: false; code: 'PART_CORRUPT' | 'PART_ADDRESS_MISMATCH'; message: string; path?: string };

/**
 * The address a public part file gives (REDACTION.md §13.10 step 3): its shown units recomputed from the
 * salts it discloses, withheld digests taken as given; for a list, over the elements its base gives
 * (`base`: the base's element digests, checked first by the caller). Compared with `address`.
 */
export function checkPublicPart(
  f: PublicPartFile,
  address: string,
  base: readonly Uint8Array[] | null,
): PublicPartCheck {
  let listed: ReturnType<typeof listedSalts> | null = null;
  let salts: SaltSource;
  if ('key' in f.secrets) salts = derivedSalts(f.secrets.key);
  else salts = listed = listedSalts(f.secrets.salts);
  let got: { digest: Uint8Array; elements: Uint8Array[] | null };
  try {
    if (f.kind === 'media') {
      if (listed !== null && listed.total() !== 1)
        return {
          ok: false,
          code: 'PART_CORRUPT',
          message: 'a media part is one unit: its secrets are its key or one salt',
        };
      const salt = salts()!;
      got = {
        digest: sha256Concat([Uint8Array.of(TAG.media), salt, encoder.encode(JSON.stringify(f.mediaType)), f.raw]),
        elements: null,
      };
    } else {
      const value = f.kind === 'value' ? f.value : f.tail;
      const bad = reservedInPublicPart(value);
      if (bad !== null) return { ok: false, code: 'PART_CORRUPT', message: `its value ${bad}` };
      if ('key' in f.secrets && showsWithheld(value, 0)) {
        return {
          ok: false,
          code: 'PART_CORRUPT',
          message:
            'it withholds a unit but discloses its key, which opens that unit: a part with something withheld discloses the salts of its disclosed units',
        };
      }
      if (f.kind === 'list' && base === null)
        return { ok: false, code: 'PART_CORRUPT', message: `its base ${f.base} is not a checked list in the receipt` };
      got = commitPartUnits(value, salts, { public: true, ...(f.kind === 'list' ? { base: base! } : {}) });
    }
  } catch (e) {
    if (!(e instanceof CommitError)) throw e;
    return {
      ok: false,
      code: 'PART_CORRUPT',
      message: `${e.message}${e.path ? ` (at ${e.path})` : ''}`,
      ...(e.path ? { path: e.path } : {}),
    };
  }
  if (listed !== null && listed.used() !== listed.total())
    return {
      ok: false,
      code: 'PART_CORRUPT',
      message: `its secrets hold ${listed.total() - listed.used()} salts more than it has disclosed units`,
    };
  const a = 'sha256:' + toHex(got.digest);
  if (a !== address)
    return {
      ok: false,
      code: 'PART_ADDRESS_MISMATCH',
      message: `what it shows gives address ${a}, not ${address}: a shown value, name, chunk, order or withheld digest is not the original's`,
    };
  return { ok: true, address: a, elements: got.elements };
}
