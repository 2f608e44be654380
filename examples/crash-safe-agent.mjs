// A crash-safe agent loop (docs/crash-safe-agents.md). Run it: npm run build && node examples/crash-safe-agent.mjs
// The script starts itself as a child agent, kills it with SIGKILL while a tool is running, then restarts
// the agent, which lists the effect whose outcome is unknown and resumes from the continuation point.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore, resumeRun, startRun } from 'stepchain';

// Stand-ins for a model provider and a tool with side effects.
const model = async (messages) => {
  const last = messages[messages.length - 1];
  if (last.role === 'tool' && !last.content.startsWith('error'))
    return { content: 'Done: the invoice is paid.', toolCalls: [] };
  return {
    content: null,
    toolCalls: [{ id: `call_${messages.length}`, name: 'pay_invoice', arguments: { invoice: 'INV-9', eur: 120 } }],
  };
};
const tools = {
  pay_invoice: async (args, { slow }) => {
    if (slow) await new Promise((r) => setTimeout(r, 60_000)); // the first process is killed in here
    return { paid: args.invoice, payment_id: 'pay_81' };
  },
};

async function agent(store, runId, { slow }) {
  const existing = (await store.list({})).includes(runId);
  const run = existing
    ? await resumeRun(store, runId)
    : await startRun(store, { runId, agent: 'payer', conversationId: 'conv-1', input: 'Pay INV-9' });

  // After a crash: effects that started and never recorded an outcome. Never re-run one blindly.
  for (const e of await run.pendingEffects()) {
    console.log(`outcome unknown: ${e.tool} ${JSON.stringify(e.args)} (seq ${e.seq}, key ${e.idempotencyKey})`);
    // Ask the tool's provider by the idempotency key; here it says the payment never went through.
    await run.endTool(e.id, { error: { name: 'Interrupted', message: 'no payment under this key' } });
  }
  // Resume from the last point where every tool call the model asked for has its outcome.
  const { seq, steps } = await run.continuationPoint();
  console.log(`resuming from seq ${seq} (${steps.length} records)`);

  // The conversation up to that point, rebuilt from the records (ids stay out of what the model sees).
  const messages = [{ role: 'user', content: 'Pay INV-9' }];
  for (const r of steps) {
    if (r.kind === 'model.completed')
      messages.push({ role: 'assistant', content: r.result.content, tool_calls: r.tool_call });
    if (r.kind === 'tool.completed')
      messages.push({ role: 'tool', tool_call_id: r.tool_call.call_id, content: JSON.stringify(r.result) });
    if (r.kind === 'tool.failed')
      messages.push({ role: 'tool', tool_call_id: r.tool_call.call_id, content: `error: ${r.error.message}` });
  }
  for (;;) {
    const call = await run.beginModel({ model: 'example-model', prompt: messages });
    const reply = await model(messages);
    await call.complete({ result: { content: reply.content }, toolCalls: reply.toolCalls });
    if (reply.toolCalls.length === 0) {
      await run.complete(reply.content);
      console.log(reply.content);
      break;
    }
    for (const tc of reply.toolCalls) {
      // The intent is durable before the tool runs.
      const effect = await run.beginTool({
        name: tc.name,
        args: tc.arguments,
        callId: tc.id,
        idempotencyKey: `${runId}-${tc.name}`,
      });
      console.log(`intent recorded: ${tc.name} (effect ${effect.id})`);
      try {
        const result = await tools[tc.name](tc.arguments, { slow });
        await effect.complete(result);
        messages.push({ role: 'tool', tool_call_id: tc.id, content: JSON.stringify(result) });
      } catch (error) {
        await effect.fail(error);
        messages.push({ role: 'tool', tool_call_id: tc.id, content: `error: ${error.message}` });
      }
    }
  }
  await run.close();
}

const [role, root] = process.argv.slice(2);
if (role === 'child') {
  await agent(new FileStore(root), 'pay-inv-9', { slow: true });
} else {
  const dir = mkdtempSync(join(tmpdir(), 'crash-safe-agent-'));
  console.log('— first process: starts the run, is killed while paying');
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'child', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.setEncoding('utf8').on('data', (text) => {
    process.stdout.write(text);
    if (text.includes('intent recorded')) child.kill('SIGKILL');
  });
  await new Promise((resolve) => child.on('close', resolve));
  console.log('— killed (SIGKILL). Second process: resumes');
  await agent(new FileStore(dir), 'pay-inv-9', { slow: false });
}
