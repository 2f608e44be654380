/**
 * A v3 publication with parts on the verification page's engine (the code the page runs in its worker; Node
 * here): it verifies against the original head, and a rewritten public part file is refused.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { Session } from '../../src/page/engine.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';
import { published } from '../redact/v3-helpers.js';
import { CHAT_POLICY, chatJournal } from '../redact/v3-parts-helpers.js';

const verify = async (bytes: Uint8Array, head: string) => {
  const session = new Session();
  const outcome = await session.verify({ receipt: new Blob([new Uint8Array(bytes)]), name: 'p', expectHead: head });
  return { session, outcome };
};

describe('the page engine on a v3 publication with parts', () => {
  it('verifies it against the original head; a rewritten public part is PART_ADDRESS_MISMATCH', async () => {
    const { bytes, head } = await published(await chatJournal(), CHAT_POLICY);
    const { outcome } = await verify(bytes, head);
    expect(outcome.report.problems).toEqual([]);
    expect(outcome.published).toBe(true);
    const entries = entriesOf(bytes);
    const manifest = JSON.parse(Buffer.from(entries[0]!.data).toString('utf8')) as {
      parts: Array<{ address: string; digest: string; size: number }>;
    };
    const victim = entries.find(
      (e) => e.name.startsWith('parts/') && Buffer.from(e.data).toString('utf8').includes('"page 1 '),
    )!;
    const data = text(Buffer.from(victim.data).toString('utf8').replace('page 1 ', 'page 7 '));
    const listed = manifest.parts.find((p) => victim.name.endsWith(p.address.slice(7)))!;
    Object.assign(listed, { digest: 'sha256:' + createHash('sha256').update(data).digest('hex'), size: data.length });
    const forged = tarOf(
      entries.map((e) =>
        e.name === 'manifest.json' ? { ...e, data: text(canonicalJson(manifest)) } : e === victim ? { ...e, data } : e,
      ),
    );
    const bad = await verify(forged, head);
    expect(bad.outcome.report.ok).toBe(false);
    expect(bad.outcome.report.problems.map((p) => p.code)).toContain('PART_ADDRESS_MISMATCH');
  });
});
