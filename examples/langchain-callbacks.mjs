// Record a LangChain.js tool-calling agent as a stepchain run through a callback handler: no change to
// the agent. A scripted fake model stands in for a real one. Run: node examples/langchain-callbacks.mjs [dir]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { FileStore } from 'stepchain';
import { StepchainCallbackHandler } from 'stepchain/langchain';

const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'stepchain-langchain-'));
const recorder = new StepchainCallbackHandler({ store: new FileStore(join(dir, 'runs')), agent: 'weather' });

const weather = tool(async ({ city }) => `${city}: 21C`, {
  name: 'weather',
  description: 'weather',
  schema: z.object({ city: z.string() }),
});
const model = fakeModel()
  .respondWithTools([{ name: 'weather', args: { city: 'Paris' }, id: 'call-1' }])
  .respond(new AIMessage('It is 21C in Paris.'));
const agent = createAgent({ model, tools: [weather] });
await agent.invoke({ messages: [new HumanMessage('Weather in Paris?')] }, { callbacks: [recorder] });

const [run] = await recorder.runs();
for await (const r of run.journal.read()) console.log(r.seq, r.kind, r.kind.startsWith('tool') ? r.tool_call.name : '');
console.log('effects:', (await run.effects()).map((e) => `${e.tool} ${e.status}`).join(', '));
console.log('verified:', (await run.journal.verify()).ok);
