/**
 * Tamper battery (issue 8): every kind of damage in vectors/chains.json, applied at random positions of a
 * generated journal, is always detected — on the journal directory (journal.verify) and on a receipt
 * (verifyReceipt). The receipt attacker is the strongest one that does not hold the signing key: after
 * damaging the chain it rebuilds the whole archive consistently (every entry digest, size and step count in
 * the manifest recomputed, the manifest's head set to the new last line), and ships it unsigned. What is then
 * left to catch it is the chain itself and, for a clean cut at the end, the head pinned out of band.
 */
import { cpSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { FileStore, type Journal } from '../../src/store/index.js';
import { exportReceipt, verifyReceipt, MANIFEST_NAME } from '../../src/receipt/index.js';
import { ustarHeader } from '../../src/receipt/tar.js';
import { canonicalJson, digestBytes } from '../../src/canonical/index.js';
import { genesisHash, sealRecord, type Genesis, type UnsealedRecord } from '../../src/record/index.js';
import { tempDir } from '../helpers/tmp.js';
import { loadVectors } from '../helpers/vectors.js';
import { runs } from './support.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const root = tempDir('stepchain-tamper-');
const STEPS = 14;

/** The journal as an attacker sees it: bucket files of lines (each with its newline), the genesis, blobs. */
interface Model {
  genesis: Genesis;
  buckets: Array<{ name: string; lines: string[] }>;
  blobs: Map<string, Uint8Array>;
  /** For a receipt: the stated start (from, prev_hash). */
  start: { seq: number; prev_hash: string };
}

let pristineDir: string;
let pristine: Model;
let head: string;

beforeAll(async () => {
  const store = new FileStore(root, { fsync: 'none', segmentBytes: 4096, blobThreshold: 1024 });
  const j: Journal = await store.create('pristine');
  for (let i = 0; i < STEPS; i++) {
    await j.append({
      input: { i, text: `step ${i} `.repeat(30) },
      model: 'm',
      tool_call: i % 2 ? { name: 'search', args: { q: `q${i}` } } : null,
      result: i % 4 === 1 ? { big: `blob ${i} `.repeat(200) } : { ok: i },
    });
  }
  head = (await j.head())!.step_hash;
  await j.close();
  pristineDir = join(root, 'pristine');
  const bdir = join(pristineDir, 'buckets');
  const buckets = readdirSync(bdir)
    .sort()
    .map((name) => ({ name, lines: splitLines(readFileSync(join(bdir, name), 'utf8')) }));
  const blobs = new Map<string, Uint8Array>();
  const blobDir = join(pristineDir, 'blobs', 'sha256');
  for (const f of readdirSync(blobDir)) blobs.set(`sha256:${f}`, readFileSync(join(blobDir, f)));
  const genesis = (JSON.parse(readFileSync(join(pristineDir, 'journal.json'), 'utf8')) as { genesis: Genesis }).genesis;
  pristine = { genesis, buckets, blobs, start: { seq: 0, prev_hash: genesisHash(genesis) } };
  expect(buckets.length).toBeGreaterThanOrEqual(3);
  expect(blobs.size).toBeGreaterThanOrEqual(2);
});

function splitLines(text: string): string[] {
  return text.split(/(?<=\n)/).filter((l) => l !== '');
}

function clone(m: Model): Model {
  return {
    genesis: { ...m.genesis },
    buckets: m.buckets.map((b) => ({ name: b.name, lines: [...b.lines] })),
    blobs: new Map(m.blobs),
    start: { ...m.start },
  };
}

/** Every line with its bucket index and index in the bucket. */
function positions(m: Model): Array<[number, number]> {
  return m.buckets.flatMap((b, bi) => b.lines.map((_, li): [number, number] => [bi, li]));
}

function pick<T>(xs: T[], r: number): T {
  return xs[Math.floor(r * xs.length) % xs.length]!;
}

type Rec = Record<string, unknown>;
const parse = (line: string): Rec => JSON.parse(line) as Rec;
const canon = (r: Rec): string => canonicalJson(r, { refuseReserved: false }) + '\n';
const reseal = (r: Rec): string => {
  const { step_hash: _, ...rest } = r;
  return sealRecord(rest as unknown as UnsealedRecord).line;
};

/**
 * The damage kinds of vectors/chains.json, as functions of a random position. Each returns false when the
 * model offers no place for it (the case is then drawn again with another kind).
 */
const DAMAGE: Record<string, (m: Model, r: number, r2: number) => boolean> = {
  'edited-content': (m, r) => {
    const [b, l] = pick(positions(m), r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    rec.model = 'tampered';
    m.buckets[b]!.lines[l] = canon(rec);
    return true;
  },
  'edited-and-rehashed': (m, r) => {
    const [b, l] = pick(positions(m), r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    rec.input = { tampered: true };
    m.buckets[b]!.lines[l] = reseal(rec);
    return true;
  },
  'edited-seq': (m, r, r2) => {
    const [b, l] = pick(positions(m), r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    rec.seq = (rec.seq as number) + 1 + Math.floor(r2 * 5);
    m.buckets[b]!.lines[l] = canon(rec);
    return true;
  },
  reordered: (m, r) => {
    const all = positions(m);
    const i = Math.floor(r * (all.length - 1));
    const [b1, l1] = all[i]!;
    const [b2, l2] = all[i + 1]!;
    const t = m.buckets[b1]!.lines[l1]!;
    m.buckets[b1]!.lines[l1] = m.buckets[b2]!.lines[l2]!;
    m.buckets[b2]!.lines[l2] = t;
    return true;
  },
  deleted: (m, r) => {
    const all = positions(m);
    const [b, l] = all[Math.floor(r * (all.length - 1))]!; // not the last: that is head-mismatch-truncated
    m.buckets[b]!.lines.splice(l, 1);
    return true;
  },
  'deleted-first': (m) => {
    m.buckets[0]!.lines.splice(0, 1);
    return true;
  },
  duplicated: (m, r) => {
    const [b, l] = pick(positions(m), r);
    m.buckets[b]!.lines.splice(l, 0, m.buckets[b]!.lines[l]!);
    return true;
  },
  'truncated-line': (m, r, r2) => {
    const [b, l] = pick(positions(m), r);
    const line = m.buckets[b]!.lines[l]!;
    m.buckets[b]!.lines[l] = line.slice(0, 1 + Math.floor(r2 * (line.length - 2)));
    // A cut line in the middle runs into the next one; at the very end it is what a crash leaves.
    return true;
  },
  'missing-final-newline': (m) => {
    const last = m.buckets[m.buckets.length - 1]!;
    last.lines[last.lines.length - 1] = last.lines[last.lines.length - 1]!.slice(0, -1);
    return true;
  },
  'noncanonical-whitespace': (m, r, r2) => {
    const [b, l] = pick(positions(m), r);
    const line = m.buckets[b]!.lines[l]!;
    const seps = [...line.matchAll(/[:,]/g)].map((x) => x.index);
    const at = pick(seps, r2) + 1;
    m.buckets[b]!.lines[l] = line.slice(0, at) + ' ' + line.slice(at);
    return true;
  },
  'crlf-line-endings': (m, r) => {
    const [b, l] = pick(positions(m), r);
    m.buckets[b]!.lines[l] = m.buckets[b]!.lines[l]!.replace(/\n$/, '\r\n');
    return true;
  },
  'wrong-genesis': (m) => {
    m.genesis = { ...m.genesis, journal_id: 'another-journal' };
    if (m.start.seq === 0) m.start.prev_hash = genesisHash(m.genesis);
    return true;
  },
  'genesis-invalid': (m) => {
    m.genesis = { ...m.genesis, format: 'stepchain/v9' } as unknown as Genesis;
    return true;
  },
  'head-mismatch-truncated': (m, r) => {
    // A clean cut of the last 1..3 steps: every remaining line is intact; only the pinned head tells.
    let n = 1 + Math.floor(r * 3);
    while (n-- > 0) {
      const last = m.buckets[m.buckets.length - 1]!;
      last.lines.pop();
      if (last.lines.length === 0) m.buckets.pop();
    }
    return true;
  },
  'head-mismatch-empty': (m) => {
    m.buckets = [];
    return true;
  },
  'bucket-misnamed': (m, r) => {
    if (m.buckets.length < 2) return false;
    const b = 1 + Math.floor(r * (m.buckets.length - 1));
    const first = Number(m.buckets[b]!.name.slice(0, 16));
    m.buckets[b]!.name = `${String(first + 1).padStart(16, '0')}.jsonl`;
    return true;
  },
  'unknown-field': (m, r) => {
    const [b, l] = pick(positions(m), r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    rec.extra = true;
    m.buckets[b]!.lines[l] = canon(rec);
    return true;
  },
  'unsupported-version': (m, r) => {
    const [b, l] = pick(positions(m), r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    rec.v = 2;
    m.buckets[b]!.lines[l] = reseal(rec);
    return true;
  },
  'invalid-ts': (m, r) => {
    const [b, l] = pick(positions(m), r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    rec.ts = '2026-02-30T00:00:00.000Z';
    m.buckets[b]!.lines[l] = canon(rec);
    return true;
  },
  'missing-field': (m, r, r2) => {
    const [b, l] = pick(positions(m), r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    delete rec[pick(['model', 'input', 'ts', 'prev_hash', 'seq', 'step_id', 'v'], r2)];
    m.buckets[b]!.lines[l] = canon(rec);
    return true;
  },
  'marker-invalid': (m, r) => {
    const withBlob = positions(m).filter(([b, l]) => m.buckets[b]!.lines[l]!.includes('$stepchain:blob'));
    if (withBlob.length === 0) return false;
    const [b, l] = pick(withBlob, r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    (rec.result as Rec).second = 1;
    m.buckets[b]!.lines[l] = canon(rec);
    return true;
  },
  // A well-formed redaction marker where none may stand (FORMAT §3.5), the step resealed around it.
  'marker-in-ts': (m, r) => {
    const [b, l] = pick(positions(m), r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    rec.ts = { '$stepchain:redacted': { commitment: `sha256:${'a'.repeat(64)}`, rule: 'pii' } };
    m.buckets[b]!.lines[l] = reseal(rec);
    return true;
  },
  'marker-in-unknown-member': (m, r) => {
    const [b, l] = pick(positions(m), r);
    const rec = parse(m.buckets[b]!.lines[l]!);
    rec.notes = { kept: { '$stepchain:redacted': { commitment: `sha256:${'a'.repeat(64)}`, rule: 'pii' } } };
    m.buckets[b]!.lines[l] = reseal(rec);
    return true;
  },
  'garbage-line': (m, r, r2) => {
    const [b, l] = pick(positions(m), r);
    const noise = Array.from({ length: 1 + Math.floor(r2 * 40) }, (_, i) =>
      String.fromCharCode(33 + ((i * 7919 + Math.floor(r2 * 1e6)) % 90)),
    ).join('');
    m.buckets[b]!.lines.splice(l, 0, noise + '\n');
    return true;
  },
  'unreadable-step': (m, r, r2) => {
    const [b, l] = pick(positions(m), r);
    const line = m.buckets[b]!.lines[l]!;
    const at = 1 + Math.floor(r2 * (line.length - 30));
    m.buckets[b]!.lines[l] = line.slice(0, at) + line.slice(at + 20);
    return true;
  },
  'blob-edited': (m, r) => {
    const digest = pick([...m.blobs.keys()].sort(), r);
    m.blobs.set(digest, enc.encode(dec.decode(m.blobs.get(digest)!).replace('blob', 'bolb')));
    return true;
  },
  'blob-deleted': (m, r) => {
    m.blobs.delete(pick([...m.blobs.keys()].sort(), r));
    return true;
  },
};

const KINDS = Object.keys(DAMAGE);

test('every damage kind of vectors/chains.json has a generator here', () => {
  const chains = loadVectors('chains.json');
  const damage = chains.cases.filter((c) => c.result === 'invalid').map((c) => String(c.id));
  // partial-wrong-start only exists for a partial range: a receipt, tested below.
  for (const id of damage) if (id !== 'partial-wrong-start') expect(KINDS).toContain(id);
});

let n = 0;
async function damagedJournal(m: Model): Promise<string> {
  const id = `t${n++}`;
  const dir = join(root, id);
  cpSync(pristineDir, dir, { recursive: true });
  rmSync(join(dir, 'buckets'), { recursive: true });
  cpSync(join(pristineDir, 'buckets'), join(dir, 'buckets'), {
    recursive: true,
    filter: (src) => !src.endsWith('.jsonl'),
  });
  for (const b of m.buckets) writeFileSync(join(dir, 'buckets', b.name), b.lines.join(''));
  const blobDir = join(dir, 'blobs', 'sha256');
  for (const f of readdirSync(blobDir)) {
    const bytes = m.blobs.get(`sha256:${f}`);
    if (!bytes) rmSync(join(blobDir, f));
    else writeFileSync(join(blobDir, f), bytes);
  }
  const meta = JSON.parse(readFileSync(join(dir, 'journal.json'), 'utf8')) as Rec;
  meta.genesis = m.genesis;
  writeFileSync(join(dir, 'journal.json'), canonicalJson(meta) + '\n'); // FILE-STORE.md §4: JCS and a newline
  return id;
}

/** Opens read-only and verifies; a journal that cannot even be opened is detected by a coded error. */
async function verifyJournal(id: string, expectHead?: string): Promise<{ ok: boolean; codes: string[] }> {
  const store = new FileStore(root);
  let j: Journal;
  try {
    j = await store.open(id, { readOnly: true });
  } catch (e) {
    expect(typeof (e as { code?: unknown }).code).toBe('string');
    return { ok: false, codes: [(e as { code: string }).code] };
  }
  try {
    const report = await j.verify(expectHead === undefined ? {} : { expectHead });
    return { ok: report.ok, codes: [...report.problems, ...report.warnings].map((p) => p.code) };
  } finally {
    await j.close();
  }
}

/** A consistent unsigned receipt of the (damaged) model, built without the exporter. */
function forgeReceipt(m: Model): Uint8Array {
  const parts: Uint8Array[] = [];
  const entry = (name: string, data: Uint8Array) => {
    parts.push(ustarHeader(name, data.length), data, new Uint8Array((512 - (data.length % 512)) % 512));
  };
  const chain = m.buckets
    .filter((b) => b.lines.length > 0)
    .map((b) => {
      const data = enc.encode(b.lines.join(''));
      return {
        name: `chain/${b.name}`,
        data,
        entry: { digest: digestBytes(data), name: `chain/${b.name}`, size: data.length, steps: b.lines.length },
      };
    });
  const lastLine = m.buckets.flatMap((b) => b.lines).at(-1);
  let lastRec: Rec | null = null;
  try {
    lastRec = lastLine ? parse(lastLine) : null;
  } catch {
    lastRec = null;
  }
  // Only the blobs the lines reference, as the exporter does (a partial range references fewer).
  const text = m.buckets.flatMap((b) => b.lines).join('');
  const blobs = [...m.blobs.entries()].filter(([d]) => text.includes(d)).sort(([a], [b]) => (a < b ? -1 : 1));
  const manifest = {
    blobs: blobs.map(([digest, bytes]) => ({ digest, size: bytes.length })),
    chain: chain.map((c) => c.entry),
    exporter: 'forger/1',
    format: 'stepchain-receipt/v1',
    genesis: m.genesis,
    head: {
      seq: typeof lastRec?.seq === 'number' ? lastRec.seq : 0,
      step_hash: typeof lastRec?.step_hash === 'string' ? lastRec.step_hash : m.start.prev_hash,
    },
    range: {
      from: m.start.seq,
      prev_hash: m.start.prev_hash,
      to: typeof lastRec?.seq === 'number' ? lastRec.seq : m.start.seq,
    },
  };
  entry(MANIFEST_NAME, enc.encode(canonicalJson(manifest)));
  for (const c of chain) entry(c.name, c.data);
  for (const [digest, bytes] of blobs) entry(`blobs/${digest.slice(7)}`, bytes);
  parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
}

describe('tamper', () => {
  afterAll(() => {
    for (const f of readdirSync(root)) if (/^t\d+$/.test(f)) rmSync(join(root, f), { recursive: true, force: true });
  });

  test('baseline: the pristine journal and its forged (unsigned, consistent) receipt both verify', async () => {
    expect(await verifyJournal('pristine', head)).toEqual({ ok: true, codes: [] });
    const forged = await verifyReceipt(forgeReceipt(clone(pristine)), { expectHead: head });
    expect(forged.problems).toEqual([]);
    expect(forged.ok).toBe(true);
    // and the real exporter's receipt agrees with the forger on every entry
    const out = join(root, 'pristine.tar');
    const j = await new FileStore(root).open('pristine', { readOnly: true });
    const r = await exportReceipt(j, { out }).finally(() => j.close());
    expect((await verifyReceipt(readFileSync(out), { expectHead: head })).ok).toBe(true);
    expect(r.head.step_hash).toBe(head);
  });

  test.each(KINDS)(
    '%s at random positions is always detected on the journal directory and on the receipt',
    async (kind) => {
      await fc.assert(
        fc.asyncProperty(
          fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          async (r, r2) => {
            const m = clone(pristine);
            if (!DAMAGE[kind]!(m, r, r2)) return;
            const journal = await verifyJournal(await damagedJournal(m), head);
            expect(journal.ok, `journal verify missed ${kind} (${r}, ${r2})`).toBe(false);
            const receipt = await verifyReceipt(forgeReceipt(m), { expectHead: head });
            expect(receipt.ok, `receipt verify missed ${kind} (${r}, ${r2})`).toBe(false);
            expect(receipt.problems.length).toBeGreaterThan(0);
          },
        ),
        { numRuns: runs(6) },
      );
    },
  );

  test('without a pinned head, everything but a clean cut at the end is still detected', async () => {
    const tailOnly = new Set([
      'head-mismatch-truncated',
      'head-mismatch-empty',
      'truncated-line',
      'missing-final-newline',
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...KINDS.filter((k) => !tailOnly.has(k))),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        async (kind, r, r2) => {
          const m = clone(pristine);
          // A re-hash of the very last step leaves a valid chain (it holds no secret): only a pin catches that.
          if (!DAMAGE[kind]!(m, kind === 'edited-and-rehashed' ? r * 0.9 : r, r2)) return;
          // duplicated/reordered/etc. at the tail are still visible without a pin; only clean cuts are not.
          expect((await verifyJournal(await damagedJournal(m))).ok, `journal missed ${kind}`).toBe(false);
          expect((await verifyReceipt(forgeReceipt(m))).ok, `receipt missed ${kind}`).toBe(false);
        },
      ),
      { numRuns: runs(40) },
    );
  });

  test('a partial receipt whose stated start does not lead into its first step is detected (partial-wrong-start)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: pristine.buckets.length - 1 }),
        fc.nat(255),
        async (firstBucket, flip) => {
          const m = clone(pristine);
          m.buckets = m.buckets.slice(firstBucket);
          const first = parse(m.buckets[0]!.lines[0]!);
          m.start = { seq: first.seq as number, prev_hash: first.prev_hash as string };
          const good = await verifyReceipt(forgeReceipt(m), { expectHead: head });
          expect(good.problems).toEqual([]);
          expect(good.scope).toBe('partial');
          const hex = m.start.prev_hash.slice(7).split('');
          hex[flip % 64] = hex[flip % 64] === '0' ? '1' : '0';
          m.start.prev_hash = `sha256:${hex.join('')}`;
          const bad = await verifyReceipt(forgeReceipt(m), { expectHead: head });
          expect(bad.ok).toBe(false);
        },
      ),
      { numRuns: runs(10) },
    );
  });

  test('bucket files renamed on disk (not only in a receipt) are detected', async () => {
    const m = clone(pristine);
    const id = await damagedJournal(m);
    const bdir = join(root, id, 'buckets');
    const names = readdirSync(bdir).sort();
    renameSync(join(bdir, names[1]!), join(bdir, `${'9'.repeat(16)}.jsonl`));
    expect((await verifyJournal(id, head)).ok).toBe(false);
  });
});
