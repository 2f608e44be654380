// The built CLI as a server of invocations, over the IPC channel of its parent (test/helpers/cli-batch.ts
// cliServer): each message {id, call} is run in this process (cli-call.mjs), one at a time in the order
// received, and answered {id, result}. For tests whose next arguments depend on the last answer.
import { runCall } from './cli-call.mjs';

let queue = Promise.resolve();
process.on('message', (message) => {
  queue = queue.then(async () => {
    const result = await runCall(message.call);
    process.send({ id: message.id, result });
  });
});
process.on('disconnect', () => process.exit(0));
