/**
 * The demo's agent process for the crash stage: starts a run, asks the (simulated) model, records its intent
 * to book a hotel, and then hangs inside the booking, as a process does when it is about to be killed.
 * argv: store root, run id. Prints "intent <effect id>" once the intent is durable.
 */
import { FileStore, startRun } from 'stepchain';

const [root, runId] = process.argv.slice(2) as [string, string];
const run = await startRun(new FileStore(root), {
  runId,
  conversationId: 'trip-planning',
  agent: 'travel-agent',
  labels: { user: 'u-1001', environment: 'demo' },
  input: { task: 'book a hotel in Lyon for 12 March' },
});
const prompt = [{ role: 'user', content: 'Book me a hotel in Lyon for 12 March.' }];
const call = await run.beginModel({ model: 'gpt-4o-2024-08-06', prompt });
await call.complete({
  result: { role: 'assistant', content: null },
  toolCalls: [{ id: 'call_h1', name: 'book_hotel', arguments: { city: 'Lyon', night: '2026-03-12', max_eur: 180 } }],
  usage: { input_tokens: 412n, output_tokens: 38n },
});
const effect = await run.beginTool({
  name: 'book_hotel',
  args: { city: 'Lyon', night: '2026-03-12', max_eur: 180 },
  callId: 'call_h1',
  idempotencyKey: 'trip-42-hotel',
  summary: 'booking a room in Lyon, up to 180 EUR',
});
process.stdout.write(`intent ${effect.id}\n`);
// The booking API is slow; the process is killed before it answers.
await new Promise((resolve) => setTimeout(resolve, 60_000));
