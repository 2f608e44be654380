// Builds large benchmark journals quickly: the journal directory comes from `store.create` (so its
// metadata is the store's own), and the bucket lines are sealed here with a small JCS serializer for the
// generator's plain data, then written in big sequential writes with no fsync. Nothing trusts this code:
// every journal it builds is checked by the store's own verifier before any figure is taken from it, and
// the store's own append path is measured separately (the "bulk appendMany" figure).
import { createHash, randomUUID } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { makeStep } from './steps.mjs';

/** RFC 8785 for the generator's data: plain objects, arrays, strings, finite numbers, booleans, null. */
function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + jcs(v[i]);
    return s + ']';
  }
  const keys = Object.keys(v).sort();
  let s = '{';
  for (let i = 0; i < keys.length; i++) s += (i ? ',' : '') + JSON.stringify(keys[i]) + ':' + jcs(v[keys[i]]);
  return s + '}';
}

const bucketName = (seq) => `${String(seq).padStart(16, '0')}.jsonl`;

/**
 * Appends `n` generated steps (seed `seed`; the last one from `lastSeed`) to the empty journal `id` of
 * `store`, respecting its bucket size. Returns steps per second.
 */
export async function fastFill(store, id, n, { seed = 1, lastSeed = seed, genesisHash } = {}) {
  const journal = await store.create(id, { createdAt: '2026-01-01T00:00:00.000Z', journalId: `bench-${id}` });
  const bucketBytes = journal.config.segmentBytes;
  await journal.close();
  const dir = join(store.root, id, 'buckets');
  const t0 = performance.now();
  let prev = genesisHash(journal.genesis);
  let fd = -1;
  let size = 0;
  let parts = [];
  let held = 0;
  const flush = () => {
    if (held > 0) writeSync(fd, Buffer.concat(parts));
    parts = [];
    held = 0;
  };
  const ts = '2026-01-01T00:00:01.000Z';
  for (let seq = 0; seq < n; seq++) {
    const step = makeStep(seq, { seed: seq === n - 1 ? lastSeed : seed });
    // Members in UTF-16 order: input, meta, model, prev_hash, prompt, result, seq, [step_hash], step_id, tool_call, ts, v
    const head = `{"input":${jcs(step.input)},"meta":${jcs(step.meta)},"model":${jcs(step.model)},"prev_hash":"${prev}","prompt":${jcs(step.prompt)},"result":${jcs(step.result)},"seq":${seq},`;
    const tail = `"step_id":"${randomUUID()}","tool_call":${jcs(step.tool_call)},"ts":"${ts}","v":1}`;
    const hash = 'sha256:' + createHash('sha256').update(head).update(tail).digest('hex');
    const line = Buffer.from(`${head}"step_hash":"${hash}",${tail}\n`);
    if (fd < 0 || (size > 0 && size + line.length > bucketBytes)) {
      if (fd >= 0) {
        flush();
        closeSync(fd);
      }
      fd = openSync(join(dir, bucketName(seq)), 'wx');
      size = 0;
    }
    parts.push(line);
    held += line.length;
    size += line.length;
    if (held >= 1 << 20) flush();
    prev = hash;
  }
  flush();
  closeSync(fd);
  const ms = performance.now() - t0;
  // Opening for writing repairs the head cache from the chain, as after any crash.
  await (await store.open(id)).close();
  return (n * 1000) / ms;
}
