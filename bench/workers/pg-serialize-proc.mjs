// One writer of the serialization comparison in `npm run bench:postgres` (spec/POSTGRES.md §6): raw SQL
// on one connection, no stepchain code, so that only the way writers are serialized differs. Each append
// reads the tail, chains a SHA-256 over it (as sealing does) and inserts one ~1.5 KB line.
// argv: strategy(rowlock|advisory|advisory-head|optimistic|staged) schema ms. Reports { done, retries, ms }.
//
// 'staged' models the design of issue 45 (separate acceptance from chaining, as Tessera does): the writer
// inserts its line into a staging table with synchronous_commit off (no WAL flush of its own), then tries
// the journal's sequencer lock in a transaction of its own (pg_try_advisory_xact_lock); whoever gets it
// chains every staged line it sees, in staging order, into steps, deletes them from staging and commits
// (synchronous_commit on: one WAL flush for the whole batch, and since the WAL is flushed in order, the
// staging inserts before it with it), then NOTIFYs. A writer that did not get the lock waits for a
// notification (or 20 ms) and looks again. An append counts once its line is in steps and that commit is
// durable: what a writer resolves on. 'retries' counts the sequencing turns a writer took for others.
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
  await client.query(`INSERT INTO ${s}.steps (journal, seq, hash, line) VALUES (1, $1, $2, $3)`, [
    seq,
    hash,
    `{"seq":${seq},"h":"${hash}","p":"${payload}"}`,
  ]);
}

let staged = null;
if (strategy === 'staged') {
  await client.query(`LISTEN ${schema}_chained`);
  client.on('notification', () => staged?.wake());
}

const append = {
  async staged() {
    let wake;
    const woken = () =>
      new Promise((resolve) => {
        wake = resolve;
        setTimeout(resolve, 20);
      });
    staged = { wake: () => wake?.() };
    await client.query('BEGIN');
    await client.query('SET LOCAL synchronous_commit = off');
    const id = (await client.query(`INSERT INTO ${s}.staging (journal, line) VALUES (1, $1) RETURNING id`, [payload]))
      .rows[0].id;
    await client.query('COMMIT');
    let turns = 0;
    for (;;) {
      const next = woken();
      await client.query('BEGIN');
      const got = (await client.query('SELECT pg_try_advisory_xact_lock(42, 3) AS got')).rows[0].got;
      if (got) {
        turns++;
        const h = (await client.query(`SELECT head_seq, head_hash FROM ${s}.journals WHERE key = 1`)).rows[0];
        const batch = (await client.query(`SELECT id, line FROM ${s}.staging WHERE journal = 1 ORDER BY id LIMIT 2000`))
          .rows;
        let seq = Number(h.head_seq);
        let hash = h.head_hash;
        const seqs = [],
          hashes = [],
          lines = [],
          ids = [];
        for (const row of batch) {
          seq++;
          hash = seal(hash, seq);
          seqs.push(seq);
          hashes.push(hash);
          lines.push(`{"seq":${seq},"h":"${hash}","p":"${row.line}"}`);
          ids.push(row.id);
        }
        if (ids.length > 0) {
          await client.query(
            `INSERT INTO ${s}.steps (journal, seq, hash, line, staged) SELECT 1, * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[])`,
            [seqs, hashes, lines, ids],
          );
          await client.query(`UPDATE ${s}.journals SET head_seq = $1, head_hash = $2 WHERE key = 1`, [seq, hash]);
          await client.query(`DELETE FROM ${s}.staging WHERE id = ANY($1::bigint[])`, [ids]);
          await client.query(`NOTIFY ${schema}_chained`);
        }
      }
      await client.query('COMMIT');
      // Chained once its staging row is gone (the sequencer deletes it in the commit that chains it).
      const left = (await client.query(`SELECT 1 FROM ${s}.staging WHERE id = $1`, [id])).rowCount;
      if (left === 0) return turns;
      if (!got) await next;
    }
  },
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
    const last = (await client.query(`SELECT seq, hash FROM ${s}.steps WHERE journal = 1 ORDER BY seq DESC LIMIT 1`))
      .rows[0];
    const seq = last === undefined ? 0 : Number(last.seq) + 1;
    await insert(seq, seal(last?.hash ?? 'genesis', seq));
    await client.query('COMMIT');
    return 0;
  },
  async optimistic() {
    for (let retries = 0; ; retries++) {
      await client.query('BEGIN');
      const last = (await client.query(`SELECT seq, hash FROM ${s}.steps WHERE journal = 1 ORDER BY seq DESC LIMIT 1`))
        .rows[0];
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
