/**
 * An outsider's attacks on a published stepchain/v3 receipt with parts (REDACTION.md §13.10), each with every
 * manifest digest and size recomputed so the archive is consistent: rewrite text a public part shows, swap two
 * parts, put invented text where a chunk was withheld (without and with a made-up salt), drop a part's
 * declaration, add members to a public reference; and, for any single changed byte of any public part file,
 * verification against the original head fails. None makes the verifier throw.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';
import { EMAIL, editRecord, published, reforge } from '../redact/v3-helpers.js';
import { chatJournal } from '../redact/v3-parts-helpers.js';

const sha = (b: Uint8Array): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
const codes = (r: { problems: Array<{ code: string }> }): string[] => r.problems.map((p) => p.code);
const POLICY = compilePolicy({ rules: [{ id: 'secrets', detectors: ['email'] }] });

/** Edits part entries (by name → bytes), then lists each part's digest and size in the manifest again. */
function reforgeParts(
  bytes: Uint8Array,
  edit: (parts: Map<string, Uint8Array>, manifest: Record<string, any>) => void,
): Uint8Array {
  const entries = entriesOf(bytes);
  const manifest = JSON.parse(Buffer.from(entries[0]!.data).toString('utf8')) as Record<string, any>;
  const parts = new Map(
    entries.filter((e) => e.name.startsWith('parts/')).map((e) => [e.name, Uint8Array.from(e.data)]),
  );
  edit(parts, manifest);
  for (const p of manifest.parts as Array<{ address: string; digest: string; size: number }>) {
    const b = parts.get(`parts/${p.address.slice(7)}`);
    if (b) Object.assign(p, { digest: sha(b), size: b.length });
  }
  const out = entries
    .filter((e) => e.name !== 'manifest.sig.json')
    .map((e) =>
      e.name === 'manifest.json'
        ? { ...e, data: text(canonicalJson(manifest, { refuseReserved: false })) }
        : e.name.startsWith('parts/')
          ? { ...e, data: parts.get(e.name)! }
          : e,
    );
  return tarOf(out);
}

const asText = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

let made: Awaited<ReturnType<typeof published>>;
/** The part holding the withheld chunk, and a part that shows plain text. */
let secretPart: string;
let plainPart: string;

beforeAll(async () => {
  made = await published(await chatJournal(), POLICY);
  const entries = entriesOf(made.bytes).filter((e) => e.name.startsWith('parts/'));
  secretPart = entries.find((e) => asText(e.data).includes('$stepchain:withheld'))!.name;
  plainPart = entries.find((e) => asText(e.data).includes('"page 1 '))!.name;
});

describe('outsider attacks on a published v3 receipt with parts', () => {
  it('the untouched publication verifies against the original head', async () => {
    expect((await verifyPublishedReceipt(made.bytes, { expectHead: made.head })).problems).toEqual([]);
  });

  it('rewriting text a public part shows is PART_ADDRESS_MISMATCH at that part', async () => {
    const forged = reforgeParts(made.bytes, (parts) =>
      parts.set(plainPart, text(asText(parts.get(plainPart)!).replace('page 1 ', 'page 9 '))),
    );
    const r = await verifyPublishedReceipt(forged, { expectHead: made.head });
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          code: 'PART_ADDRESS_MISMATCH',
          location: expect.objectContaining({ file: plainPart }),
        }),
      ]),
    );
  });

  it('swapping two public parts is refused at each', async () => {
    const names = entriesOf(made.bytes)
      .filter((e) => e.name.startsWith('parts/'))
      .map((e) => e.name);
    const [a, b] = [names[0]!, names[1]!];
    const forged = reforgeParts(made.bytes, (parts) => {
      const x = parts.get(a)!;
      parts.set(a, parts.get(b)!);
      parts.set(b, x);
    });
    const r = await verifyPublishedReceipt(forged, { expectHead: made.head });
    expect(r.ok).toBe(false);
    expect(codes(r).filter((c) => c === 'PART_ADDRESS_MISMATCH' || c === 'PART_CORRUPT').length).toBeGreaterThanOrEqual(
      2,
    );
  });

  it('invented text where a chunk was withheld is refused at that part, without a salt for it and with a made-up one', async () => {
    const replace = (withSalt: boolean) =>
      reforgeParts(made.bytes, (parts) => {
        const f = JSON.parse(asText(parts.get(secretPart)!)) as Record<string, any>;
        const s = JSON.stringify(f.value ?? f.tail);
        const forged = JSON.parse(
          s.replace(
            /\{"\$stepchain:withheld":"sha256:[0-9a-f]{64}"\}/,
            '"Please write to mallory@example.org with the summary."',
          ),
        );
        // A chunk list with nothing withheld is no chunk list: the outsider joins it into one string.
        const join = (v: any): any =>
          v && typeof v === 'object'
            ? Array.isArray(v)
              ? v.map(join)
              : '$stepchain:chunks' in v && v['$stepchain:chunks'].every((c: unknown) => typeof c === 'string')
                ? v['$stepchain:chunks'].join('')
                : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, join(x)]))
            : v;
        if ('value' in f) f.value = join(forged);
        else f.tail = join(forged);
        if (withSalt)
          f.secrets.salts = Buffer.concat([Buffer.from(f.secrets.salts, 'base64url'), Buffer.alloc(16, 7)]).toString(
            'base64url',
          );
        parts.set(secretPart, text(canonicalJson(f, { refuseReserved: false })));
      });
    for (const withSalt of [false, true]) {
      const r = await verifyPublishedReceipt(replace(withSalt), { expectHead: made.head });
      expect(r.ok).toBe(false);
      // Salts one short or re-chunked text that no longer lines up with them: PART_CORRUPT or PART_ADDRESS_MISMATCH.
      expect(r.problems).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            code: expect.stringMatching(/^PART_(CORRUPT|ADDRESS_MISMATCH)$/),
            location: expect.objectContaining({ file: secretPart }),
          }),
        ]),
      );
    }
  });

  it("a part's declaration dropped: REDACTION_UNDECLARED at the part", async () => {
    const forged = reforgeParts(made.bytes, (_, m) => {
      m.redactions = (m.redactions as Array<Record<string, unknown>>).filter((d) => !('part' in d));
    });
    const r = await verifyPublishedReceipt(forged, { expectHead: made.head });
    expect(r.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          code: 'REDACTION_UNDECLARED',
          location: expect.objectContaining({ file: secretPart }),
        }),
      ]),
    );
  });

  it('a public reference given the private file digest and size beside its address is MARKER_INVALID', async () => {
    const seq = made.pub.lines.findIndex((l) => l.includes('"$stepchain:part"'));
    const forged = reforge(made.bytes, (lines) =>
      editRecord(lines, seq, (r) => {
        const s = JSON.stringify(r).replace(
          /\{"\$stepchain:part":\{"digest":("sha256:[0-9a-f]{64}")\}\}/,
          '{"$stepchain:part":{"digest":$1,"size":12}}',
        );
        Object.assign(r, JSON.parse(s));
      }),
    );
    const r = await verifyPublishedReceipt(forged, { expectHead: made.head });
    expect(r.ok).toBe(false);
    expect(codes(r)).toContain('MARKER_INVALID');
  });

  it('the withheld e-mail address, its salt and every part seed appear nowhere in the public bytes', () => {
    const all = Buffer.from(made.bytes).toString('latin1');
    expect(all).not.toContain(EMAIL);
    for (const e of entriesOf(made.bytes).filter((x) => x.name.startsWith('parts/')))
      expect(asText(e.data)).not.toContain('"seed"');
    for (const w of made.pub.withheld) expect(all).not.toContain(Buffer.from(w.salt).toString('base64url'));
  });

  it('any single changed byte of any public part file fails against the original head', async () => {
    const names = entriesOf(made.bytes)
      .filter((e) => e.name.startsWith('parts/'))
      .map((e) => e.name);
    await fc.assert(
      fc.asyncProperty(
        fc.nat(names.length - 1),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (which, at, delta) => {
          const name = names[which]!;
          const forged = reforgeParts(made.bytes, (parts) => {
            const b = Uint8Array.from(parts.get(name)!);
            const pos = at % b.length;
            b[pos] = (b[pos]! + delta) % 256;
            parts.set(name, b);
          });
          const r = await verifyPublishedReceipt(forged, { expectHead: made.head });
          expect(r.ok).toBe(false);
        },
      ),
      { numRuns: Number(process.env.V3_PROPERTY_RUNS ?? 40) },
    );
  });
});
