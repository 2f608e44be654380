// A TypeScript publisher for the cross-language test of REDACTION.md §13.12: a stepchain/v3 journal of two steps,
// /result/email and /result/notes/1 of seq 0 erased (ERASURE.md), published with /result/plan withheld, through
// the built library (dist/). Writes <out>/pub.tar and <out>/head (the original head).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileStore } from '../../../dist/store/index.js';
import { eraseValue } from '../../../dist/erase/file.js';
import { compilePolicy } from '../../../dist/redact/policy.js';
import { planV3Publication } from '../../../dist/redact/v3-publish.js';
import { writeReceipt } from '../../../dist/receipt/writer.js';

const [out] = process.argv.slice(2);
const store = new FileStore(mkdtempSync(join(out, 'store-')), { fsync: 'none' });
const j = await store.create('r', { format: 'stepchain/v3' });
await j.append({ input: { customer: 'c-17' }, result: { email: 'alice@example.org', plan: 'pro', notes: ['vip', 'alice@example.org'] } });
await j.append({ input: { q: 'next' }, result: { ok: true } });
await j.close();
await eraseValue(store, 'r', { seq: 0, path: '/result/email', reason: 'GDPR Art. 17 request #118', by: 'dpo@example.org' });
await eraseValue(store, 'r', { seq: 0, path: '/result/notes/1', reason: 'GDPR Art. 17 request #118' });
const journal = await store.open('r');
const pub = await planV3Publication(journal, { policy: compilePolicy({ rules: [{ id: 'plan', paths: ['/result/plan'] }] }) });
const chunks = [];
for await (const c of writeReceipt(pub.plan)) chunks.push(Buffer.from(c));
writeFileSync(join(out, 'pub.tar'), Buffer.concat(chunks));
writeFileSync(join(out, 'head'), (await journal.head()).step_hash);
await journal.close();
