/**
 * Publishing a stepchain/v3 journal after an erasure (REDACTION.md §13.12; ERASURE.md): the erased value is
 * shown as erased — neither a proven value nor withheld by the publisher — and bound to the erasure record in
 * the same chain; everything else is proven against the original head. Attacks: text invented where the
 * value was erased, an erased marker turned into a withheld one, a withheld unit relabelled as erased, a
 * sealed record's private keys carried into the publication.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { eraseValue } from '../../src/erase/file.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { FileStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { editRecord, published, reforge } from './v3-helpers.js';

const EMAIL = 'alice@example.org';
const POLICY = compilePolicy({ rules: [{ id: 'plan', paths: ['/result/plan'] }] });
let made: Awaited<ReturnType<typeof published>>;

beforeAll(async () => {
  const store = new FileStore(mkdtempSync(join(tempDir('stepchain-v3-erased-pub-'), 's-')), { fsync: 'none' });
  const j = await store.create('r', { format: 'stepchain/v3' } as never);
  await j.append({
    input: { customer: 'c-17' },
    result: { email: EMAIL, plan: 'pro', notes: ['vip', EMAIL] },
  } as never);
  await j.append({ input: { q: 'next' }, result: { ok: true } } as never);
  await j.close();
  await eraseValue(store, 'r', {
    seq: 0,
    path: '/result/email',
    reason: 'GDPR Art. 17 request #118',
    by: 'dpo@example.org',
  });
  await eraseValue(store, 'r', { seq: 0, path: '/result/notes/1', reason: 'GDPR Art. 17 request #118' });
  const journal = await store.open('r');
  made = await published(journal, POLICY);
  await journal.close();
}, 120_000);

const codes = (r: { problems: Array<{ code: string }> }): string[] => r.problems.map((p) => p.code);

describe('publishing a v3 journal with erased values', () => {
  it('verifies against the original head; the erased values are shown as erased and reported erased, the rest proven', async () => {
    const r = await verifyPublishedReceipt(made.bytes, { expectHead: made.head });
    expect(r.problems).toEqual([]);
    const rec = JSON.parse(made.pub.lines[0]!) as Record<string, any>;
    expect(rec.result['$stepchain:erased']).toHaveLength(1);
    expect(rec.result.notes[0]).toBe('vip');
    expect(rec.result.notes[1]['$stepchain:erased'].erasure).toMatch(/^erasure:0:/);
    expect(rec.result['$stepchain:withheld']).toHaveLength(1); // plan: withheld by the publisher
    expect(rec).not.toHaveProperty('keys');
    expect(rec).not.toHaveProperty('salts');
    expect(Buffer.from(made.bytes).toString('latin1')).not.toContain(EMAIL);
    expect(r.warnings.filter((w) => w.code === 'VALUE_ERASED')).toHaveLength(2);
    expect(r.proves.join(' ')).toMatch(/2 values were erased/);
  });

  it('refuses text invented where a value was erased', async () => {
    const forged = reforge(made.bytes, (lines) =>
      editRecord(lines, 0, (x) => {
        x.result.notes[1] = 'mallory@example.org';
      }),
    );
    const r = await verifyPublishedReceipt(forged, { expectHead: made.head });
    expect(r.ok).toBe(false);
    expect(codes(r)).toEqual(expect.arrayContaining([expect.stringMatching(/SECRETS_INVALID|ROOT_MISMATCH/)]));
  });

  it('an erased value relabelled as withheld needs a declaration, and leaves its erasure record unmatched', async () => {
    const forged = reforge(made.bytes, (lines) =>
      editRecord(lines, 0, (x) => {
        x.result.notes[1] = { '$stepchain:withheld': x.result.notes[1]['$stepchain:erased'].digest };
      }),
    );
    const r = await verifyPublishedReceipt(forged, { expectHead: made.head });
    expect(r.ok).toBe(false);
    expect(codes(r)).toContain('REDACTION_UNDECLARED');
  });

  it('a withheld value relabelled as erased names no erasure record: ERASURE_UNRECORDED', async () => {
    const forged = reforge(made.bytes, (lines, m) => {
      editRecord(lines, 0, (x) => {
        const d = x.result['$stepchain:withheld'][0];
        delete x.result['$stepchain:withheld'];
        x.result['$stepchain:erased'] = [
          ...x.result['$stepchain:erased'],
          { digest: d, erasure: x.result['$stepchain:erased'][0].erasure },
        ].sort((a: any, b: any) => (a.digest < b.digest ? -1 : 1));
      });
      m.redactions = [];
    });
    const r = await verifyPublishedReceipt(forged, { expectHead: made.head });
    expect(r.ok).toBe(false);
    expect(codes(r)).toContain('ERASURE_UNRECORDED');
  });
});

describe('the page engine on a publication with erased values', () => {
  it('verifies it and renders an erased unit as erased, a withheld one as withheld, the rest as text', async () => {
    const { Session } = await import('../../src/page/engine.js');
    const { segmentsText } = await import('../../src/page/summary.js');
    const session = new Session();
    const outcome = await session.verify({
      receipt: new Blob([new Uint8Array(made.bytes)]),
      name: 'p',
      expectHead: made.head,
    });
    expect(outcome.report.problems).toEqual([]);
    expect(segmentsText(session.rows(0, 1)[0]!.result)).toBe('{"notes": ["vip", [erased]], [withheld], [erased]}');
  });
});

describe('stepchain verify (the built CLI) on a publication with erased values', () => {
  it('exits 0 against the original head and says which values were erased, in text and in --json', async () => {
    const { writeFileSync } = await import('node:fs');
    const { run } = await import('./outsider.js');
    const dir = tempDir('stepchain-v3-erased-cli-');
    writeFileSync(join(dir, 'public.tar'), made.bytes);
    const text = await run(['verify', 'public.tar', '--head', made.head], dir);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toMatch(/VALUE_ERASED/);
    expect(text.stderr).toMatch(/2 values were erased/);
    const json = await run(['verify', 'public.tar', '--head', made.head, '--json'], dir);
    const report = JSON.parse(json.stdout).report ?? JSON.parse(json.stdout);
    expect(report.warnings.filter((w: { code: string }) => w.code === 'VALUE_ERASED')).toHaveLength(2);
  }, 60_000);
});
