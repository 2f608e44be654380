/** The README's "Crash-safe agents" example runs as documented: killed mid-tool, then resumed (real processes, dist/). */
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { runNode } from '../hardening/support.js';
import { tempDir } from '../helpers/tmp.js';

test('examples/crash-safe-agent.mjs: the second process lists the effect whose outcome is unknown and finishes the run', async () => {
  const r = await runNode([fileURLToPath(new URL('../../examples/crash-safe-agent.mjs', import.meta.url))], {
    timeoutMs: 60_000,
    // The journal the example makes in the OS temp dir, as a user's would, goes with this file's directories.
    env: { TMPDIR: tempDir('crash-safe-agent-tmp-') },
  });
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trimEnd().split('\n');
  expect(lines[0]).toBe('— first process: starts the run, is killed while paying');
  expect(lines).toContain('— killed (SIGKILL). Second process: resumes');
  const unknown = lines.filter((l) =>
    l.startsWith('outcome unknown: pay_invoice {"eur":120,"invoice":"INV-9"} (seq 3, key pay-inv-9-pay_invoice)'),
  );
  expect(unknown).toHaveLength(1);
  expect(lines).toContain('resuming from seq 4 (5 records)');
  expect(lines[lines.length - 1]).toBe('Done: the invoice is paid.');
}, 90_000);
