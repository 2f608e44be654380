/**
 * A reader guessing redacted values (issue 8, SECURITY.md §2.4): a published receipt of a journal whose
 * steps all hold the same low-entropy value must not let a reader link equal values or test guesses. Each
 * redaction gets its own fresh 32-byte salt (spec/REDACTION.md §5.3), the salts never appear in the public
 * bytes, and a guess checked without the salt matches nothing; with the salt (a disclosure) it does.
 */
import { describe, expect, test } from 'vitest';
import { FileStore } from '../../src/store/index.js';
import { commitment, preparePublication, publicationBytes, saltToHex, verifyPublishedReceipt } from '../../src/redact/index.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-redaction-');

describe('a reader guessing redacted values', () => {
  test('commitments to one low-entropy value under fresh salts are all different, and the salts appear nowhere in the published bytes', async () => {
    const j = await new FileStore(root, { fsync: 'none' }).create('answers');
    for (let i = 0; i < 12; i++) await j.append({ input: { question: `q${i}` }, result: { consent: 'yes' } });
    const pub = await preparePublication(j, { policy: { rules: [{ id: 'consent', paths: ['/result/consent'] }] }, optIn: true });
    const bytes = await publicationBytes(pub);
    await j.close();

    expect(pub.redactions.length).toBe(12);
    const commitments = pub.redactions.map((r) => r.commitment);
    expect(new Set(commitments).size).toBe(12);
    const salts = pub.redactions.map((r) => saltToHex(r.salt));
    expect(new Set(salts).size).toBe(12);

    const text = Buffer.from(bytes).toString('latin1');
    for (const s of salts) {
      expect(text).not.toContain(s);
      expect(text).not.toContain(Buffer.from(s, 'hex').toString('base64'));
    }
    expect(text).not.toContain('"yes"');

    // A dictionary of guesses with any salt the reader could know (none, zeros, the step's own hashes)
    // matches no published commitment; the true salt does.
    const guesses = ['yes', 'no', 'true', 'false', '', 'y', 'n'];
    const knowable = [new Uint8Array(32), new Uint8Array(32).fill(0xff)];
    for (const g of guesses) for (const s of knowable) expect(commitments).not.toContain(commitment(s, g));
    pub.redactions.forEach((r) => expect(commitment(r.salt, 'yes')).toBe(r.commitment));

    const report = await verifyPublishedReceipt(bytes);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });
});
