/**
 * `stepchain mcp` recording into Postgres (the run's embedded server): a location without ?journal= is a
 * store, one run per session, named on standard error; the run is read, listed and verified there.
 */
import { describe, expect, inject, test } from 'vitest';
import { CLI, runNode } from '../hardening/support.js';
import { connect, proxied } from './support.js';

const server = new URL(inject('pgUrl'));
const password = decodeURIComponent(server.password);
const schema = `mcptest_${process.pid}`;
function at(journal?: string): string {
  const u = new URL(server.toString());
  u.password = '';
  if (journal !== undefined) u.searchParams.set('journal', journal);
  u.searchParams.set('schema', schema);
  return u.toString();
}
const cli = (args: string[]) => runNode([CLI, ...args], { timeoutMs: 120_000, env: { PGPASSWORD: password } });

describe('stepchain mcp on Postgres', () => {
  test('a store location: the session is a run of its own, named on standard error, whose calls are recorded and verify', async () => {
    const s = await connect(proxied(at()), { PGPASSWORD: password });
    await s.client.callTool({ name: 'echo', arguments: { text: 'to postgres' } });
    await s.client.callTool({ name: 'fail', arguments: { why: 'pg' } });
    await s.waitForStderr('recording this session as run mcp-');
    const runId = /as run (mcp-\S+)/.exec(s.stderr())![1]!;
    await s.client.close();
    let list: { effects: Array<{ tool: string; status: string; arguments: unknown }> } | undefined;
    for (;;) {
      const r = await cli(['effect', 'list', at(runId), '--json']);
      list = JSON.parse(r.stdout);
      const runs = await cli(['log', at(runId), '--json']);
      if ((JSON.parse(runs.stdout) as { steps: Array<{ kind: string }> }).steps.some((x) => x.kind === 'run.completed'))
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(list!.effects.map((e) => [e.tool, e.status, e.arguments])).toEqual([
      ['echo', 'completed', { text: 'to postgres' }],
      ['fail', 'failed', { why: 'pg' }],
    ]);
    const verified = await cli(['verify', at(runId)]);
    expect(verified.code, verified.stderr).toBe(0);
  }, 180_000);
});
