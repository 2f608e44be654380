// Makes V8's code cache of the agent verbs' bundle (dist/cli/agent/main.cjs.cache; src/cli/agent-load.ts
// says why): loads the bundle as `stepchain` does, runs what an agent runs — `append` of one step,
// `effect begin`, `effect end` — on a scratch run journal, then keeps the code V8 compiled, the functions
// compiled on their first call included, so a start deserializes them instead of compiling. Run by
// scripts/build-cli.mjs after the bundle, in a process of its own with Node's default flags (V8 takes a
// cache only under the flags that made it). Prints one line about the cache.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { devNull, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { loadAgent, AGENT_CACHE } = await import(`${root}dist/cli/agent-load.js`);

rmSync(AGENT_CACHE, { force: true });
const scratch = mkdtempSync(join(tmpdir(), 'stepchain-agent-cache-'));
try {
  const journal = join(scratch, 'run');
  const init = spawnSync(process.execPath, [join(root, 'dist/cli/main.js'), 'init', journal, '--run'], {
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`stepchain init --run: ${init.stderr}`);
  const step = join(scratch, 'step.json');
  writeFileSync(
    step,
    JSON.stringify({ input: { q: 'warm' }, model: 'm', prompt: null, tool_call: null, result: { ok: true } }),
  );
  const { module, script } = loadAgent();
  // What these print is not wanted here (stdout and stderr are this process's, read by the build): they
  // write on a descriptor of the null device, through the same code as on 1 and 2 (src/cli/agent-io.ts).
  const sink = openSync(devNull, 'w');
  const io = module.descriptorOutputs(sink, sink);
  const codes = [];
  try {
    // Twice each, and with --json: a journal's first write finds no tree state, no tail to read and no
    // effects, which every later one does; functions first called there would compile at each start.
    for (const round of [1, 2]) {
      const json = round === 2 ? ['--json'] : [];
      codes.push(await module.runAgent(['append', journal, '--file', step, ...json], io));
      codes.push(
        await module.runAgent(
          ['effect', 'begin', journal, '--tool', 'warm', '--args', `{"n":${round}}`, '--id', `warm-${round}`, ...json],
          io,
        ),
      );
      codes.push(
        await module.runAgent(['effect', 'end', journal, `warm-${round}`, '--result', '{"ok":true}', ...json], io),
      );
    }
  } finally {
    closeSync(sink);
  }
  if (codes.some((c) => c !== 0)) throw new Error(`the warm-up commands exited ${codes.join(', ')}`);
  const data = script.createCachedData();
  writeFileSync(AGENT_CACHE, data);
  console.log(`V8 code cache ${(data.length / 1024).toFixed(0)} KiB (Node ${process.version})`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
