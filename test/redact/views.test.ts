/**
 * Issue 32, in the library: redacted views and the text nothing binds to the head (REDACTION §12.2, §12.5
 * steps 2 and 6). The attacks an outsider can make on publication bytes — markers in odd places, views in
 * unexpected members, malformed markers standing in for real ones, a view of a blob reference — each refused
 * or reported as unbound; a v1 publication's marker texts listed as unbound; and the property: for generated
 * journals and policies, changing any byte of any disclosed (salted, non-view) value of a publication, with
 * the manifest's digest recomputed, fails verification against the original head.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { scanCanonical } from '../../src/canonical/scan.js';
import { digestBytes } from '../../src/canonical/sha256.js';
import { concatBytes } from '../../src/bytes.js';
import type { Json, StepInput } from '../../src/record/index.js';
import { slotDigest } from '../../src/record/commitments.js';
import { writeReceipt } from '../../src/receipt/writer.js';
import { planCommittedPublication, type CommittedPublication } from '../../src/redact/commit-publish.js';
import { commitment, saltToHex, seededSalts } from '../../src/redact/commit.js';
import { verifyDisclosure } from '../../src/redact/disclose.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { planPublication } from '../../src/redact/publish.js';
import { MAX_UNBOUND_LISTED, verifyPublishedReceipt } from '../../src/redact/verify.js';
import { Output } from '../../src/cli/output.js';
import { unboundLines } from '../../src/cli/unbound.js';
import { MemoryStore } from '../../src/store/index.js';
import * as arb from '../../src/testing/arbitraries.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';
import { CREATED_AT, SAMPLE_POLICY, memoryJournal, sampleSteps } from './helpers.js';
import { run } from './outsider.js';
import { tempDir } from '../helpers/tmp.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = tempDir('stepchain-views-');

async function bytesOf(plan: CommittedPublication['plan']): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of writeReceipt(plan)) parts.push(Uint8Array.from(chunk));
  return concatBytes(parts);
}

type Rec = Record<string, Json> & { salts: Record<string, string>; digests?: Record<string, string> };
type Manifest = Record<string, Json> & {
  chain: Array<{ name: string; digest: string; size: number }>;
  redactions: Array<{ seq: number; path: string; rule: string }>;
};

/** The outsider's edit of an (unsigned) receipt: chain records and manifest rewritten, the chain entries' digests recomputed. */
function rewrite(
  tar: Uint8Array,
  edit: {
    record?: (r: Rec, seq: number) => void;
    manifest?: (m: Manifest) => void;
    raw?: (chain: Uint8Array) => Uint8Array;
  },
): Uint8Array {
  const entries = entriesOf(tar);
  const m = JSON.parse(new TextDecoder().decode(entries[0]!.data)) as Manifest;
  for (const [i, e] of entries.entries()) {
    if (!e.name.startsWith('chain/')) continue;
    let data = e.data;
    if (edit.record) {
      const lines = new TextDecoder()
        .decode(data)
        .split('\n')
        .slice(0, -1)
        .map((l) => {
          const r = JSON.parse(l) as Rec;
          edit.record!(r, r.seq as number);
          return canonicalJson(r as Json, { refuseReserved: false });
        });
      data = text(lines.map((l) => l + '\n').join(''));
    }
    if (edit.raw) data = edit.raw(data);
    entries[i] = { name: e.name, data };
    m.chain = m.chain.map((c) => (c.name === e.name ? { ...c, digest: digestBytes(data), size: data.length } : c));
  }
  edit.manifest?.(m);
  entries[0] = { name: entries[0]!.name, data: text(canonicalJson(m as Json, { refuseReserved: false })) };
  return tarOf(entries);
}

const MARKER = (rule: string, extra: Record<string, Json> = {}): Json => ({
  '$stepchain:redacted': { commitment: 'sha256:' + 'cd'.repeat(32), rule, ...extra },
});
function asView(r: Rec, slot: string, value: Json): void {
  r.digests = {
    ...(r.digests ?? {}),
    [slot]: slotDigest(r.salts[slot]!, slot, canonicalJson(r[slot]!, { refuseReserved: false })),
  };
  delete r.salts[slot];
  r[slot] = value;
}
const codes = (r: { problems: Array<{ code: string }> }) => r.problems.map((p) => p.code);
const declare = (m: Manifest, seq: number, path: string, rule: string) => {
  m.redactions.push({ seq, path, rule });
  m.redactions.sort((a, b) => a.seq - b.seq || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
};

const journal = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
const head = (await journal.head())!.step_hash;
const pub = await planCommittedPublication(journal, {
  policy: compilePolicy(SAMPLE_POLICY),
  salts: seededSalts('views'),
});
const original = await bytesOf(pub.plan);
const check = (bytes: Uint8Array) => verifyPublishedReceipt(bytes, { expectHead: head });

describe('hostile publication bytes (issue 32)', () => {
  test("the publisher's receipt: valid, and every view listed as unbound, in archive order", async () => {
    const r = await check(original);
    expect(r.ok).toBe(true);
    const views = pub.lines.flatMap((l) => {
      const rec = JSON.parse(l) as Rec;
      return Object.keys(rec.digests ?? {}).map((slot) => ({
        seq: rec.seq as number,
        field: slot,
        path: `/${slot}`,
        why: 'view',
      }));
    });
    expect(views.length).toBeGreaterThan(0);
    expect(r.unbound).toEqual(views);
    expect(r.unbound_count).toBe(views.length);
  });

  test.each<[string, (r: Rec, seq: number) => void, ((m: Manifest) => void) | undefined, string[]]>([
    [
      'a disclosed slot moved into digests, value unchanged (no marker)',
      (r, s) => s === 0 && asView(r, 'result', r.result!),
      undefined,
      ['VIEW_INVALID'],
    ],
    [
      'a view of a blob reference (the disclosed blob slot moved into digests)',
      (r, s) => s === 3 && asView(r, 'input', r.input!),
      undefined,
      ['VIEW_INVALID'],
    ],
    [
      'a view whose only marker has a member too many',
      (r, s) => s === 0 && asView(r, 'result', { t: MARKER('secrets', { x: 1 }) }),
      undefined,
      ['MARKER_INVALID', 'VIEW_INVALID'],
    ],
    [
      'a view whose only "marker" has another reserved name',
      (r, s) =>
        s === 0 &&
        asView(r, 'result', { t: { '$stepchain:note': { commitment: 'sha256:' + 'cd'.repeat(32), rule: 'secrets' } } }),
      undefined,
      ['MARKER_INVALID', 'VIEW_INVALID'],
    ],
    [
      'a view whose marker is a blob reference inside it',
      (r, s) =>
        s === 0 && asView(r, 'result', { t: { '$stepchain:blob': { digest: 'sha256:' + 'cd'.repeat(32), size: 2 } } }),
      undefined,
      ['MARKER_INVALID', 'VIEW_INVALID'],
    ],
    [
      'a view whose marker is declared with another rule',
      (r, s) => s === 0 && asView(r, 'result', { t: MARKER('secrets') }),
      (m) => declare(m, 0, '/result/t', 'prompts'),
      ['REDACTION_UNDECLARED'],
    ],
    [
      'a slot both salted and in digests',
      (r, s) => {
        if (s === 0) r.digests = { ...(r.digests ?? {}), model: 'sha256:' + 'cd'.repeat(32) };
      },
      undefined,
      ['HASH_MISMATCH'],
    ],
    [
      'digests naming a member that is not a slot',
      (r, s) => {
        if (s === 0) r.digests = { ...(r.digests ?? {}), kind: 'sha256:' + 'cd'.repeat(32) };
      },
      undefined,
      ['FIELD_INVALID'],
    ],
    [
      'a whole marker with text, beside a digest of the same slot',
      (r, s) => {
        if (s === 0) {
          const d = (r.prompt as { '$stepchain:redacted': { commitment: string } })['$stepchain:redacted'].commitment;
          r.digests = { ...(r.digests ?? {}), prompt: d };
          (r.prompt as { '$stepchain:redacted': Record<string, string> })['$stepchain:redacted'].text = 'invented';
        }
      },
      undefined,
      ['HASH_MISMATCH'],
    ],
    [
      'a marker-less view in a line whose first member sorts before "digests" (an unknown member)',
      (r, s) => {
        if (s === 0) {
          asView(r, 'result', 1);
          r.aaa = 1;
        }
      },
      undefined,
      ['UNKNOWN_FIELD', 'VIEW_INVALID'],
    ],
    [
      'a marker with text in the envelope (step_id)',
      (r, s) => {
        if (s === 0) r.step_id = MARKER('secrets', { text: 'invented' });
      },
      undefined,
      ['FIELD_INVALID', 'MARKER_INVALID', 'HASH_MISMATCH'],
    ],
  ])('%s: refused', async (_what, record, manifest, expected) => {
    const r = await check(rewrite(original, { record, ...(manifest ? { manifest } : {}) }));
    expect(r.ok).toBe(false);
    for (const code of expected) expect(codes(r)).toContain(code);
  });

  test('VIEW_INVALID names the line, seq, slot and pointer; an undeclared marker inside a view names its slot too', async () => {
    const r = await check(
      rewrite(original, {
        record: (rec, s) => {
          if (s === 0) {
            asView(rec, 'result', 1);
            asView(rec, 'model', { m: MARKER('secrets') });
          }
        },
      }),
    );
    expect(r.problems).toEqual([
      expect.objectContaining({
        code: 'REDACTION_UNDECLARED',
        location: expect.objectContaining({ seq: 0, field: 'model', path: '/model/m' }),
      }),
      expect.objectContaining({
        code: 'VIEW_INVALID',
        location: { file: expect.stringMatching(/^chain\//), line: 1, seq: 0, field: 'result', path: '/result' },
      }),
    ]);
    expect(r.problems[1]!.message).toMatch(/result of seq 0 is a redacted view .* with no redaction marker inside/);
  });

  test('a declared marker deep inside a view: valid, and the whole slot is unbound, not only the marker', async () => {
    const r = await check(
      rewrite(original, {
        record: (rec, s) =>
          s === 0 &&
          asView(rec, 'result', {
            a: [1, { b: MARKER('secrets', { text: '[REDACTED:email]' }) }],
            digests: { prompt: 'sha256:' + 'cd'.repeat(32) },
          }),
        manifest: (m) => declare(m, 0, '/result/a/1/b', 'secrets'),
      }),
    );
    expect(r.problems).toEqual([]);
    expect(r.unbound.filter((u) => u.seq === 0)).toEqual([{ seq: 0, field: 'result', path: '/result', why: 'view' }]);
    expect(r.proves.join('\n')).not.toMatch(/Every disclosed value is the original/);
  });

  test('the text "digests":{ inside a string value or a nested member makes no view', async () => {
    // Step 0's disclosed model and input made views holding such text: only those two slots are views.
    const r = await check(
      rewrite(original, {
        record: (rec, s) => {
          if (s === 0) {
            asView(rec, 'model', { note: '"digests":{"result":"x"}', m: MARKER('secrets') });
            asView(rec, 'input', { digests: { result: 'sha256:' + 'cd'.repeat(32) }, m: MARKER('secrets') });
          }
        },
        manifest: (m) => {
          declare(m, 0, '/model/m', 'secrets');
          declare(m, 0, '/input/m', 'secrets');
        },
      }),
    );
    expect(r.problems).toEqual([]);
    expect(r.unbound.filter((u) => u.seq === 0).map((u) => u.field)).toEqual(['input', 'model']);
  });

  test('a value disclosure of a marker the forger wrote into a view holds — and says it is not bound to the head', async () => {
    const salt = new Uint8Array(32).fill(7);
    const value = 'transfer 10000 EUR to mallory';
    const c = commitment(salt, value);
    const forged = rewrite(original, {
      record: (rec, s) =>
        s === 0 && asView(rec, 'result', { note: { '$stepchain:redacted': { commitment: c, rule: 'secrets' } } }),
      manifest: (m) => declare(m, 0, '/result/note', 'secrets'),
    });
    const md = (await check(forged)).manifest_digest!;
    const proof = {
      commitment: c,
      format: 'stepchain-disclosure/v1',
      manifest_digest: md,
      path: '/result/note',
      rule: 'secrets',
      salt: saltToHex(salt),
      seq: 0,
      value,
    };
    const r = await verifyDisclosure(forged, proof);
    expect(r.ok).toBe(true);
    expect(r.proves).toContain(
      'The marker stands in a redacted view, which is NOT bound to the original head: anyone holding the receipt could have written the marker, so this ties the value to this receipt only. An opening of the slot (stepchain-opening/v1) binds it to the head.',
    );
  });

  test('a v1 (re-anchored) publication: every marker with text is an unbound place, and a sentence says so', async () => {
    const v1 = await memoryJournal(sampleSteps(), 1024);
    const p = await planPublication(v1, { policy: compilePolicy(SAMPLE_POLICY), salts: seededSalts('views-v1') });
    const r = await verifyPublishedReceipt(await bytesOf(p.plan as CommittedPublication['plan']));
    expect(r.ok).toBe(true);
    expect(r.unbound.length).toBeGreaterThan(0);
    expect(r.unbound.every((u) => u.why === 'marker-text')).toBe(true);
    expect(r.unbound).toContainEqual({ seq: 1, field: 'input', path: '/input/note', why: 'marker-text' });
    expect(
      r.does_not_prove.some((s) =>
        /^That the text shown in \d+ redaction markers \(its "text": seq 1 \/input\/note/.test(s),
      ),
    ).toBe(true);
  });

  test('a place whose member name holds control characters is named escaped, in the sentences and on the terminal', async () => {
    const name = '\u001b]52;c;aGk=\u0007\u202eevil';
    const v1 = await memoryJournal(
      [
        {
          step_id: 's0',
          ts: '2026-01-01T00:00:00.000Z',
          model: 'm',
          prompt: 'p',
          input: { [name]: 'mail bob@example.com today' },
          tool_call: null,
          result: null,
        },
      ],
      1024,
    );
    const p = await planPublication(v1, {
      policy: compilePolicy({ rules: [{ id: 'secrets', detectors: ['email'] }] }),
      salts: seededSalts('views-ctl'),
    });
    const bytes = await bytesOf(p.plan as CommittedPublication['plan']);
    const r = await verifyPublishedReceipt(bytes);
    expect(r.ok).toBe(true);
    expect(r.unbound).toEqual([{ seq: 0, field: 'input', path: `/input/${name}`, why: 'marker-text' }]);
    const sentence = r.does_not_prove.find((x) => x.startsWith('That the text shown in 1 redaction marker'))!;
    expect(sentence).toContain('seq 0 /input/\\u{1b}]52;c;aGk=\\u{7}\\u{202e}evil');
    expect(sentence).not.toMatch(/[\u001b\u0007\u202e]/);
    const file = join(dir, 'controls.tar');
    writeFileSync(file, bytes);
    const cli = await run(['verify', file], dir);
    expect(cli.code).toBe(0);
    expect(cli.stderr).toContain(
      'not bound seq 0 /input/\\u{1b}]52;c;aGk=\\u{7}\\u{202e}evil (the "text" of a redaction marker)',
    );
    expect(cli.stderr).not.toMatch(/[\u001b\u0007\u202e]/);
  });

  test('past 1000 places the report lists the first 1000 and counts them all; the CLI shows 20 and says how many more', async () => {
    const many = await memoryJournal(
      Array.from({ length: 1003 }, (_, i) => ({
        step_id: `s${i}`,
        ts: '2026-01-01T00:00:00.000Z',
        model: 'm',
        prompt: 'p',
        input: { note: `mail u${i}@example.com`, n: i },
        tool_call: null,
        result: null,
      })),
      1024,
      'stepchain/v2',
    );
    const p = await planCommittedPublication(many, {
      policy: compilePolicy({ rules: [{ id: 'secrets', detectors: ['email'] }] }),
    });
    const r = await verifyPublishedReceipt(await bytesOf(p.plan), { expectHead: (await many.head())!.step_hash });
    expect(r.ok).toBe(true);
    expect(r.unbound_count).toBe(1003);
    expect(r.unbound).toHaveLength(MAX_UNBOUND_LISTED);
    expect(r.unbound[999]).toEqual({ seq: 999, field: 'input', path: '/input', why: 'view' });
    const lines = unboundLines(new Output({ json: false, env: {}, stderr: { isTTY: false } as NodeJS.WriteStream }), r);
    expect(lines).toHaveLength(22);
    expect(lines[21]).toBe('      … and 983 more (--json lists the first 1000 in report.unbound)');
  }, 60_000);

  test('a publication stripped of its declarations does not pass as an ordinary receipt', async () => {
    const r = await check(
      rewrite(original, {
        manifest: (m) => {
          delete (m as Record<string, unknown>).publication;
          delete (m as Record<string, unknown>).redactions;
        },
      }),
    );
    // Stripped of its declarations, the publication is not an ordinary receipt: its markers and public form give it away.
    expect(codes(r)).toContain('ANCHOR_INVALID');
    expect(r.problems.find((p) => p.code === 'ANCHOR_INVALID')!.message).toMatch(
      /publication stripped of its declarations/,
    );
  });
});

const ruleArb = fc.oneof(
  fc
    .constantFrom(
      ['/prompt'],
      ['/meta'],
      ['/input'],
      ['/result/*'],
      ['/tool_call/arguments/**'],
      ['/input/*', '/meta/*'],
    )
    .map((paths) => ({ paths })),
  fc.constantFrom(['email'], ['api-key', 'email']).map((detectors) => ({ detectors })),
);
const policyArb = fc
  .array(ruleArb, { minLength: 1, maxLength: 3 })
  .map((rules) => ({ rules: rules.map((r, i) => ({ id: `r${i}`, ...r })) }));
const enc = new TextEncoder();

test('property: any byte of any disclosed value changed (manifest digest recomputed) fails against the original head', async () => {
  let exercised = 0;
  await fc.assert(
    fc.asyncProperty(
      arb.steps({ minLength: 1, maxLength: 4 }),
      policyArb,
      fc.boolean(),
      fc.nat(),
      fc.nat(),
      fc.integer({ min: 1, max: 255 }),
      async (generated, policyDoc, plantEmail, pick, at, delta) => {
        // Every string leaf made unique, so that a redacted value never also stands unselected elsewhere (LEAK_DETECTED).
        let n = 0;
        const tail = Math.random().toString(36).slice(2, 10);
        const unique = (v: Json): Json =>
          typeof v === 'string'
            ? `${v}~${n++}-${tail}`
            : Array.isArray(v)
              ? v.map(unique)
              : v !== null && typeof v === 'object'
                ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unique(x)]))
                : v;
        const steps: StepInput[] = generated.map((g, i) => {
          const s = unique(g as unknown as Json) as unknown as StepInput;
          return plantEmail && i === 0
            ? { ...s, input: { note: 'write to carol.mcgill@example.net today', was: (s.input ?? null) as Json } }
            : s;
        });
        const store = new MemoryStore({ blobThreshold: 1024 });
        const j = await store.create('p', { format: 'stepchain/v2', createdAt: CREATED_AT, journalId: 'prop' });
        for (const s of steps) await j.append(s);
        const p = await planCommittedPublication(j, { policy: compilePolicy(policyDoc) });
        const bytes = await bytesOf(p.plan);
        const h = (await j.head())!.step_hash;
        // Every disclosed (salted, present) slot value of every line, as a byte range of the chain file.
        const targets: Array<{ start: number; end: number }> = [];
        let offset = 0;
        for (const line of p.lines) {
          const rec = JSON.parse(line) as Rec;
          const spans = scanCanonical(line, {}).members!;
          for (const slot of Object.keys(rec.salts)) {
            const span = spans.get(slot);
            if (span)
              targets.push({
                start: offset + enc.encode(line.slice(0, span[0])).length,
                end: offset + enc.encode(line.slice(0, span[1])).length,
              });
          }
          offset += enc.encode(line).length + 1;
        }
        if (targets.length === 0) return;
        exercised++;
        const t = targets[pick % targets.length]!;
        const i = t.start + (at % (t.end - t.start));
        const forged = rewrite(bytes, {
          raw: (chain) => {
            const out = chain.slice();
            out[i] = (out[i]! + delta) % 256;
            return out;
          },
        });
        const r = await verifyPublishedReceipt(forged, { expectHead: h });
        expect(r.ok).toBe(false);
      },
    ),
    { numRuns: 60 },
  );
  expect(exercised).toBeGreaterThan(20);
}, 180_000);
