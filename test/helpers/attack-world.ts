/**
 * The worlds the attacks start from: the verdict attacks' genuine run (STEP, MORE, POLICY), and the approval
 * attacks' v3 runs with alice's decisions (approvalWorld, seen, unlockIn).
 */
import { rmSync } from 'node:fs';
import { afterAll } from 'vitest';
import { FileStore } from '../../src/store/file/store.js';
import { resumeRun } from '../../src/runtime/start.js';
import type { Journal } from '../../src/store/types.js';
import { alice, tempDir, v3Run } from '../approval/helpers.js';

/**
 * The genuine run the verdict attacks start from (test/attacks/verdicts.test.ts through the CLI, and
 * test/page/attack-verdicts.test.ts on the page and the CLI side by side): three steps, a weather lookup,
 * a flight search whose call carries an API key and whose result an e-mail address, and a summary; and the
 * publication policy that withholds both.
 */
export const STEP = {
  input: { user: 'What is the weather in Lyon?' },
  model: 'gpt-4o',
  prompt: 'Use tools when needed.',
  tool_call: { name: 'get_weather', arguments: { city: 'Lyon' } },
  result: { forecast: 'sunny', high_c: 14 },
};
export const MORE = [
  {
    input: { user: 'And a flight?' },
    model: 'gpt-4o',
    prompt: 'Find a flight.',
    tool_call: {
      name: 'http',
      arguments: { url: 'https://fares.example.com/q', api_key: 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c' },
    },
    result: { price: 59, contact: 'desk@fares.example.com' },
  },
  {
    input: { user: 'Summarize.' },
    model: 'gpt-4o',
    prompt: 'Answer in one sentence.',
    result: 'Sunny in Lyon; flights from 59 EUR.',
  },
];
export const POLICY = {
  rules: [
    { id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] },
    { id: 'secrets', detectors: ['api-key', 'email'] },
  ],
};

/** The call the approval attacks' request req-1 presents (outsiders 3 and 5). */
export const UNLOCK = { name: 'unlock', args: { pin: '4821' } };

/**
 * A test file's approval world: `dir()` makes a fresh temporary directory, removed after the file; `decided`
 * starts a v3 run (r1) in one, requests UNLOCK as req-1 (expiresAt when given) and has alice sign `decision`
 * (null: left undecided). Call it once at the top level of the file: it registers the clean-up there.
 */
export function approvalWorld() {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const dir = (): string => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };
  const decided = async (decision: 'granted' | 'denied' | null, options: { expiresAt?: Date } = {}) => {
    const d = dir();
    const { store, run } = await v3Run(d);
    const req = await run.requestApproval(UNLOCK, { id: 'req-1', ...options });
    if (decision !== null) await run.decideApproval(req.id, decision, { key: alice.privateKey, name: 'alice' });
    return { dir: d, store, run, req };
  };
  return { dir, decided };
}

/** What the verifier says of a journal with alice pinned as approver: codes at seqs, notice messages, entries. */
export async function seen(j: Journal) {
  const r = await j.verify({ approvers: [{ key: alice.publicKey, name: 'alice' }] });
  return {
    problems: r.problems.map((p) => `${p.code}@${p.location.seq}`),
    notices: r.warnings.map((w) => `${w.code}@${w.location.seq}`),
    messages: r.warnings.map((w) => w.message),
    entries: r.approvals ?? [],
  };
}

/**
 * Runs the granted UNLOCK call (approval req-1) through the runtime in journal `id` of the file store at
 * `storeDir`; 'ran', or the error code when refused.
 */
export async function unlockIn(storeDir: string, id: string): Promise<string> {
  const r = await resumeRun(new FileStore(storeDir), id);
  try {
    const e = await r.beginTool({ name: 'unlock', args: { pin: '4821' }, approval: 'req-1' });
    await e.complete({ ok: true });
    return 'ran';
  } catch (e) {
    return String((e as { code?: unknown }).code);
  } finally {
    await r.close();
  }
}
