/**
 * The demo's crash stage (spec/FORMAT.md §11): an agent process is killed while a tool is running; the next
 * process finds the effect whose outcome is unknown, resumes from the continuation point, checks the
 * effect with the provider by its idempotency key, and finishes the run.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { resumeRun, type FileStore } from 'stepchain';

export interface CrashStageContext {
  heading(title: string, why: string): void;
  say(text: string): void;
  store: FileStore;
  green(s: string): string;
  red(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

/** Runs the agent process until its intent is durable, then kills it with SIGKILL. */
async function runAndKill(root: string, runId: string): Promise<string> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./crash-agent.js', import.meta.url)), root, runId], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const effectId = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = /intent (\S+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('close', () => reject(new Error('the agent process exited before recording its intent')));
  });
  const closed = new Promise((resolve) => child.on('close', resolve));
  child.kill('SIGKILL');
  await closed;
  return effectId;
}

export async function crashStage(c: CrashStageContext): Promise<void> {
  c.heading(
    'Kill an agent mid-tool, then resume it',
    'The intent to book a hotel is journaled before the booking runs; the process is then killed with SIGKILL.',
  );
  const effectId = await runAndKill(c.store.root, 'trip-hotel');
  c.say(`agent process killed while ${c.bold('book_hotel')} was running (effect ${effectId})`);

  const run = await resumeRun(c.store, 'trip-hotel');
  const pending = await run.pendingEffects();
  for (const e of pending) {
    c.say(
      c.red(`⚠ effect ${e.id}: ${e.tool} started at seq ${e.seq}, outcome unknown`) +
        c.dim(` (idempotency key ${e.idempotencyKey}; ${e.summary})`),
    );
  }
  const point = await run.continuationPoint();
  c.say(
    `continuation point: seq ${point.seq} — ${c.dim("the model's request for book_hotel (seq 2) has no tool result, so the conversation resumes before it")}`,
  );
  // The new process asks the booking API about the idempotency key rather than booking blindly again
  // (simulated here: the API answers that it holds no booking under the key).
  c.say(
    c.dim(
      `asked the booking API about key ${pending[0]!.idempotencyKey}: no booking found, so the effect failed and is retried under the same key`,
    ),
  );
  await run.endTool(pending[0]!.id, {
    error: {
      name: 'Interrupted',
      message: 'the process died before the booking API answered; the API has no booking under this key',
    },
  });
  const retry = await run.beginTool({
    name: 'book_hotel',
    args: { city: 'Lyon', night: '2026-03-12', max_eur: 180 },
    callId: 'call_h1',
    idempotencyKey: 'trip-42-hotel',
  });
  await retry.complete({ confirmation: 'HX-7731', hotel: 'Hôtel des Célestins', eur: 164 });
  await run.complete({ answer: 'Booked Hôtel des Célestins for 12 March (164 EUR), confirmation HX-7731.' });
  const effects = await run.effects();
  c.say(
    effects.map((e) => `${e.tool} ${e.status === 'completed' ? c.green(e.status) : c.red(e.status)}`).join(', ') +
      `; run ${await run.status()}`,
  );
  c.say(
    `continuation point now seq ${(await run.continuationPoint()).seq}; ${(await run.pendingEffects()).length} pending effects`,
  );
  const report = await run.journal.verify();
  c.say(
    report.ok
      ? c.green(
          `✔ the run's chain holds: ${report.steps} records, identity in the genesis (conversation trip-planning, agent travel-agent)`,
        )
      : c.red('✘ the chain is broken'),
  );
  await run.close();
}
