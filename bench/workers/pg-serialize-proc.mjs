// One writer of the serialization comparison in `npm run bench:postgres` (spec/POSTGRES.md §6): raw SQL
// on one connection, no stepchain code, so that only the way writers are serialized differs. Each append
// reads the tail, chains a SHA-256 over it (as sealing does) and inserts one ~1.5 KB line.
// argv: strategy(rowlock|advisory|advisory-head|optimistic) schema ms. Reports { done, retries, ms }.
import { createHash } from 'node:crypto';
import pg from 'pg';

const [strategy, schema, msArg] = process.argv.slice(2);
const ms = Number(msArg);
const client = new pg.Client({ connectionString: process.env.STEPCHAIN_PG_URL });
client.on('error', () => {});
await client.connect();
const s = `"${schema}"`;
const payload = 'x'.repeat(1400);
const seal = (prev, seq) => createHash('sha256').update(`${prev}|${seq}|${payload}`).digest('hex');

async function insert(seq, hash) {
  await client.query(`INSERT INTO ${s}.steps (journal, seq, hash, line) VALUES (1, $1, $2, $3)`, [seq, hash, `{"seq":${seq},"h":"${hash}","p":"${payload}"}`]);
}

const append = {
  async rowlock() {
    await client.query('BEGIN');
    const h = (await client.query(`SELECT head_seq, head_hash FROM ${s}.journals WHERE key = 1 FOR UPDATE`)).rows[0];
    const seq = Number(h.head_seq) + 1;
    const hash = seal(h.head_hash, seq);
    await insert(seq, hash);
    await client.query(`UPDATE ${s}.journals SET head_seq = $1, head_hash = $2 WHERE key = 1`, [seq, hash]);
    await client.query('COMMIT');
    return 0;
  },
  async 'advisory-head'() {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(42, 1)');
    const h = (await client.query(`SELECT head_seq, head_hash FROM ${s}.journals WHERE key = 1`)).rows[0];
    const seq = Number(h.head_seq) + 1;
    const hash = seal(h.head_hash, seq);
    await insert(seq, hash);
    await client.query(`UPDATE ${s}.journals SET head_seq = $1, head_hash = $2 WHERE key = 1`, [seq, hash]);
    await client.query('COMMIT');
    return 0;
  },
  async advisory() {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(42, 2)');
    const last = (await client.query(`SELECT seq, hash FROM ${s}.steps WHERE journal = 1 ORDER BY seq DESC LIMIT 1`)).rows[0];
    const seq = last === undefined ? 0 : Number(last.seq) + 1;
    await insert(seq, seal(last?.hash ?? 'genesis', seq));
    await client.query('COMMIT');
    return 0;
  },
  async optimistic() {
    for (let retries = 0; ; retries++) {
      await client.query('BEGIN');
      const last = (await client.query(`SELECT seq, hash FROM ${s}.steps WHERE journal = 1 ORDER BY seq DESC LIMIT 1`)).rows[0];
      const seq = last === undefined ? 0 : Number(last.seq) + 1;
      try {
        await insert(seq, seal(last?.hash ?? 'genesis', seq));
        await client.query('COMMIT');
        return retries;
      } catch (e) {
        await client.query('ROLLBACK');
        if (e.code !== '23505') throw e;
      }
    }
  },
}[strategy];

process.send({ ready: true });
await new Promise((resolve) => process.once('message', resolve));
let done = 0;
let retries = 0;
const t0 = performance.now();
while (performance.now() - t0 < ms) {
  retries += await append();
  done++;
}
const elapsed = performance.now() - t0;
await client.end();
process.send({ done, retries, ms: elapsed });
process.disconnect();
