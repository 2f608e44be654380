import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { verifyChain } from '../../src/chain/index.js';
import { preimageOfTexts, sealCommitted } from '../../src/record/commitments.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import {
  genesisDefect,
  genesisHash,
  STEP_V2,
  type Genesis,
  type StepRecord,
  type UnsealedRecord,
} from '../../src/record/index.js';
import { pendingOf, runState } from '../../src/runtime/index.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';

interface RunsCase {
  group: 'genesis' | 'records' | 'chains';
  id: string;
  result: 'valid' | 'invalid';
  genesis?: Genesis;
  genesis_jcs?: string;
  genesis_hash?: string;
  record?: UnsealedRecord;
  preimage?: string;
  step_hash?: string;
  line?: string;
  files?: { name: string; text?: string; base64?: string }[];
  expect?: {
    ok: boolean;
    head: string | null;
    head_seq: number | null;
    steps: number;
    problems: Record<string, unknown>[];
  };
  run?: {
    effects: Record<string, unknown>[];
    pending: string[];
    models: Record<string, unknown>[];
    continuation: number | null;
    status: string;
    anomalies: { seq: number; code: string }[];
    resolutions?: Record<string, unknown>;
    retry_of?: Record<string, string>;
  };
}

const vectors = loadVectors<RunsCase>('runs.json');
const of = (group: RunsCase['group']) => vectors.cases.filter((c) => c.group === group).map((c) => [c.id, c] as const);

describe('runs.json: the v2 genesis (FORMAT §11.1)', () => {
  test.each(of('genesis'))('%s', (_id, c) => {
    const defect = genesisDefect(c.genesis);
    if (c.result === 'valid') {
      expect(defect).toBeNull();
      expect(canonicalJson(c.genesis)).toBe(c.genesis_jcs);
      expect(genesisHash(c.genesis!)).toBe(c.genesis_hash);
    } else {
      expect(defect).toEqual(expect.any(String));
      // The same genesis makes a chain report GENESIS_INVALID before anything else.
      expect(verifyChain({ genesis: c.genesis, files: [] }).problems.map((p) => p.code)).toEqual(['GENESIS_INVALID']);
    }
  });
});

describe('runs.json: v2 records (FORMAT §11.2)', () => {
  test.each(of('records'))('%s', (_id, c) => {
    // v2 records hash salted slot commitments (FORMAT §12.3): the preimage holds digests, not the values.
    const r = c.record as Record<string, unknown>;
    const memberTexts: Record<string, string> = {};
    for (const [k, v] of Object.entries(r)) memberTexts[k] = canonicalJson(v, { refuseReserved: false });
    expect(preimageOfTexts(STEP_V2, memberTexts)).toBe(c.preimage);
    expect(digestUtf8(c.preimage!)).toBe(c.step_hash);
    // The profile's seal with the record's salt (what a store writes) gives the same line.
    const texts: Record<string, string> = {};
    for (const f of STEP_V2.contentFields) texts[f] = canonicalJson(r[f], { refuseReserved: false });
    if (r.meta !== undefined) texts.meta = canonicalJson(r.meta);
    expect(
      sealCommitted(
        STEP_V2,
        texts,
        { seq: r.seq as number, stepId: r.step_id as string, ts: r.ts as string, prevHash: r.prev_hash as string },
        r.salt as string,
      ),
    ).toEqual({ stepHash: c.step_hash, line: c.line });
  });
});

describe('runs.json: chains, and what a run reader derives from them (FORMAT.md §11.3, RUNS.md §1–§3)', () => {
  test.each(of('chains'))('%s', (_id, c) => {
    const report = verifyChain({
      genesis: c.genesis ?? vectors.genesis,
      files: c.files!.map((f) => ({ name: f.name, bytes: vectorBytes(f) })),
    });
    const problems = report.problems.map((p) => ({
      code: p.code,
      ...(p.location.line !== undefined ? { line: p.location.line } : {}),
      ...(p.location.seq !== undefined ? { seq: p.location.seq } : {}),
      ...(p.location.field !== undefined ? { field: p.location.field } : {}),
    }));
    expect({ ok: report.ok, head: report.head, head_seq: report.head_seq, steps: report.steps, problems }).toEqual(
      c.expect,
    );
    if (c.run === undefined) return;
    const records =
      vectorBytes(c.files![0]!).length === 0
        ? []
        : new TextDecoder()
            .decode(vectorBytes(c.files![0]!))
            .trimEnd()
            .split('\n')
            .map((l) => JSON.parse(l) as StepRecord);
    const state = runState(records);
    expect(
      [...state.effects.values()].map((e) => ({
        id: e.id,
        seq: e.seq,
        tool: e.tool,
        args: e.args,
        call_id: e.callId,
        idempotency_key: e.idempotencyKey,
        summary: e.summary,
        status: e.status,
        end_seq: e.endSeq,
      })),
    ).toEqual(c.run.effects);
    expect(pendingOf(state).map((e) => e.id)).toEqual(c.run.pending);
    expect(
      [...state.models.values()].map((m) => ({ id: m.id, seq: m.seq, status: m.status, end_seq: m.endSeq })),
    ).toEqual(c.run.models);
    expect(state.continuation).toBe(c.run.continuation);
    expect(state.status).toBe(c.run.status);
    expect(state.anomalies.map((a) => ({ seq: a.seq, code: a.code }))).toEqual(c.run.anomalies);
    // RUNS.md §5 cases: each effect's decision and the effect it retries.
    if (c.run.resolutions !== undefined) {
      expect(
        Object.fromEntries(
          [...state.effects.values()].filter((e) => e.resolution !== null).map((e) => [e.id, e.resolution]),
        ),
      ).toEqual(c.run.resolutions);
      expect(
        Object.fromEntries([...state.effects.values()].filter((e) => e.retryOf !== null).map((e) => [e.id, e.retryOf])),
      ).toEqual(c.run.retry_of);
    }
  });
});
