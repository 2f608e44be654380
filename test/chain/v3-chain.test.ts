/**
 * stepchain/v3 through the writer and the fast tier (spec/FORMAT.md §13): a v3 journal is written as v3 by
 * append, appendMany and the runtime; `verify` checks B and the step hash of every record, so any single
 * byte change of a stored line is detected and located at its seq; v1/v2 journals keep their genesis format.
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainVerifier } from '../../src/chain/verifier.js';
import { FileStore } from '../../src/store/file/store.js';
import { MemoryStore } from '../../src/store/memory.js';
import { copyJournal } from '../../src/store/copy.js';
import { startRun } from '../../src/runtime/index.js';
import { formatOf, genesisHash, makeGenesis } from '../../src/record/formats.js';
import { canonicalJson } from '../../src/canonical/jcs.js';

const genesis = makeGenesis({ journalId: 'v3-chain', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v3' });
const V3 = formatOf(genesis);

const steps = [
  {
    input: {
      user: 'alice',
      note: 'Please contact alice@example.org about the overdue invoice INV-9 before Friday, thanks.',
    },
    model: 'm',
    prompt: [{ role: 'user', content: 'hi' }],
  },
  { kind: 'tool.started', tool_call: { name: 'pay', arguments: { to: 'alice', amount: 10 } } },
  { kind: 'step', result: { ok: true, list: [1, 2, 3] }, meta: { by: 'test' } },
];

function verifyLines(lines: readonly string[]) {
  const v = new ChainVerifier({ genesis });
  v.beginSegment('0000000000000000.jsonl', 0);
  for (const l of lines) v.line(l, true);
  return v.finish();
}

describe('stepchain/v3 writer and fast tier', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'stepchain-v3-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('append and appendMany write v3 records that verify; the genesis keeps its format', async () => {
    const store = new MemoryStore();
    const j = await store.create('j', { format: 'stepchain/v3' });
    await j.append(steps[0]!);
    await j.appendMany([steps[1]!, steps[2]!]);
    const records = [];
    for await (const r of j.read()) records.push(r as unknown as Record<string, unknown>);
    expect(records.map((r) => r.v)).toEqual([3, 3, 3]);
    expect(records.every((r) => typeof r.seed === 'string' && typeof r.root === 'string' && !('salt' in r))).toBe(true);
    expect((await j.verify()).ok).toBe(true);
    expect(j.genesis.format).toBe('stepchain/v3');
    const v1 = await store.create('old');
    await v1.append(steps[0]!);
    for await (const r of v1.read()) expect((r as { v: number }).v).toBe(1);
  });

  it('the runtime writes a v3 run when asked, and a file journal verifies from disk', async () => {
    const store = new FileStore(dir);
    const run = await startRun(store, { runId: 'r3', format: 'stepchain/v3', input: { task: 'x' } });
    expect(run.journal.genesis.format).toBe('stepchain/v3');
    await run.journal.append(steps[0]!);
    const report = await run.journal.verify();
    expect(report.ok).toBe(true);
    await run.journal.close();
  });

  it('finds every single-byte change of a v3 line and locates it at its seq (fast-check)', () => {
    const lines: string[] = [];
    let prev = genesisHash(genesis);
    const profile = V3.records[0]!;
    steps.forEach((s, seq) => {
      const texts: Record<string, string> = {};
      for (const f of ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'])
        texts[f] = canonicalJson((s as Record<string, unknown>)[f] ?? (f === 'kind' ? 'step' : null));
      if ('meta' in s) texts.meta = canonicalJson(s.meta);
      const { line, stepHash } = profile.seal(texts, {
        seq,
        stepId: `s${seq}`,
        ts: '2026-01-01T00:00:00.000Z',
        prevHash: prev,
      });
      lines.push(line.slice(0, -1));
      prev = stepHash;
    });
    expect(verifyLines(lines).ok).toBe(true);
    fc.assert(
      fc.property(fc.nat(lines.length - 1), fc.nat(), fc.integer({ min: 0x20, max: 0x7e }), (which, at, byte) => {
        const line = lines[which]!;
        const pos = at % line.length;
        if (line.charCodeAt(pos) === byte) return;
        const changed = line.slice(0, pos) + String.fromCharCode(byte) + line.slice(pos + 1);
        const report = verifyLines(lines.map((l, i) => (i === which ? changed : l)));
        expect(report.ok).toBe(false);
        // Located: the first problem names the changed line (its seq, or its line number when seq itself broke).
        const loc = report.problems[0]!.location;
        expect(loc.line === which + 1 || loc.seq === which).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('stepchain/v3 deep tier and kinds', () => {
  const profile = V3.records[0]!;
  const seal = (seq: number, prev: string, s: Record<string, unknown>) => {
    const texts: Record<string, string> = {};
    for (const f of ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'])
      texts[f] = canonicalJson(s[f] ?? (f === 'kind' ? 'step' : null));
    return profile.seal(texts, { seq, stepId: `s${seq}`, ts: '2026-01-01T00:00:00.000Z', prevHash: prev });
  };
  const deepVerify = (lines: readonly string[], deep: boolean) => {
    const v = new ChainVerifier({ genesis, deep });
    for (const l of lines) v.line(l, true);
    return v.finish();
  };

  it('a root that does not commit to the values passes the fast tier and fails the deep tier, located at its seq', () => {
    // The "writer" seals a line whose values were changed after R was computed, then recomputes B and the
    // step hash: C6 (design §2.2) broken, which only the deep tier can see.
    const a = seal(0, genesisHash(genesis), steps[0]!);
    const record = JSON.parse(a.line) as Record<string, unknown>;
    (record.input as Record<string, unknown>).user = 'mallory';
    const texts: Record<string, string> = {};
    for (const f of ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'])
      texts[f] = canonicalJson(record[f] ?? null);
    const { root: _r, seed, ...rest } = record;
    void _r;
    // Re-seal with the same seed, then put the old root back and recompute B and the step hash by hand.
    const resealed = JSON.parse(
      profile.seal(texts, {
        seq: 0,
        stepId: 's0',
        ts: '2026-01-01T00:00:00.000Z',
        prevHash: genesisHash(genesis),
        seed: seed as string,
      }).line,
    ) as Record<string, unknown>;
    const forged = { ...rest, ...resealed, root: record.root } as Record<string, unknown>;
    delete forged.step_hash;
    const bind = 'sha256:' + sha256Hex(canonicalJson(forged));
    const stepHash =
      'sha256:' +
      sha256Hex(
        canonicalJson({
          bind,
          kind: forged.kind,
          prev_hash: forged.prev_hash,
          ref: forged.ref,
          root: forged.root,
          seq: forged.seq,
          step_id: forged.step_id,
          ts: forged.ts,
          v: forged.v,
        }),
      );
    const line = canonicalJson({ ...forged, step_hash: stepHash });
    expect(deepVerify([line], false).ok).toBe(true);
    const deep = deepVerify([line], true);
    expect(deep.ok).toBe(false);
    expect(deep.problems[0]).toMatchObject({ code: 'ROOT_MISMATCH', location: { seq: 0, field: 'root', line: 1 } });
    expect(deepVerify([a.line.slice(0, -1)], true).ok).toBe(true);
  });

  it('an unknown or unchecked kind is verified for integrity and reported as a notice, never a failure', () => {
    const a = seal(0, genesisHash(genesis), { kind: 'x.com.example.audit', input: { n: 1 } });
    const b = seal(1, a.stepHash, { kind: 'x.com.example.audit' });
    const c = seal(2, b.stepHash, { kind: 'erasure', input: { target: 0 } });
    const report = deepVerify(
      [a.line, b.line, c.line].map((l) => l.slice(0, -1)),
      true,
    );
    expect(report.ok).toBe(true);
    expect(report.warnings.map((w) => [w.code, w.location.seq])).toEqual([
      ['KIND_UNKNOWN', 0],
      ['KIND_UNCHECKED', 2],
    ]);
    expect(report.warnings[0]!.message).toContain('2 records');
    // A malformed kind is a failure.
    const bad = seal(0, genesisHash(genesis), { kind: 'Not A Kind' });
    expect(deepVerify([bad.line.slice(0, -1)], false).problems[0]).toMatchObject({
      code: 'FIELD_INVALID',
      location: { field: 'kind' },
    });
  });

  it('hostile lines never throw, fast or deep', () => {
    const a = seal(0, genesisHash(genesis), steps[0]!).line.slice(0, -1);
    fc.assert(
      fc.property(fc.nat(a.length - 1), fc.nat(a.length), fc.string({ maxLength: 8 }), (from, len, ins) => {
        const line = a.slice(0, from) + ins + a.slice(from + len);
        expect(() => deepVerify([line], true)).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });
});

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

describe('stepchain/v3 public form in a journal', () => {
  it('a stored line turned into public form (bind given, values rewritten) is refused by a store, never taken at its bind', async () => {
    const store = new MemoryStore();
    const j = await store.create('pub', { format: 'stepchain/v3' });
    await j.append({ tool_call: { name: 'pay', arguments: { to: 'alice', amount: 10 } } });
    const lines: string[] = [];
    for await (const r of j.read()) lines.push(canonicalJson(r));
    // The attacker holds the journal, so can compute B, swap seed for bind, and rewrite the values freely.
    const record = JSON.parse(lines[0]!) as Record<string, unknown>;
    const { seed: _s, step_hash: stepHash, ...rest } = record;
    void _s;
    const bind =
      'sha256:' +
      createHash('sha256')
        .update(canonicalJson({ ...rest, seed: record.seed }))
        .digest('hex');
    const forged = canonicalJson({
      ...rest,
      bind,
      secrets: {},
      step_hash: stepHash,
      tool_call: { name: 'pay', arguments: { to: 'mallory', amount: 10000 } },
    });
    const v = new ChainVerifier({ genesis: j.genesis });
    v.line(forged, true);
    // The public profile recomputes R from the shown values and secrets, so the rewrite fails on every path …
    expect(v.finish().problems.map((p) => p.code)).toEqual(['HASH_MISMATCH']);
    const stored = new ChainVerifier({ genesis: j.genesis, storedOnly: true });
    stored.line(forged, true);
    // … and a journal refuses a public-form line whatever it holds.
    expect(stored.finish().problems.map((p) => p.code)).toEqual(['HASH_MISMATCH', 'WITHHELD_IN_JOURNAL']);
  });
});

describe('stepchain/v3 forks and copies keep the format and the bytes', () => {
  it('a fork of a v3 journal is v3 and appends v3; a copy into another store is byte for byte (the seeds travel)', async () => {
    const store = new MemoryStore();
    const parent = await store.create('p', { format: 'stepchain/v3' });
    await parent.appendMany([steps[0]!, steps[1]!, steps[2]!]);
    const fork = await store.fork(parent, { fromStep: 1, to: 'f' });
    expect(fork.genesis.format).toBe('stepchain/v3');
    await fork.append({ input: { after: 'fork' } });
    const lines: Array<Record<string, unknown>> = [];
    for await (const r of fork.read()) lines.push(r as unknown as Record<string, unknown>);
    expect(lines.map((r) => r.v)).toEqual([3, 3, 3]);
    expect((await fork.verify()).ok).toBe(true);
    const other = new MemoryStore();
    await copyJournal(parent, other, 'c');
    const copy = await other.open('c');
    const a: unknown[] = [];
    const b: unknown[] = [];
    for await (const r of parent.read()) a.push(r);
    for await (const r of copy.read()) b.push(r);
    expect(b).toEqual(a);
    expect((await copy.verify()).ok).toBe(true);
  });
});
