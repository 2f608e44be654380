/**
 * The Node shell of the publisher (src/redact/node.ts; spec/REDACTION.md, README "Publishing" and
 * "Disclosing"), with real files in a fresh folder per test: a policy given three ways, publish's arguments
 * and outputs (the receipt, the secrets file: mode 0600, created with 'wx' so never overwritten, removed
 * again when the receipt cannot be written), both publications (a v1 journal re-anchored, a v2 journal
 * against its original head), every option (sign as bytes, PEM or key file; exporter; salts), and the
 * files disclosure reads and writes, each refusal with its code and the file it names.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { keyIdOf, keyPairFromSeed, privateKeyToPem } from '../../src/receipt/index.js';
import type { ChainSource } from '../../src/chain/source.js';
import {
  compilePolicy,
  disclose,
  discloseHash,
  discloseStep,
  loadPolicy,
  publish,
  readPolicyFile,
  seededSalts,
  verifyDisclosureFiles,
  type PublishOptions,
} from '../../src/redact/index.js';
// The root entry's verifyPublishedReceipt: a path as well as bytes.
import { verifyPublishedAt } from '../../src/redact/node.js';
import { tempDir } from '../helpers/tmp.js';
import { SAMPLE_POLICY, archiveText, memoryJournal, sampleSteps } from './helpers.js';

const root = tempDir('stepchain-redact-node-');
let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(root, 't-'));
});
const at = (name: string): string => join(dir, name);
const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 11));
/** A policy no value of the sample journal matches. */
const NOTHING = { rules: [{ id: 'nothing', paths: ['/meta/not_there'] }] };

async function failure(
  p: Promise<unknown>,
): Promise<{ code?: string; location?: { file?: string }; message: string; name: string; cause?: unknown }> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e, 'expected a rejection').toBeInstanceOf(Error);
  return e as never;
}

const modeOf = (path: string): number => statSync(path).mode & 0o777;

/** The journal, with a hook run the first time the publisher reads it (after publish's argument checks). */
function onFirstRead(source: ChainSource, hook: () => void): ChainSource {
  let done = false;
  const once = (): void => {
    if (!done) ((done = true), hook());
  };
  return {
    genesis: source.genesis,
    head: () => (once(), source.head()),
    lines: (range) => (once(), source.lines(range)),
    blob: (digest) => source.blob(digest),
  };
}

describe('REDACTION §3: the policy, a compiled policy, a document, or { file }', () => {
  test('all three publish under the same policy digest, with the same bytes for the same salts', async () => {
    const j = await memoryJournal();
    const compiled = compilePolicy(SAMPLE_POLICY);
    writeFileSync(at('policy.json'), JSON.stringify(SAMPLE_POLICY));
    const results = [];
    for (const [i, policy] of (
      [compiled, SAMPLE_POLICY, { file: at('policy.json') }] as PublishOptions['policy'][]
    ).entries()) {
      results.push(await publish(j, { policy, optIn: true, out: at(`p${i}.tar`), salts: seededSalts('same') }));
    }
    for (const r of results) {
      expect(r.policy_digest).toBe(compiled.digest);
      expect(r.redactions).toBe(results[0]!.redactions);
      expect(r.manifest_digest).toBe(results[0]!.manifest_digest);
    }
    expect(results[0]!.redactions).toBeGreaterThan(0);
    expect(readFileSync(at('p2.tar')).equals(readFileSync(at('p0.tar')))).toBe(true);
    expect(await loadPolicy(compiled)).toBe(compiled);
    expect((await readPolicyFile(at('policy.json'))).digest).toBe(compiled.digest);
  });

  test('a policy file that cannot be read is ARGUMENT_INVALID naming it; one that is not a policy is a PolicyError naming it', async () => {
    for (const p of [readPolicyFile(at('missing.json')), loadPolicy({ file: at('missing.json') })]) {
      const e = await failure(p);
      expect(e.code).toBe('ARGUMENT_INVALID');
      expect(e.location).toEqual({ file: at('missing.json') });
    }
    writeFileSync(at('bad.json'), '{"rules": []}');
    const e = await failure(readPolicyFile(at('bad.json')));
    expect([e.name, e.code, e.location?.file]).toEqual(['PolicyError', 'POLICY_INVALID', at('bad.json')]);
  });

  test.each([
    ['null', null, 'POLICY_INVALID'],
    ['a string', 'rules', 'POLICY_INVALID'],
    ['a number', 42, 'POLICY_INVALID'],
    ['{ file } that is not a string', { file: 42 }, 'UNKNOWN_MEMBER'],
    ['a document with a "document" member', { rules: SAMPLE_POLICY.rules, document: {} }, 'UNKNOWN_MEMBER'],
    ['a document with a "digest" member', { rules: SAMPLE_POLICY.rules, digest: 'x' }, 'UNKNOWN_MEMBER'],
  ])(
    'anything else is checked as a policy document: %s is a PolicyError, never a TypeError',
    async (_name, policy, code) => {
      const e = await failure(loadPolicy(policy as never));
      expect([e.name, e.code]).toEqual(['PolicyError', code]);
    },
  );
});

describe("REDACTION §6, §12: publish's arguments, checked before anything is read or written", () => {
  test('options that are not an object are OPT_IN_REQUIRED', async () => {
    const j = await memoryJournal();
    for (const options of [null, undefined, 'optIn']) {
      const e = await failure(publish(j, options as never));
      expect(e.code).toBe('OPT_IN_REQUIRED');
    }
  });

  test.each([
    ['out absent', { secretsOut: 's.json' }],
    ['out empty', { out: '', secretsOut: 's.json' }],
    ['out not a string', { out: 42, secretsOut: 's.json' }],
    ['secretsOut empty', { out: 'o.tar', secretsOut: '' }],
    ['secretsOut not a string', { out: 'o.tar', secretsOut: 42 }],
    ['secretsOut the same path as out', { out: 'o.tar', secretsOut: 'o.tar' }],
  ])('%s is ARGUMENT_INVALID; nothing is written', async (_name, args) => {
    for (const format of ['stepchain/v1', 'stepchain/v2'] as const) {
      const j = await memoryJournal(sampleSteps(), 1024, format);
      const options = Object.fromEntries(
        Object.entries(args).map(([k, v]) => [k, typeof v === 'string' && v !== '' ? at(v) : v]),
      );
      const e = await failure(publish(j, { policy: SAMPLE_POLICY, optIn: true, ...options } as never));
      expect(e.code).toBe('ARGUMENT_INVALID');
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  test('an existing secrets file is OUTPUT_EXISTS naming it, left byte-identical, and the journal is not read', async () => {
    for (const format of ['stepchain/v1', 'stepchain/v2'] as const) {
      const j = await memoryJournal(sampleSteps(), 1024, format);
      writeFileSync(at('secrets.json'), 'not mine to overwrite\n');
      let read = false;
      const source = onFirstRead(j, () => (read = true));
      const e = await failure(
        publish(source, { policy: SAMPLE_POLICY, optIn: true, out: at('o.tar'), secretsOut: at('secrets.json') }),
      );
      expect([e.name, e.code]).toEqual(['RedactError', 'OUTPUT_EXISTS']);
      expect(e.location).toEqual({ file: at('secrets.json') });
      expect(read).toBe(false);
      expect(readFileSync(at('secrets.json'), 'utf8')).toBe('not mine to overwrite\n');
      expect(existsSync(at('o.tar'))).toBe(false);
    }
  });

  test.each(['stepchain/v1', 'stepchain/v2'] as const)(
    "a secrets file that appears while the journal is read is still not overwritten ('wx'): OUTPUT_EXISTS (%s)",
    async (format) => {
      const j = await memoryJournal(sampleSteps(), 1024, format);
      const source = onFirstRead(j, () => writeFileSync(at('secrets.json'), 'theirs\n'));
      const e = await failure(
        publish(source, { policy: SAMPLE_POLICY, optIn: true, out: at('o.tar'), secretsOut: at('secrets.json') }),
      );
      expect([e.name, e.code]).toEqual(['RedactError', 'OUTPUT_EXISTS']);
      expect(e.location).toEqual({ file: at('secrets.json') });
      expect(readFileSync(at('secrets.json'), 'utf8')).toBe('theirs\n');
      expect(existsSync(at('o.tar'))).toBe(false);
    },
  );

  test('a secrets path that cannot be created is OUTPUT_FAILED naming it, the system error its cause', async () => {
    const j = await memoryJournal();
    const e = await failure(
      publish(j, { policy: SAMPLE_POLICY, optIn: true, out: at('o.tar'), secretsOut: at('no/such/dir/secrets.json') }),
    );
    expect([e.name, e.code, e.location, (e.cause as NodeJS.ErrnoException).code]).toEqual([
      'RedactError',
      'OUTPUT_FAILED',
      { file: at('no/such/dir/secrets.json') },
      'ENOENT',
    ]);
    expect(existsSync(at('o.tar'))).toBe(false);
  });
});

describe('REDACTION §6, §8.1, §12: what publish writes and returns', () => {
  test('a v1 journal: the receipt, the secrets file (0600, one JSON line), and the result that names both', async () => {
    const j = await memoryJournal();
    const head = (await j.head())!;
    const r = await publish(j, { policy: SAMPLE_POLICY, optIn: true, out: at('o.tar'), secretsOut: at('s.json') });
    expect(r.publication).toBe('anchored');
    expect(r.secrets_out).toBe(at('s.json'));
    expect(r.out).toBe(at('o.tar'));
    expect(r.original_head).toEqual(head);
    expect(r.redactions).toBeGreaterThan(0);
    expect(r.redacted_from).toBe(0);
    expect(modeOf(at('s.json'))).toBe(0o600);
    const text = readFileSync(at('s.json'), 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    const secrets = JSON.parse(text) as { manifest_digest: string; redactions: unknown[]; steps: unknown[] };
    expect(secrets.manifest_digest).toBe(r.manifest_digest);
    expect(secrets.redactions).toHaveLength(r.redactions);
    expect(secrets.steps.length).toBeGreaterThan(0);
    expect((await verifyPublishedAt(at('o.tar'))).ok).toBe(true);
  });

  test('without secretsOut only the receipt is written, and secrets_out is null', async () => {
    for (const format of ['stepchain/v1', 'stepchain/v2'] as const) {
      const j = await memoryJournal(sampleSteps(), 1024, format);
      const r = await publish(j, { policy: SAMPLE_POLICY, optIn: true, out: at(`${format.slice(-2)}.tar`) });
      expect(r.secrets_out).toBeNull();
      expect(readdirSync(dir)).toContain(`${format.slice(-2)}.tar`);
    }
    expect(readdirSync(dir).sort()).toEqual(['v1.tar', 'v2.tar']);
  });

  test("a v2 journal is published against its original head ('original-head'); its secrets file holds only redactions", async () => {
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const head = (await j.head())!;
    const r = await publish(j, { policy: SAMPLE_POLICY, optIn: true, out: at('o.tar'), secretsOut: at('s.json') });
    expect(r.publication).toBe('original-head');
    expect(r.original_head).toEqual(head);
    expect(r.head).toEqual(head);
    expect(r.policy_digest).toBe(compilePolicy(SAMPLE_POLICY).digest);
    expect(r.redactions).toBeGreaterThan(0);
    expect(r.redacted_from).toBe(0);
    expect(r.secrets_out).toBe(at('s.json'));
    expect(modeOf(at('s.json'))).toBe(0o600);
    const text = readFileSync(at('s.json'), 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    const secrets = JSON.parse(text) as { manifest_digest: string; steps: unknown[]; unblobbed: unknown[] };
    expect(secrets.manifest_digest).toBe(r.manifest_digest);
    expect(secrets.steps).toEqual([]);
    expect(secrets.unblobbed).toEqual([]);
    const report = await verifyPublishedAt(at('o.tar'));
    expect(report.ok).toBe(true);
    expect(report.publication).not.toBeNull();
  });

  test('redacted_from is the first redacted seq; with nothing redacted, the step after the head', async () => {
    const steps = sampleSteps();
    for (const format of ['stepchain/v1', 'stepchain/v2'] as const) {
      const j = await memoryJournal(steps, 1024, format);
      const none = await publish(j, { policy: NOTHING, optIn: true, out: at(`none-${format.slice(-2)}.tar`) });
      expect(none.redactions).toBe(0);
      expect(none.redacted_from).toBe(steps.length);
      const later = await publish(j, {
        policy: { rules: [{ id: 'done', paths: ['/prompt'], seq: { from: 3 } }] },
        optIn: true,
        out: at(`later-${format.slice(-2)}.tar`),
      });
      expect(later.redactions).toBe(1);
      expect(later.redacted_from).toBe(3);
    }
  });

  test('a receipt that cannot be written is OUTPUT_FAILED, and the secrets file written for it is removed', async () => {
    for (const format of ['stepchain/v1', 'stepchain/v2'] as const) {
      const j = await memoryJournal(sampleSteps(), 1024, format);
      const e = await failure(
        publish(j, { policy: SAMPLE_POLICY, optIn: true, out: at('no/such/dir/o.tar'), secretsOut: at('s.json') }),
      );
      expect(e.code).toBe('OUTPUT_FAILED');
      expect(readdirSync(dir)).toEqual([]);
      const bare = await failure(publish(j, { policy: SAMPLE_POLICY, optIn: true, out: at('no/such/dir/o.tar') }));
      expect(bare.code).toBe('OUTPUT_FAILED');
    }
  });

  test.each([
    ['seed bytes', () => key.privateKey],
    ['a PKCS#8 PEM', () => ({ pem: privateKeyToPem(key.privateKey) })],
    ['{ keyFile }', () => ({ keyFile: at('key.pem') })],
  ])('sign given as %s signs the receipt with that key (v1 and v2)', async (_name, sign) => {
    writeFileSync(at('key.pem'), privateKeyToPem(key.privateKey));
    for (const format of ['stepchain/v1', 'stepchain/v2'] as const) {
      const j = await memoryJournal(sampleSteps(), 1024, format);
      const out = at(`${format.slice(-2)}.tar`);
      const r = await publish(j, { policy: SAMPLE_POLICY, optIn: true, out, sign: sign() });
      expect(r.signed_by).toBe(keyIdOf(key.publicKey));
      const report = await verifyPublishedAt(out, { publicKey: key.publicKey });
      expect(report.ok).toBe(true);
      expect(report.signed_by).toBe(keyIdOf(key.publicKey));
    }
  });

  test('unsigned without sign; the exporter reaches the manifest (v1 and v2)', async () => {
    for (const format of ['stepchain/v1', 'stepchain/v2'] as const) {
      const j = await memoryJournal(sampleSteps(), 1024, format);
      const plain = await publish(j, { policy: SAMPLE_POLICY, optIn: true, out: at(`plain-${format.slice(-2)}.tar`) });
      expect(plain.signed_by).toBeNull();
      expect(archiveText(readFileSync(at(`plain-${format.slice(-2)}.tar`)))).not.toContain('node-rules-exporter/1');
      await publish(j, {
        policy: SAMPLE_POLICY,
        optIn: true,
        out: at(`ex-${format.slice(-2)}.tar`),
        exporter: 'node-rules-exporter/1',
      });
      expect(archiveText(readFileSync(at(`ex-${format.slice(-2)}.tar`)))).toContain(
        '"exporter":"node-rules-exporter/1"',
      );
    }
  });

  test('salts: the same source gives the same bytes, another gives another receipt (v1 and v2)', async () => {
    for (const format of ['stepchain/v1', 'stepchain/v2'] as const) {
      const j = await memoryJournal(sampleSteps(), 1024, format);
      const f = format.slice(-2);
      const a = await publish(j, {
        policy: SAMPLE_POLICY,
        optIn: true,
        out: at(`a-${f}.tar`),
        salts: seededSalts('one'),
      });
      const b = await publish(j, {
        policy: SAMPLE_POLICY,
        optIn: true,
        out: at(`b-${f}.tar`),
        salts: seededSalts('one'),
      });
      const c = await publish(j, {
        policy: SAMPLE_POLICY,
        optIn: true,
        out: at(`c-${f}.tar`),
        salts: seededSalts('two'),
      });
      expect(readFileSync(at(`b-${f}.tar`)).equals(readFileSync(at(`a-${f}.tar`)))).toBe(true);
      expect(c.manifest_digest).not.toBe(a.manifest_digest);
      expect(a.manifest_digest).toBe(b.manifest_digest);
    }
  });
});

describe('REDACTION §7, §8: verifying and disclosing from files', () => {
  /** A v1 publication with its secrets file, and a second one of the same journal under other salts. */
  async function published(): Promise<{ receipt: string; secrets: string; other: string }> {
    const j = await memoryJournal();
    await publish(j, {
      policy: SAMPLE_POLICY,
      optIn: true,
      out: at('r.tar'),
      secretsOut: at('s.json'),
      salts: seededSalts('r'),
    });
    await publish(j, { policy: SAMPLE_POLICY, optIn: true, out: at('other.tar'), salts: seededSalts('other') });
    return { receipt: at('r.tar'), secrets: at('s.json'), other: at('other.tar') };
  }
  const makers = {
    value: (receipt: string, secrets: string, out?: string) =>
      disclose(receipt, { secrets, seq: 1, path: '/tool_call/arguments/api_key', ...(out ? { out } : {}) }),
    step: (receipt: string, secrets: string, out?: string) =>
      discloseStep(receipt, { secrets, seq: 1, ...(out ? { out } : {}) }),
    hash: (receipt: string, secrets: string, out?: string) =>
      discloseHash(receipt, { secrets, ...(out ? { out } : {}) }),
  };

  test('verifyPublishedAt: a path and the same bytes give the same report; a damaged file is reported, not thrown', async () => {
    const { receipt } = await published();
    const fromPath = await verifyPublishedAt(receipt);
    const fromBytes = await verifyPublishedAt(new Uint8Array(readFileSync(receipt)));
    expect(fromPath.ok).toBe(true);
    expect(fromBytes).toEqual(fromPath);
    writeFileSync(at('junk.tar'), 'not a tar at all');
    const junk = await verifyPublishedAt(at('junk.tar'));
    expect(junk.ok).toBe(false);
  });

  test.each(Object.keys(makers))(
    '%s: made from the files, written with out (0600, one JSON line) and checked by verifyDisclosureFiles',
    async (kind) => {
      const make = makers[kind as keyof typeof makers];
      const { receipt, secrets } = await published();
      const made = await make(receipt, secrets);
      expect(made.report.ok).toBe(true);
      expect(readdirSync(dir).sort()).toEqual(['other.tar', 'r.tar', 's.json']);
      const viaFile = await make(receipt, secrets, at('proof.json'));
      expect(viaFile.proof).toEqual(made.proof);
      expect(modeOf(at('proof.json'))).toBe(0o600);
      const text = readFileSync(at('proof.json'), 'utf8');
      expect(text).toBe(JSON.stringify(made.proof) + '\n');
      const checked = await verifyDisclosureFiles(receipt, at('proof.json'));
      expect(checked.ok).toBe(true);
      expect(checked).toEqual(made.report);
    },
  );

  test.each(Object.keys(makers))(
    '%s: an existing out is OUTPUT_EXISTS naming it, left byte-identical; an out that cannot be created is OUTPUT_FAILED naming it',
    async (kind) => {
      const make = makers[kind as keyof typeof makers];
      const { receipt, secrets } = await published();
      writeFileSync(at('proof.json'), 'keep\n');
      const e = await failure(make(receipt, secrets, at('proof.json')));
      expect([e.name, e.code]).toEqual(['RedactError', 'OUTPUT_EXISTS']);
      expect(e.location).toEqual({ file: at('proof.json') });
      expect(readFileSync(at('proof.json'), 'utf8')).toBe('keep\n');
      const sys = await failure(make(receipt, secrets, at('no/such/dir/proof.json')));
      expect([sys.name, sys.code, sys.location, (sys.cause as NodeJS.ErrnoException).code]).toEqual([
        'RedactError',
        'OUTPUT_FAILED',
        { file: at('no/such/dir/proof.json') },
        'ENOENT',
      ]);
    },
  );

  test.each(Object.keys(makers))(
    '%s: the files it reads — each refusal with its code and the file it names',
    async (kind) => {
      const make = makers[kind as keyof typeof makers];
      const { receipt, secrets, other } = await published();
      const missing = await failure(make(receipt, at('missing.json')));
      expect([missing.code, missing.location]).toEqual(['ARGUMENT_INVALID', { file: at('missing.json') }]);
      writeFileSync(at('notjson.json'), '{"format": ');
      const notJson = await failure(make(receipt, at('notjson.json')));
      expect([notJson.code, notJson.location]).toEqual(['SECRETS_INVALID', { file: at('notjson.json') }]);
      const noReceipt = await failure(make(at('missing.tar'), secrets));
      expect([noReceipt.code, noReceipt.location]).toEqual(['ARGUMENT_INVALID', { file: at('missing.tar') }]);
      // The secrets file of another publication of the same journal: its proof names another manifest.
      const another = await failure(make(other, secrets));
      expect(another.code).toBe('SECRETS_INVALID');
      expect(another.message).toContain(other);
      writeFileSync(at('junk.tar'), 'not a tar at all');
      const junk = await failure(make(at('junk.tar'), secrets));
      expect(junk.code).toBe('RECEIPT_INVALID');
      expect(junk.message).toContain(at('junk.tar'));
    },
  );

  test('discloseHash: the head by default, or the seq asked for', async () => {
    const { receipt, secrets } = await published();
    const head = await discloseHash(receipt, { secrets });
    const two = await discloseHash(receipt, { secrets, seq: 2 });
    expect(head.report.ok && two.report.ok).toBe(true);
    expect(head.proof.seq).toBe(sampleSteps().length - 1);
    expect(two.proof.seq).toBe(2);
  });

  test.each([
    ['missing', null],
    ['not JSON', '{"format":'],
  ])('verifyDisclosureFiles: a proof file %s is reported as PROOF_INVALID, proving nothing', async (_name, content) => {
    const { receipt } = await published();
    if (content !== null) writeFileSync(at('p.json'), content);
    const r = await verifyDisclosureFiles(receipt, at('p.json'));
    expect(r).toMatchObject({ ok: false, proves: [], seq: null, receipt: null });
    expect(r.problems.map((p) => p.code)).toEqual(['PROOF_INVALID']);
    expect(r.problems[0]!.message).toContain(at('p.json'));
  });

  test.each([['null'], ['5'], ['{}'], ['{"format": 7}'], ['"stepchain-step-disclosure/1"']])(
    'verifyDisclosureFiles: a proof that is %s is reported, never thrown',
    async (content) => {
      const { receipt } = await published();
      writeFileSync(at('p.json'), content);
      const r = await verifyDisclosureFiles(receipt, at('p.json'));
      expect(r.ok).toBe(false);
      expect(r.problems.length).toBeGreaterThan(0);
      expect(r.proves).toEqual([]);
    },
  );

  test('verifyDisclosureFiles: a receipt that cannot be read is ARGUMENT_INVALID naming it', async () => {
    const { receipt, secrets } = await published();
    await discloseHash(receipt, { secrets, out: at('p.json') });
    const e = await failure(verifyDisclosureFiles(at('missing.tar'), at('p.json')));
    expect([e.code, e.location]).toEqual(['ARGUMENT_INVALID', { file: at('missing.tar') }]);
  });
});
