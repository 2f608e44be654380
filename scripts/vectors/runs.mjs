// Generates runs.json (spec/FORMAT.md §11): the stepchain/v2 run journal — genesis with the run identity,
// sealed v2 records of every kind, chains to verify (valid, and damaged in the ways §11.3 names), and for
// each valid chain the effects, model requests and continuation point RUNS.md §2–§3 derive from it.
// Inputs are fixed, so the output is byte-identical on every run.
//
// As in foundation.mjs, the expectations come from the library and are checked against facts that do not
// depend on it: each step hash is SHA-256 (node:crypto) over an independently assembled JCS preimage, and
// each damaged chain must produce exactly the problem codes the damage is meant to cause.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../dist/canonical/index.js';
import { makeGenesis, genesisHash, genesisDefect, sealRecord } from '../../dist/record/index.js';
import { preimageOfTexts, sealCommitted } from '../../dist/record/commitments.js';
import { STEP_V2 } from '../../dist/record/v2.js';
import { verifyChain } from '../../dist/chain/index.js';
import { runState, pendingOf } from '../../dist/runtime/index.js';

const FORMAT = 'stepchain-vectors/v1';
const enc = new TextEncoder();
const jcsRecord = (r) => canonicalJson(r, { refuseReserved: false, maxDepth: 128 });
const sha = (s) => 'sha256:' + createHash('sha256').update(s, 'utf8').digest('hex');
const B0 = '0000000000000000.jsonl';
/** The record salt of seq i in these vectors (real writers draw it from a CSPRNG). */
const recordSalt = (i) => sha(`stepchain run vectors record salt ${i}`).slice(7, 39);
/** The committed preimage of a v2 record without step_hash (FORMAT §12.3). */
const preimageOf = (r) => preimageOfTexts(STEP_V2, Object.fromEntries(Object.entries(r).map(([k, v]) => [k, jcsRecord(v)])));

function assert(cond, message) {
  if (!cond) throw new Error(`vector generation check failed: ${message}`);
}

const GENESIS = makeGenesis({
  journalId: 'run-7f3a9c2e',
  createdAt: '2026-11-23T10:00:00.000Z',
  run: { agent: 'billing-agent', conversation_id: 'conv-42', parent_run_id: 'run-orchestrator-1', labels: { environment: 'production', user: 'u-1001' } },
  format: 'stepchain/v2',
});

const id = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const ts = (i) => new Date(Date.UTC(2026, 10, 23, 10, 0, 1) + i * 500).toISOString();
const EMPTY = { input: null, model: null, prompt: null, tool_call: null, result: null, error: null, ref: null };
const PROMPT = [{ role: 'system', content: 'You pay invoices.' }, { role: 'user', content: 'Pay invoice INV-9 (120.00 EUR).' }];
const CHARGE = { name: 'charge_card', arguments: { amount: '120.00', currency: 'EUR', invoice: 'INV-9' }, call_id: 'call_1', idempotency_key: 'INV-9-charge' };

/** The records of a run that asked a model, charged a card, and ended; `upto` cuts it (a crash). */
const RUN = [
  { kind: 'run.started', input: { task: 'pay INV-9' } },
  { kind: 'model.started', model: 'gpt-4o-2024-08-06', prompt: PROMPT },
  { kind: 'model.completed', ref: id(1), model: 'gpt-4o-2024-08-06', prompt: PROMPT, tool_call: [{ id: 'call_1', name: 'charge_card', arguments: { amount: '120.00', currency: 'EUR', invoice: 'INV-9' } }], result: { role: 'assistant', content: null }, meta: { usage: { input_tokens: '812', output_tokens: '41' } } },
  { kind: 'tool.started', tool_call: CHARGE },
  { kind: 'tool.updated', ref: id(3), tool_call: { name: 'charge_card', summary: 'charging 120.00 EUR to card ending 4242' } },
  { kind: 'tool.completed', ref: id(3), tool_call: CHARGE, result: { charge_id: 'ch_81', status: 'succeeded' } },
  { kind: 'model.started', model: 'gpt-4o-2024-08-06', prompt: [...PROMPT, { role: 'tool', content: 'ch_81 succeeded' }] },
  { kind: 'model.completed', ref: id(6), model: 'gpt-4o-2024-08-06', prompt: [...PROMPT, { role: 'tool', content: 'ch_81 succeeded' }], result: { role: 'assistant', content: 'Paid.' } },
  { kind: 'run.completed', result: 'Paid.' },
];

function seal(genesis, contents, { start = 0, prev = genesisHash(genesis), v = 2 } = {}) {
  const lines = [];
  const records = [];
  contents.forEach((c, k) => {
    const i = start + k;
    const unsealed = { v, seq: i, step_id: id(i), ts: ts(i), prev_hash: prev, ...EMPTY, ...c };
    let record, line;
    if (v === 2) {
      // v2 records hash salted slot commitments (FORMAT §12); a fixed record salt per seq keeps vectors reproducible.
      const texts = {};
      for (const f of STEP_V2.contentFields) texts[f] = jcsRecord(unsealed[f]);
      if (unsealed.meta !== undefined) texts.meta = jcsRecord(unsealed.meta);
      ({ line } = sealCommitted(STEP_V2, texts, { seq: i, stepId: unsealed.step_id, ts: ts(i), prevHash: prev }, recordSalt(i)));
      record = JSON.parse(line);
      const { step_hash, ...rest } = record;
      assert(step_hash === sha(preimageOf(rest)), `record ${i} hash`);
    } else {
      ({ record, line } = sealRecord(unsealed));
      assert(record.step_hash === sha(jcsRecord(unsealed)), `record ${i} hash`);
    }
    assert(line === jcsRecord(record) + '\n', `record ${i} line`);
    prev = record.step_hash;
    lines.push(line);
    records.push(record);
  });
  return { lines, records };
}

function genesisCases() {
  const cases = [];
  const add = (name, comment, genesis, valid) => {
    const defect = genesisDefect(genesis);
    assert((defect === null) === valid, `genesis ${name}: ${defect}`);
    cases.push({
      group: 'genesis', id: `genesis-${name}`, comment, result: valid ? 'valid' : 'invalid', genesis,
      ...(valid ? { genesis_jcs: canonicalJson(genesis), genesis_hash: sha(canonicalJson(genesis)) } : { expected_code: 'GENESIS_INVALID' }),
    });
  };
  const g = { format: 'stepchain/v2', journal_id: 'run-1', created_at: '2026-11-23T10:00:00.000Z' };
  add('full-identity', 'every identity member: agent, conversation, parent run, labels', GENESIS, true);
  add('empty-run', 'a run with no identity beyond its id', { ...g, run: {} }, true);
  add('missing-run', 'a v2 genesis without its run member', g, false);
  add('run-not-object', 'run is a string', { ...g, run: 'conv-42' }, false);
  add('unknown-run-member', 'an identity member this version does not define', { ...g, run: { tenant: 'acme' } }, false);
  add('bad-conversation-id', 'conversation_id with a space', { ...g, run: { conversation_id: 'conv 42' } }, false);
  add('bad-parent-run-id', 'parent_run_id that is a number', { ...g, run: { parent_run_id: 7 } }, false);
  add('empty-agent', 'agent is the empty string', { ...g, run: { agent: '' } }, false);
  add('label-not-string', 'a label value that is a number', { ...g, run: { labels: { retries: 3 } } }, false);
  add('label-bad-name', 'a label name with a slash', { ...g, run: { labels: { 'team/a': 'x' } } }, false);
  add('extra-genesis-member', 'a v2 genesis with a member besides the four', { ...g, run: {}, tenant: 'acme' }, false);
  add('v1-members-v2-format', 'the v1 member set under the v2 format', { format: 'stepchain/v2', journal_id: 'run-1', created_at: '2026-11-23T10:00:00.000Z' }, false);
  return cases;
}

function recordCases() {
  const { records, lines } = seal(GENESIS, RUN);
  return records.map((record, i) => {
    const { step_hash, ...unsealed } = record;
    return { group: 'records', id: `record-${i}-${record.kind}`, comment: `the ${record.kind} record of the example run (spec/FORMAT.md §11.2)`, result: 'valid', record: unsealed, preimage: preimageOf(unsealed), step_hash, line: lines[i] };
  });
}

/** The effects and model requests of a chain, and its continuation point, as RUNS.md §2–§3 derive them. */
function derived(records, resolutions = false) {
  const state = runState(records);
  // Cases of RUNS.md §5 also give each effect's decision and the effect it retries (older cases stay as they were).
  const decided = resolutions ? {
    resolutions: Object.fromEntries([...state.effects.values()].filter((e) => e.resolution !== null).map((e) => [e.id, e.resolution])),
    retry_of: Object.fromEntries([...state.effects.values()].filter((e) => e.retryOf !== null).map((e) => [e.id, e.retryOf])),
  } : {};
  const effect = (e) => ({ id: e.id, seq: e.seq, tool: e.tool, args: e.args, call_id: e.callId, idempotency_key: e.idempotencyKey, summary: e.summary, status: e.status, end_seq: e.endSeq });
  return {
    effects: [...state.effects.values()].map(effect),
    pending: pendingOf(state).map((e) => e.id),
    models: [...state.models.values()].map((m) => ({ id: m.id, seq: m.seq, status: m.status, end_seq: m.endSeq })),
    continuation: state.continuation,
    status: state.status,
    anomalies: state.anomalies.map((a) => ({ seq: a.seq, code: a.code })),
    ...decided,
  };
}

function chainCases() {
  const cases = [];
  const add = (name, comment, { contents, lines: given, intended, genesis = GENESIS, resolutions = false }) => {
    const { lines, records } = given ?? seal(genesis, contents);
    const report = verifyChain({ genesis, files: [{ name: B0, bytes: enc.encode(lines.join('')) }] });
    const codes = report.problems.map((p) => p.code);
    assert(JSON.stringify(codes) === JSON.stringify(intended), `chain ${name}: verifier reports [${codes}], intended [${intended}]`);
    cases.push({
      group: 'chains', id: `chain-${name}`, comment, result: intended.length === 0 ? 'valid' : 'invalid',
      ...(genesis === GENESIS ? {} : { genesis }),
      files: [{ name: B0, text: lines.join('') }],
      expect: {
        ok: report.ok, head: report.head, head_seq: report.head_seq, steps: report.steps,
        problems: report.problems.map((p) => ({ code: p.code, ...(p.location.line !== undefined ? { line: p.location.line } : {}), ...(p.location.seq !== undefined ? { seq: p.location.seq } : {}), ...(p.location.field !== undefined ? { field: p.location.field } : {}) })),
      },
      ...(intended.length === 0 ? { run: derived(records, resolutions) } : {}),
    });
  };
  add('complete-run', 'a whole run: model request, a tool effect with an annotation, a second request, run.completed', { contents: RUN, intended: [] });
  add('crash-mid-tool', 'killed between the tool intent and its outcome: the effect is pending, the continuation point is before the model request that asked for it', { contents: RUN.slice(0, 5), intended: [] });
  add('crash-mid-model', 'killed during the first model request: it is in flight; the continuation point is run.started', { contents: RUN.slice(0, 2), intended: [] });
  add('asked-not-started', 'the model asked for a tool call that was never started: no continuation point after the request', { contents: RUN.slice(0, 3), intended: [] });
  add('tool-failed', 'a tool that failed: its outcome carries the error; the run can continue', {
    contents: [...RUN.slice(0, 4), { kind: 'tool.failed', ref: id(3), tool_call: CHARGE, error: { name: 'CardDeclined', message: 'insufficient funds', code: 'card_declined' } }],
    intended: [],
  });
  add('plain-steps', 'journal.append on a run journal: kind step, no boundary records', {
    contents: [{ kind: 'step', input: { q: 1 }, model: 'm', prompt: 'p', tool_call: { name: 't', arguments: {} }, result: 2 }],
    intended: [],
  });
  add('outcome-without-start', 'a tool.completed whose ref names no started effect: valid chain, an anomaly for the run reader', {
    contents: [RUN[0], { kind: 'tool.completed', ref: 'no-such-effect', tool_call: CHARGE, result: 'ok' }],
    intended: [],
  });
  add('outcome-repeated', 'two outcomes for one effect: valid chain, the second is an anomaly and does not change the first', {
    contents: [RUN[0], RUN[3], { kind: 'tool.completed', ref: id(1), tool_call: CHARGE, result: 'first' }, { kind: 'tool.failed', ref: id(1), tool_call: CHARGE, error: { name: 'Error', message: 'second' } }],
    intended: [],
  });
  // Damaged: each breaks one rule of §11.2–§11.3 in an otherwise valid record (sealed, so only that rule fails).
  const one = (name, comment, record, intended) => add(name, comment, { contents: [RUN[0], record], intended });
  one('unknown-kind', 'kind outside the defined set', { kind: 'tool.retried', ref: null }, ['FIELD_INVALID']);
  one('outcome-without-ref', 'a tool.completed with ref null', { kind: 'tool.completed', tool_call: CHARGE, result: 'ok' }, ['FIELD_INVALID']);
  one('start-with-ref', 'a tool.started that names a ref', { kind: 'tool.started', ref: id(0), tool_call: CHARGE }, ['FIELD_INVALID']);
  one('failed-without-error', 'a tool.failed with error null', { kind: 'tool.failed', ref: id(0), tool_call: CHARGE }, ['FIELD_INVALID']);
  one('error-on-completed', 'a tool.completed that carries an error', { kind: 'tool.completed', ref: id(0), tool_call: CHARGE, result: 'ok', error: { name: 'Error', message: 'x' } }, ['FIELD_INVALID']);
  one('bad-ref', 'ref that is not an id', { kind: 'tool.completed', ref: 'a b', tool_call: CHARGE, result: 'ok' }, ['FIELD_INVALID']);
  const v1Line = seal(GENESIS, [{ ...RUN[0] }], { v: 1 });
  add('v1-record-in-v2', 'a record with v 1 in a v2 journal: also no record salt, so no committed step hash (FORMAT §12)', { lines: v1Line, intended: ['MISSING_FIELD', 'UNSUPPORTED_VERSION', 'HASH_MISMATCH'] });
  // A v1 step (its members, no kind/ref/error) in a v2 journal: the three members are missing.
  const v1Shaped = (() => {
    const unsealed = { v: 2, seq: 0, step_id: id(0), ts: ts(0), prev_hash: genesisHash(GENESIS), input: null, model: 'm', prompt: null, tool_call: null, result: null, salt: recordSalt(0) };
    const record = { ...unsealed, step_hash: sha(preimageOf(unsealed)) };
    return { lines: [jcsRecord(record) + '\n'], records: [record] };
  })();
  add('missing-kind-ref-error', 'a record without kind, ref and error', { lines: v1Shaped, intended: ['MISSING_FIELD', 'MISSING_FIELD', 'MISSING_FIELD'] });
  // Tampering: the effect's outcome edited after sealing.
  const run = seal(GENESIS, RUN.slice(0, 6));
  const edited = run.lines.map((l, i) => (i === 5 ? l.replace('"succeeded"', '"failed"') : l));
  add('outcome-edited', 'the charge status edited after the fact', { lines: { lines: edited, records: run.records }, intended: ['HASH_MISMATCH'] });

  // ---- added for issue 37: the silences an independent implementer met (each case pins one answer).
  // FORMAT §12.2: any absent slot is committed as JCS([name]) — a record without input still has its step
  // hash, and is MISSING_FIELD only (no HASH_MISMATCH).
  const withoutInput = (() => {
    const unsealed = { v: 2, seq: 0, step_id: id(0), ts: ts(0), prev_hash: genesisHash(GENESIS), kind: 'step', ref: null, error: null, model: 'm', prompt: null, tool_call: null, result: null, salt: recordSalt(0) };
    const record = { ...unsealed, step_hash: sha(preimageOf(unsealed)) };
    return { lines: [jcsRecord(record) + '\n'], records: [record] };
  })();
  add('missing-slot-input', 'a record without input: MISSING_FIELD, and its step hash commits the absent slot as JCS(["input"]) (FORMAT §12.2), so no HASH_MISMATCH', { lines: withoutInput, intended: ['MISSING_FIELD'] });
  // FORMAT §11.3: the rules between members read a member that broke its own rule as unknown, and are not
  // checked when kind breaks its rule: each defect is reported once.
  one('start-with-bad-ref', 'a tool.started whose ref is not an id: one FIELD_INVALID (ref), by the ref rule; the boundary rule reads ref as unknown (FORMAT §11.3)', { kind: 'tool.started', ref: 'a b', tool_call: CHARGE }, ['FIELD_INVALID']);
  one('unknown-kind-with-error', 'an unknown kind that carries an error: one FIELD_INVALID (kind); the boundary rules are not checked without a valid kind (FORMAT §11.3)', { kind: 'tool.retried', error: { name: 'Error', message: 'x' } }, ['FIELD_INVALID']);
  // FORMAT §11.3: the boundary rules come after the members' own rules and before the marker pass.
  one('boundary-before-markers', 'a tool.started with a ref and an invalid redaction marker in input: FIELD_INVALID (ref) before MARKER_INVALID (input) (FORMAT §11.3, §6.3 step 4)', { kind: 'tool.started', ref: id(0), tool_call: CHARGE, input: { card: { '$stepchain:redacted': { rule: 'card' } } } }, ['FIELD_INVALID', 'MARKER_INVALID']);
  // FORMAT §11.2, §10: the genesis picks the record profile, never a record's v. A v2 record in a v1 journal
  // is read as a v1 record: its v2 members are unknown, its version unsupported, its hash §5.2's.
  const V1_GENESIS = makeGenesis({ journalId: 'journal-v1', createdAt: '2026-11-23T10:00:00.000Z' });
  add('v2-record-in-v1', 'a v2 record (kind, ref, error, salt) in a stepchain/v1 journal: checked as a v1 record — four UNKNOWN_FIELD, UNSUPPORTED_VERSION, and HASH_MISMATCH, since §5.2 hashes the raw record (FORMAT §10, §11.2)', {
    genesis: V1_GENESIS, lines: seal(V1_GENESIS, [RUN[0]]),
    intended: ['UNKNOWN_FIELD', 'UNKNOWN_FIELD', 'UNKNOWN_FIELD', 'UNKNOWN_FIELD', 'UNSUPPORTED_VERSION', 'HASH_MISMATCH'],
  });
  // RUNS.md §2: the run reader's anomalous cases (valid chains; each case's "run" is what the reader derives).
  const ASKS = [{ id: 'call_9', name: 'refund', arguments: { invoice: 'INV-9' } }];
  add('model-outcome-without-start', 'a model.completed whose ref names no request: OUTCOME_WITHOUT_START, and the tool calls it lists are not requested — an anomalous outcome changes nothing, and the continuation point moves past it (RUNS.md §2)', {
    contents: [RUN[0], { kind: 'model.completed', ref: 'no-such-request', model: 'gpt-4o-2024-08-06', prompt: PROMPT, tool_call: ASKS, result: { role: 'assistant', content: null } }], intended: [],
  });
  add('kind-mismatch-tool-names-model', 'a tool.completed whose ref names a model request: KIND_MISMATCH; the request stays in flight (RUNS.md §2)', {
    contents: [RUN[0], RUN[1], { kind: 'tool.completed', ref: id(1), tool_call: CHARGE, result: 'ok' }], intended: [],
  });
  add('kind-mismatch-model-names-tool', 'a model.completed whose ref names a tool effect: KIND_MISMATCH; the effect stays pending (RUNS.md §2)', {
    contents: [RUN[0], { kind: 'tool.started', tool_call: CHARGE }, { kind: 'model.completed', ref: id(1), model: 'gpt-4o-2024-08-06', prompt: PROMPT, result: { role: 'assistant', content: 'x' } }], intended: [],
  });
  add('summary-not-string', 'a tool.started whose summary and idempotency_key are not strings reads them as null; a tool.updated replaces only what it gives as a string (RUNS.md §2)', {
    contents: [
      RUN[0],
      { kind: 'tool.started', tool_call: { name: 'charge_card', arguments: { amount: '120.00' }, summary: 42, idempotency_key: 7 } },
      { kind: 'tool.updated', ref: id(1), tool_call: { name: 'charge_card', summary: { text: 'charging' }, idempotency_key: 'INV-9-charge' } },
      { kind: 'tool.completed', ref: id(1), tool_call: { name: 'charge_card', arguments: { amount: '120.00' } }, result: 'ok' },
    ], intended: [],
  });
  add('model-asks-by-call-id', 'a model.completed whose tool calls give call_id instead of id: requested by call_id; one with neither is not requested (RUNS.md §2)', {
    contents: [RUN[0], RUN[1], { kind: 'model.completed', ref: id(1), model: 'gpt-4o-2024-08-06', prompt: PROMPT, tool_call: [{ call_id: 'call_2', name: 'lookup', arguments: {} }, { name: 'no_id', arguments: {} }], result: { role: 'assistant', content: null } }], intended: [],
  });
  add('model-asks-without-id', 'a model.completed whose one tool call has no id or call_id: nothing is requested, so the continuation point moves to it (RUNS.md §2–§3)', {
    contents: [RUN[0], RUN[1], { kind: 'model.completed', ref: id(1), model: 'gpt-4o-2024-08-06', prompt: PROMPT, tool_call: [{ name: 'no_id', arguments: {} }], result: { role: 'assistant', content: null } }], intended: [],
  });
  // RUNS.md §5: a pending effect resolved by a decision record (its outcome with meta.resolution), and a retry naming it.
  const CRASHED = RUN.slice(0, 5);
  const resolution = (decision, extra = {}) => ({ resolution: { decision, by: 'ops:alice', reason: 'checked the PSP dashboard for INV-9-charge', ...extra } });
  const resolvedFailed = (decision, extra) => ({ kind: 'tool.failed', ref: id(3), tool_call: CHARGE, error: { name: 'EffectResolved', message: `outcome unknown; resolved: ${decision} (by ops:alice): checked the PSP dashboard for INV-9-charge` }, meta: resolution(decision, extra) });
  add('resolved-done', 'RUNS.md §5: the pending charge resolved as done with the result found at the provider: a tool.completed with meta.resolution; nothing is pending, the continuation point moves past it', {
    contents: [...CRASHED, { kind: 'tool.completed', ref: id(3), tool_call: CHARGE, result: { charge_id: 'ch_81', status: 'succeeded' }, meta: resolution('done') }], intended: [], resolutions: true,
  });
  add('resolved-abandon', 'RUNS.md §5: the pending charge abandoned: a tool.failed with error EffectResolved and meta.resolution', {
    contents: [...CRASHED, resolvedFailed('abandon')], intended: [], resolutions: true,
  });
  add('resolved-compensated', 'RUNS.md §5: the pending charge compensated by a refund effect, which is named in meta.resolution.compensation', {
    contents: [...CRASHED, { kind: 'tool.started', tool_call: { name: 'refund', arguments: { invoice: 'INV-9' }, idempotency_key: 'INV-9-refund' } }, { kind: 'tool.completed', ref: id(5), tool_call: { name: 'refund', arguments: { invoice: 'INV-9' }, idempotency_key: 'INV-9-refund' }, result: { refund_id: 're_4' } }, resolvedFailed('compensated', { compensation: id(5) })],
    intended: [], resolutions: true,
  });
  add('retry-of', 'RUNS.md §5: the pending charge resolved as retry, then begun again: the new tool.started names it in meta.retry_of, and completes', {
    contents: [...CRASHED, resolvedFailed('retry'), { kind: 'tool.started', tool_call: CHARGE, meta: { retry_of: id(3) } }, { kind: 'tool.completed', ref: id(6), tool_call: CHARGE, result: { charge_id: 'ch_82', status: 'succeeded' } }],
    intended: [], resolutions: true,
  });
  add('resolution-not-a-decision', 'RUNS.md §5: meta.resolution whose decision is not one of the four: an observed outcome (resolution null), still the effect\'s outcome', {
    contents: [...CRASHED, { kind: 'tool.failed', ref: id(3), tool_call: CHARGE, error: { name: 'Error', message: 'x' }, meta: { resolution: { decision: 'maybe', by: 'x', reason: 'y' } } }],
    intended: [], resolutions: true,
  });
  add('completed-unresolved', 'RUNS.md §5: run.completed with the pending effect left unresolved, named in meta.unresolved: the effect stays pending', {
    contents: [...CRASHED, { kind: 'run.completed', result: 'left for review', meta: { unresolved: [id(3)] } }], intended: [], resolutions: true,
  });
  add('unrepresentable-outcome', 'RUNS.md §6: a tool result with parts JSON cannot represent, recorded with markers listed in meta.unrepresentable; the outcome stays completed', {
    contents: [...RUN.slice(0, 4), { kind: 'tool.completed', ref: id(3), tool_call: CHARGE, result: { charge_id: 'ch_81', raw: { unrepresentable: 'a reference back to an enclosing value (a cycle)' } }, meta: { unrepresentable: [{ path: '/result/raw', what: 'a reference back to an enclosing value (a cycle)' }] } }],
    intended: [], resolutions: true,
  });
  // RUNS.md §2: a second started record under an id the run already has is an anomaly, and the first stands.
  add('step-id-repeated', 'a second tool.started under the step_id of a pending effect: STEP_ID_REPEATED at its seq; the first effect stands (still pending, its intent unchanged), the second is not read (RUNS.md §2)', {
    contents: [RUN[0], { kind: 'tool.started', tool_call: CHARGE }, { kind: 'tool.started', step_id: id(1), tool_call: { name: 'refund', arguments: { invoice: 'INV-9' } } }], intended: [],
  });
  add('step-id-repeated-model', 'a model.started under the step_id of a completed tool effect: STEP_ID_REPEATED; nothing is in flight, so the continuation point moves past it (RUNS.md §2)', {
    contents: [RUN[0], { kind: 'tool.started', tool_call: CHARGE }, { kind: 'tool.completed', ref: id(1), tool_call: CHARGE, result: 'ok' }, { kind: 'model.started', step_id: id(1), model: 'gpt-4o-2024-08-06', prompt: PROMPT }], intended: [],
  });
  return cases;
}

export function generate() {
  return {
    'runs.json': {
      format: FORMAT,
      kind: 'runs',
      description: 'stepchain/v2 run journals (spec/FORMAT.md §11). group "genesis": a genesis and its JCS and hash, or GENESIS_INVALID. group "records": a v2 record without step_hash, its preimage, step_hash and stored line. group "chains": files to verify against the file-level genesis (or the case\'s), the expected report as in chains.json, and for a valid chain "run": what §11.4–§11.5 derive — effects (in seq order), pending effect ids, model requests, the continuation seq, the run status and the boundary anomalies.',
      genesis: GENESIS,
      genesis_hash: genesisHash(GENESIS),
      cases: [...genesisCases(), ...recordCases(), ...chainCases()],
    },
  };
}
