// A TypeScript writer for the cross-language tests: appends `count` steps to the journal `<root>/<id>` through
// the built library (dist/), one awaited append at a time, as an agent does. Prints nothing on success.
import { FileStore } from '../../../dist/index.js';

const [root, id, count, tag] = process.argv.slice(2);
const store = new FileStore(root, { fsync: 'none' });
const journal = await store.open(id);
for (let i = 0; i < Number(count); i++) {
  await journal.append({ input: { writer: tag, i }, model: 'ts', prompt: 'p', tool_call: null, result: `ts ${tag} ${i}` });
}
await journal.close();
