// Part vectors (spec/PARTS.md): values moved into parts and read back — a value part, a part shared by two
// steps, a message list stored as base + tail, a part nested in a list, a media part — and the reader's
// refusals: a part missing, truncated, a byte changed, a value that does not give its address (deep tier),
// a reserved name inside a part file. Each case gives the stored slots (references in place), every part
// file (base64 of its bytes), and the expected result: the resolved slots, or a code with its location.
// Deterministic: part seed n (n = 1, 2, … in the order the writer makes parts) is SHA-256("stepchain parts
// vector seed " ‖ decimal n); the journal's part key is 32 bytes of 0x07; the threshold is 256 bytes.
// Built from dist/.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { parsePartFile, partRefOf } from '../../dist/record/v3/parts.js';
import { PartReader } from '../../dist/record/v3/part-reader.js';
import { PartWriter } from '../../dist/record/v3/part-writer.js';
import { MemoryPartStore } from '../../dist/store/parts.js';

const KEY = new Uint8Array(32).fill(7);
const b64 = (bytes) => Buffer.from(bytes).toString('base64');

function seeds() {
  let n = 0;
  return () => new Uint8Array(createHash('sha256').update(`stepchain parts vector seed ${++n}`).digest());
}

/** Writes steps through a fresh writer; returns the stored slots per step and every part file. */
async function write(steps) {
  const store = new MemoryPartStore();
  const writer = new PartWriter(KEY, store, { threshold: 256, seed: seeds() });
  const stored = [];
  const parts = {};
  for (const s of steps) {
    const { slots, parts: made } = await writer.extract(s);
    await store.put(made);
    for (const p of made) parts[p.address] = b64(p.bytes);
    stored.push(slots);
  }
  return { stored, parts };
}

/** What a reader (fast, then deep) makes of stored slots and part files: the values, or the first problem. */
async function read(stored, parts) {
  const out = {};
  for (const deep of [false, true]) {
    const reader = new PartReader(async (address, size) => {
      const text = parts[address];
      if (text === undefined) return null;
      const bytes = new Uint8Array(Buffer.from(text, 'base64'));
      return bytes.length === size ? bytes : { size: bytes.length };
    }, { deep });
    try {
      const values = [];
      for (const [seq, s] of stored.entries()) values.push(await reader.resolve(s, { seq, path: '' }));
      out[deep ? 'deep' : 'fast'] = { result: 'valid', values };
    } catch (e) {
      if (typeof e?.code !== 'string' || !e.code.startsWith('PART_')) throw e;
      out[deep ? 'deep' : 'fast'] = { result: 'invalid', code: e.code, address: e.address, location: e.location };
    }
  }
  return out;
}

const LONG = 'The tool read the page and returned this paragraph, which is long enough to be stored once as a part. '.repeat(4);
const PNG = (() => {
  const b = new Uint8Array(1100);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < b.length; i++) b[i] = (i * 37 + 11) & 255;
  return b;
})();

async function valid(id, comment, steps) {
  const { stored, parts } = await write(steps);
  const expected = await read(stored, parts);
  if (expected.fast.result !== 'valid' || expected.deep.result !== 'valid') throw new Error(`${id}: not valid`);
  if (canonicalJson(expected.deep.values) !== canonicalJson(steps)) throw new Error(`${id}: round trip differs`);
  return { id, comment, steps, stored, parts, expected };
}

/** A negative derived from a valid case by a change to its part files (and, for the forgery, its reference). */
async function mutated(id, comment, base, mutate) {
  const stored = structuredClone(base.stored);
  const parts = { ...base.parts };
  mutate(stored, parts);
  const expected = await read(stored, parts);
  return { id, comment, derived_from: base.id, stored, parts, expected };
}

export async function generate() {
  const cases = [];
  const value = await valid('value-part', 'a member value of 256 bytes or more is a part; the slot holds its reference', [{ input: { url: 'https://example.org/a', page: LONG } }]);
  cases.push(value);
  const shared = await valid('shared-part', 'the same value in two steps (a tool result, then the message that carries it) is one part referenced twice', [
    { result: { text: LONG } },
    { prompt: [{ role: 'tool', content: LONG }] },
  ]);
  cases.push(shared);
  const list = await valid('list-base', 'a prompt that extends the previous one is a list part whose base is the previous list: its file holds only the new message', [
    { prompt: [{ role: 'user', content: 'Summarize the page. '.repeat(8) }, { role: 'assistant', content: 'Reading it. '.repeat(10) }] },
    { prompt: [{ role: 'user', content: 'Summarize the page. '.repeat(8) }, { role: 'assistant', content: 'Reading it. '.repeat(10) }, { role: 'user', content: 'Shorter, please.' }] },
  ]);
  cases.push(list);
  cases.push(await valid('nested-part', 'a large message inside a message list is a part of its own, referenced from the list part', [
    { prompt: [{ role: 'user', content: 'hi' }, { role: 'tool', content: LONG }] },
  ]));
  cases.push(await valid('media-part', 'a base64 string of 1 KiB or more decoded is a media part: its raw bytes after a header naming the media type (from the sibling mediaType) and size', [
    { prompt: [{ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: b64(PNG) }] }] },
  ]));
  const target = (c) => partRefOf(c.stored[0].input.page);
  cases.push(await mutated('part-missing', 'the part a reference names is not there', value, (s, p) => void delete p[target(value).digest]));
  cases.push(await mutated('part-truncated', 'the part file lost its last byte', value, (s, p) => {
    const a = target(value).digest;
    p[a] = b64(Buffer.from(p[a], 'base64').subarray(0, -1));
  }));
  cases.push(await mutated('part-byte-changed', 'one byte of the part file changed (same length)', value, (s, p) => {
    const a = target(value).digest;
    const bytes = Buffer.from(p[a], 'base64');
    bytes[bytes.length - 20] ^= 0x01;
    p[a] = b64(bytes);
  }));
  cases.push(await mutated('part-address-mismatch', 'the part file and its reference\'s file digest and size rewritten together (what the record\'s bind covers): the fast tier reads it, the deep tier finds that its value does not give its address', value, (s, p) => {
    const ref = target(value);
    const f = parsePartFile(new Uint8Array(Buffer.from(p[ref.digest], 'base64')));
    const bytes = Buffer.from(JSON.stringify({ seed: f.seed, value: LONG.replace('paragraph', 'sentence') }));
    p[ref.digest] = b64(bytes);
    s[0].input.page = { '$stepchain:part': { digest: ref.digest, file: 'sha256:' + createHash('sha256').update(bytes).digest('hex'), size: bytes.length } };
  }));
  cases.push(await mutated('part-base-missing', 'a list part whose base is not there: the list cannot be read', list, (s, p) => {
    const second = partRefOf(list.stored[1].prompt);
    const f = parsePartFile(new Uint8Array(Buffer.from(p[second.digest], 'base64')));
    delete p[f.base.digest];
    s.splice(0, 1, {});
  }));
  cases.push(await mutated('reference-disagrees', 'the part referenced twice, its second reference naming a file one byte longer: every reference is held to the file digest and size its address was checked as (§9 step 3), so the second is PART_CORRUPT where it stands, though the part and the first reference are intact', shared, (s) => {
    s[1].prompt[0].content['$stepchain:part'].size += 1;
  }));
  // The shared vector shape (vectors/README.md): each case's result is invalid when either tier refuses it.
  const shaped = cases.map((c) => ({ id: c.id, comment: c.comment, result: c.expected.fast.result === 'valid' && c.expected.deep.result === 'valid' ? 'valid' : 'invalid', ...Object.fromEntries(Object.entries(c).filter(([k]) => k !== 'id' && k !== 'comment')) }));
  return { 'v3-parts.json': { format: 'stepchain-vectors/v1', kind: 'v3-parts', description: 'stepchain/v3 parts (spec/PARTS.md): values stored once, referenced, read back and checked on read', threshold: 256, part_key_hex: '07'.repeat(32), cases: shaped } };
}
