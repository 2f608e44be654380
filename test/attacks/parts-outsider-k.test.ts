/**
 * Outsider K (README, docs and spec/ only) attacked how v3 journals with parts are read, writing journals by hand
 * (fast-tier lines per FORMAT §14.5, part files per PARTS §4) with any part files it liked:
 * - F1: a second reference to an address already checked, with another size or file digest, was read as the first
 *   one's part: `verify` said ok, `log` printed it, `export` wrote a receipt; `show` of that record alone refused it.
 *   Every reference is now held to the file digest and size its address was checked against (PARTS §9 step 3).
 * - F2: a part whose value references its own address with a stale digest was reported 32 levels down as too deep.
 * - F4: a list of a 2 000-list chain referenced a million times (1.0 M references, under the limit) ran `show` out
 *   of memory: a list is now counted with its whole base chain against the expansion's bytes (PARTS §10).
 * - F6: parts each nesting 120 arrays deep stood for a value 33 × 120 deep; `log` and `diff` ran out of stack. A
 *   resolved value nests at most 127 deep, as a record's slot may (PARTS §10).
 * - F7: a byte order mark before a part file's JSON was taken off and the file accepted.
 * - F8: a missing part referenced inside another part was located at the record's reference by verify and
 *   export, and where it stands in the expanded value by show, log and diff: one place now, the latter.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import type { Json } from '../../src/canonical/json.js';
import { genesisHash } from '../../src/format.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = join(resolve(__dirname, '..', '..'), 'dist', 'cli', 'main.js');
const sha = (b: Uint8Array | string): string => 'sha256:' + createHash('sha256').update(b).digest('hex');

function cli(args: string[]): { rc: number | null; out: string; err: string } {
  // A timeout only so that a hang or a crash fails the test: rc is then null.
  const r = spawnSync(process.execPath, [CLI, ...args], { timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } });
  return { rc: r.status, out: r.stdout.toString('utf8'), err: r.stderr.toString('utf8') };
}

/** A v3 file journal written by hand: lines sealed by the fast tier's rules, part files as given. */
class HandJournal {
  private prev: string;
  private readonly lines: string[] = [];
  constructor(readonly dir: string) {
    rmSync(dir, { recursive: true, force: true });
    expect(cli(['init', dir]).rc).toBe(0);
    const meta = JSON.parse(readFileSync(join(dir, 'journal.json'), 'utf8')) as {
      genesis: Parameters<typeof genesisHash>[0];
    };
    this.prev = genesisHash(meta.genesis);
  }
  raw(bytes: Uint8Array | string): Json {
    const b = typeof bytes === 'string' ? Buffer.from(bytes) : Buffer.from(bytes);
    const address = sha(randomBytes(32));
    const hex = address.slice(7);
    mkdirSync(join(this.dir, 'parts', hex.slice(0, 2)), { recursive: true });
    writeFileSync(join(this.dir, 'parts', hex.slice(0, 2), hex.slice(2)), b);
    return { '$stepchain:part': { digest: address, file: sha(b), size: b.length } };
  }
  value(value: Json): Json {
    return this.raw(canonicalJsonTrusted({ seed: randomBytes(32).toString('hex'), value }));
  }
  /** Removes the part file a reference names. */
  remove(ref: Json): void {
    const hex = (ref as { '$stepchain:part': { digest: string } })['$stepchain:part'].digest.slice(7);
    rmSync(join(this.dir, 'parts', hex.slice(0, 2), hex.slice(2)));
  }
  list(base: Json, tail: Json[]): Json {
    return this.raw(canonicalJsonTrusted({ base, seed: randomBytes(32).toString('hex'), tail }));
  }
  append(slots: Record<string, Json>): void {
    const seq = this.lines.length;
    const record: Record<string, Json> = {
      error: null,
      input: null,
      kind: 'step',
      model: null,
      prev_hash: this.prev,
      prompt: null,
      ref: null,
      result: null,
      root: sha(`root ${seq}`),
      seed: randomBytes(32).toString('hex'),
      seq,
      step_id: `s${seq}`,
      tool_call: null,
      ts: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
      v: 3,
      ...slots,
    };
    const preimage = {
      bind: sha(canonicalJsonTrusted(record)),
      ...pick(record, ['kind', 'prev_hash', 'ref', 'root', 'seq', 'step_id', 'ts', 'v']),
    };
    record.step_hash = sha(canonicalJsonTrusted(preimage));
    this.prev = record.step_hash;
    this.lines.push(canonicalJsonTrusted(record));
    mkdirSync(join(this.dir, 'buckets'), { recursive: true });
    writeFileSync(join(this.dir, 'buckets', '0000000000000000.jsonl'), this.lines.join('\n') + '\n');
    writeFileSync(join(this.dir, 'head.json'), canonicalJsonTrusted({ seq, step_hash: record.step_hash }) + '\n');
    rmSync(join(this.dir, 'tree'), { recursive: true, force: true });
  }
}

const pick = (o: Record<string, Json>, keys: string[]): Record<string, Json> =>
  Object.fromEntries(keys.map((k) => [k, o[k]!]));

test('F1: a later reference with another size or file digest is PART_CORRUPT where it stands, in verify, log and export', () => {
  const j = new HandJournal(join(tempDir('parts-k-'), 'j'));
  const ref = j.value('PAYLOAD') as { '$stepchain:part': { digest: string; file: string; size: number } };
  const larger = { '$stepchain:part': { ...ref['$stepchain:part'], size: ref['$stepchain:part'].size + 1 } };
  const otherFile = { '$stepchain:part': { ...ref['$stepchain:part'], file: 'sha256:' + '0'.repeat(64) } };
  j.append({ input: ref });
  j.append({ input: { a: larger } });
  j.append({ input: { b: otherFile } });

  const verify = cli(['verify', j.dir, '--json']);
  expect(verify.rc).toBe(1);
  const problems = (
    JSON.parse(verify.out) as { report: { problems: { code: string; location: { seq: number; path: string } }[] } }
  ).report.problems;
  expect(problems.filter((p) => p.code === 'PART_CORRUPT').map((p) => [p.location.seq, p.location.path])).toEqual([
    [1, '/input/a'],
    [2, '/input/b'],
  ]);
  const log = cli(['log', j.dir, '--jsonl']);
  expect(log.rc).toBe(2);
  expect(log.err).toMatch(
    /PART_CORRUPT: part sha256:[0-9a-f]{64} \(seq 1 at \/input\/a\): this reference says a file of/,
  );
  const exported = cli(['export', j.dir, '-o', join(j.dir, '..', 'r.tar.gz')]);
  expect(exported.rc).not.toBe(0);
  expect(exported.err).toMatch(/CHAIN_INVALID: PART_CORRUPT/);
});

test('F2: a part referencing its own address with a stale digest is PART_CORRUPT at that reference, not "too deep"', () => {
  const j = new HandJournal(join(tempDir('parts-k-'), 'j'));
  const self = j.value('placeholder') as { '$stepchain:part': { digest: string } };
  const address = self['$stepchain:part'].digest;
  // The part's file now holds a reference to itself whose size and digest are the old file's.
  const file = canonicalJsonTrusted({ seed: 'ab'.repeat(32), value: { me: self } });
  const hex = address.slice(7);
  writeFileSync(join(j.dir, 'parts', hex.slice(0, 2), hex.slice(2)), file);
  j.append({ input: { '$stepchain:part': { digest: address, file: sha(file), size: Buffer.byteLength(file) } } });
  const show = cli(['show', j.dir, '0', '--json']);
  expect(show.rc).toBe(2);
  const error = (JSON.parse(show.out) as { error: { code: string; message: string; location: { path: string } } })
    .error;
  expect(error).toMatchObject({ code: 'PART_CORRUPT', location: { path: '/input/me' } });
  expect(error.message).not.toMatch(/nest deeper/);
});

test('F4: a long list chain referenced again and again is refused by the expansion budget, not expanded', () => {
  const j = new HandJournal(join(tempDir('parts-k-'), 'j'));
  let list = j.value([{ m: 0 }]);
  for (let k = 1; k <= 400; k++) list = j.list(list, [{ m: k, text: 'x'.repeat(100) }]);
  const fan = j.value(Array.from({ length: 400 }, () => list));
  j.append({ input: Array.from({ length: 400 }, () => fan) });
  expect(cli(['verify', j.dir]).rc).toBe(0); // each part checked once: nothing is wrong with any of them
  const show = cli(['show', j.dir, '0', '--json']);
  expect(show.rc).toBe(2);
  expect(JSON.parse(show.out)).toMatchObject({ error: { code: 'PART_CORRUPT', location: { seq: 0 } } });
  expect(show.out).toMatch(/expand more than 1048576 references or 268435456 bytes of parts/);
}, 60_000);

test('F6: parts that together nest deeper than a record may are refused where they pass 127, with a code', () => {
  const j = new HandJournal(join(tempDir('parts-k-'), 'j'));
  const wrap = (v: Json, n: number): Json => (n === 0 ? v : wrap([v], n - 1));
  let ref = j.value(wrap('leaf', 60));
  for (let k = 0; k < 3; k++) ref = j.value(wrap(ref, 60));
  j.append({ input: ref });
  for (const args of [
    ['show', j.dir, '0', '--json'],
    ['log', j.dir, '--jsonl'],
    ['diff', j.dir, j.dir, '--json'],
  ]) {
    const r = cli(args);
    expect(r.rc, args.join(' ')).toBe(2);
    expect(r.out + r.err).toMatch(/PART_CORRUPT.*nests deeper than 127/);
    expect(r.out + r.err).not.toMatch(/Maximum call stack|INTERNAL/);
  }
});

test('F7: a byte order mark before a part file is not canonical JSON: PART_CORRUPT in verify and show', () => {
  const j = new HandJournal(join(tempDir('parts-k-'), 'j'));
  const text = canonicalJsonTrusted({ seed: 'cd'.repeat(32), value: [1, 2] });
  j.append({ input: j.raw(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])) });
  const verify = cli(['verify', j.dir, '--json']);
  expect(verify.rc).toBe(1);
  expect(verify.out).toMatch(/PART_CORRUPT/);
  expect(verify.out).toMatch(/not canonical JSON/);
  expect(cli(['show', j.dir, '0']).rc).toBe(2);
});

test('F1 in a receipt: each reference is held to the manifest listing, not only the first reference to an address', async () => {
  const { ReceiptParts } = await import('../../src/receipt/parts.js');
  const address = sha('a part');
  const listed = { address, digest: sha('its file'), size: 93 };
  const line = (ref: Json): string => canonicalJsonTrusted({ input: ref, v: 3 });
  const refTo = (size: number, file: string): Json => ({ '$stepchain:part': { digest: address, file, size } });
  const found: { code: string; seq: number | undefined }[] = [];
  const parts = new ReceiptParts([listed]);
  parts.line(line(refTo(93, listed.digest)), 0, 'chain', (code, _m, at) => found.push({ code, seq: at.seq }));
  parts.line(line(refTo(94, listed.digest)), 1, 'chain', (code, _m, at) => found.push({ code, seq: at.seq }));
  parts.line(line(refTo(93, sha('another file'))), 2, 'chain', (code, _m, at) => found.push({ code, seq: at.seq }));
  expect(found).toEqual([
    { code: 'PART_CORRUPT', seq: 1 },
    { code: 'PART_CORRUPT', seq: 2 },
  ]);
});

test('F3: 128 nested references are read everywhere; the 129th is PART_CORRUPT in verify, show, export and a receipt', async () => {
  const nested = (j: HandJournal, n: number): Json => {
    let ref = j.value('leaf');
    for (let k = 1; k < n; k++) ref = j.value(ref); // a part whose value is the reference: no container between
    return ref;
  };
  const ok = new HandJournal(join(tempDir('parts-k-'), 'j128'));
  ok.append({ input: nested(ok, 128) });
  expect(cli(['verify', ok.dir]).rc).toBe(0);
  expect(cli(['show', ok.dir, '0']).rc).toBe(0);

  const deep = new HandJournal(join(tempDir('parts-k-'), 'j129'));
  deep.append({ input: nested(deep, 129) });
  const verify = cli(['verify', deep.dir, '--json']);
  expect(verify.rc).toBe(1);
  expect(verify.out).toMatch(/part references nest 129 deep from this one, deeper than 128/);
  expect(JSON.parse(verify.out)).toMatchObject({
    report: { problems: [{ code: 'PART_CORRUPT', location: { seq: 0, path: '/input' } }] },
  });
  const show = cli(['show', deep.dir, '0', '--json']);
  expect(show.rc).toBe(2);
  expect(show.out).toMatch(/nest deeper than 128/);
  expect(cli(['export', deep.dir, '-o', join(deep.dir, '..', 'r.tar')]).err).toMatch(/CHAIN_INVALID: PART_CORRUPT/);

  // A receipt holding the same parts (its writer refuses to make one: the verifier's side, entry by entry).
  const { ReceiptParts } = await import('../../src/receipt/parts.js');
  const files = new Map<string, Buffer>();
  for (const sub of readdirSync(join(deep.dir, 'parts')))
    for (const name of readdirSync(join(deep.dir, 'parts', sub)))
      files.set(`sha256:${sub}${name}`, readFileSync(join(deep.dir, 'parts', sub, name)));
  const line = readFileSync(join(deep.dir, 'buckets', '0000000000000000.jsonl'), 'utf8').trim();
  const receipt = new ReceiptParts([...files].map(([address, b]) => ({ address, digest: sha(b), size: b.length })));
  const found: string[] = [];
  const add = (code: string, message: string): void => void found.push(`${code} ${message}`);
  receipt.line(line, 0, 'chain', add);
  for (const [address, b] of files) receipt.entry(`parts/${address.slice(7)}`, b, add);
  receipt.finish(add);
  expect(found).toEqual([
    expect.stringMatching(/^PART_CORRUPT part sha256:[0-9a-f]{64}: part references nest 129 deep/),
  ]);
});

test('outsider L: an honest append of 90 nested objects of 1 KiB (each stored as a part) verifies, reads and exports', () => {
  const dir = tempDir('parts-l-');
  let v: Json = { end: 'e'.repeat(1000) };
  for (let k = 0; k < 90; k++) v = { a: v, pad: `${k} `.padEnd(1000, 'p') };
  expect(cli(['init', join(dir, 'j')]).rc).toBe(0);
  const r = spawnSync(process.execPath, [CLI, 'append', join(dir, 'j')], { input: JSON.stringify({ input: v }) });
  expect(r.status).toBe(0);
  const files = readdirSync(join(dir, 'j', 'parts'))
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => readdirSync(join(dir, 'j', 'parts', d)));
  expect(files.length).toBeGreaterThanOrEqual(90); // nested 90 parts deep: the old limit (32) refused it
  expect(cli(['verify', join(dir, 'j')]).rc).toBe(0);
  const show = cli(['show', join(dir, 'j'), '0', '--json']);
  expect(show.rc).toBe(0);
  expect(JSON.stringify(JSON.parse(show.out))).toContain(JSON.stringify(v));
  expect(cli(['export', join(dir, 'j'), '-o', join(dir, 'r.tar')]).rc).toBe(0);
  expect(cli(['verify', join(dir, 'r.tar')]).rc).toBe(0);
});

test('F8: verify, export, show and log name one place for a missing part nested in another part or a list', () => {
  const j = new HandJournal(join(tempDir('parts-k-'), 'j'));
  const nested = j.value('MISSING-ONE');
  const holder = j.value({ a: { b: [0, nested] } });
  const inTail = j.value('MISSING-TWO');
  const base = j.value([1]);
  const list = j.list(j.list(base, [2]), [3, { q: inTail }]);
  j.append({ input: 1 });
  j.append({ input: { z: holder } });
  j.append({ prompt: { k: [list] } });
  j.remove(nested);
  j.remove(inTail);
  const places = [
    [1, '/input/z/a/b/1'],
    [2, '/prompt/k/0/3/q'],
  ];
  const verify = cli(['verify', j.dir, '--json']);
  expect(verify.rc).toBe(1);
  const problems = (
    JSON.parse(verify.out) as { report: { problems: { code: string; location: { seq: number; path: string } }[] } }
  ).report.problems;
  expect(problems.map((p) => [p.code, p.location.seq, p.location.path])).toEqual(
    places.map(([seq, path]) => ['PART_MISSING', seq, path]),
  );
  for (const [seq, path] of places) {
    const show = cli(['show', j.dir, String(seq), '--json']);
    expect(show.rc).toBe(2);
    expect(JSON.parse(show.out)).toMatchObject({ error: { code: 'PART_MISSING', location: { seq, path } } });
  }
  expect(cli(['log', j.dir, '--jsonl']).err).toContain(`[seq 1, /input/z/a/b/1]`);
  const exported = cli(['export', j.dir, '-o', join(j.dir, '..', 'r.tar.gz')]);
  expect(exported.rc).toBe(2);
  expect(exported.err).toContain(`[seq 1, /input/z/a/b/1]`);
});
