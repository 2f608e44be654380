/**
 * The Node shell of receipts (src/receipt/node.ts), with real files in a fresh temporary directory and a
 * real file journal: exportReceipt's range, options and output (spec/RECEIPT.md §3.1 for the gzip a writer
 * makes), verifyReceipt on a path, bytes or a stream, keygen's key files, and the pinned public key files of
 * §5.2 — each error with its code and the file it names, and nothing left behind after a failure.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync, constants as zc } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { FileStore } from '../../src/index.js';
import { verifyReceiptAt as verifyAt } from '../../src/receipt/node.js';
import type { ChainSource, SeqRange } from '../../src/chain/source.js';
import {
  exportReceipt,
  keyPairFromSeed,
  keygen,
  planReceipt,
  privateKeyToPem,
  publicKeyToPem,
  readKeyFile,
  readPublicKeyFile,
  receiptBytes,
  receiptInput,
  verifyReceiptFile,
  writePlanToFile,
  type KeyFileInput,
  type ReceiptReport,
} from '../../src/receipt/index.js';
import { base64Encode } from '../../src/receipt/base64.js';
import { tempDir } from '../helpers/tmp.js';
import { makeFixture, testSeed } from './fixture.js';

const root = tempDir('stepchain-node-rules-');
let n = 0;
/** A fresh directory of its own for each case. */
const fresh = (): string => {
  const d = join(root, `case-${n++}`);
  mkdirSync(d);
  return d;
};

/** A real file journal of `steps` steps. */
async function fileJournal(steps: number) {
  const store = new FileStore(join(fresh(), 'store'), { fsync: 'none' });
  const j = await store.create('node-rules');
  for (let i = 0; i < steps; i++) await j.append({ input: { i }, model: 'm', result: { answer: `r${i}` } });
  return j;
}

/** The source with every `lines` range it was asked for recorded. */
function recording(source: ChainSource): ChainSource & { asked: SeqRange[] } {
  const asked: SeqRange[] = [];
  return {
    genesis: source.genesis,
    head: () => source.head(),
    blob: (d) => source.blob(d),
    lines: (r) => (asked.push(r ?? {}), source.lines(r)),
    asked,
  };
}

/** The names of a ustar stream's entries (§3.2), walking its 512-byte headers. */
function tarNames(tar: Uint8Array): string[] {
  const names: string[] = [];
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0;) {
    const field = (o: number, l: number): string =>
      Buffer.from(tar.subarray(at + o, at + o + l))
        .toString('latin1')
        .replace(/\0.*$/s, '');
    names.push(field(0, 100));
    at += 512 + Math.ceil(parseInt(field(124, 12), 8) / 512) * 512;
  }
  return names;
}

const leftovers = (dir: string): string[] => readdirSync(dir).filter((f) => f.includes('.tmp-'));
const alice = keyPairFromSeed(testSeed(1));

describe("RECEIPT §4.2 range: exportReceipt's arguments (the range is checked against the journal before anything is read)", () => {
  test.each<[string, { from?: number; to?: number }]>([
    ['to past the head', { to: 6 }],
    ['a negative from', { from: -1 }],
    ['from after to', { from: 4, to: 3 }],
    ['a fractional from', { from: 1.5 }],
    ['a fractional to', { to: 2.5 }],
    ['an unsafe to', { to: 2 ** 53 }],
    ['NaN from', { from: Number.NaN }],
  ])("%s is RANGE_INVALID naming the journal's steps, and no line is read", async (_name, range) => {
    const j = recording(await fileJournal(6));
    const dir = fresh();
    const err = await exportReceipt(j, { out: join(dir, 'r.tar'), ...range }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'RANGE_INVALID',
      message: expect.stringMatching(/is not within the journal's steps 0\.\.5 with from ≤ to/),
    });
    expect(j.asked).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  test("the range's bounds themselves are accepted: 0..head and one step at either end", async () => {
    const j = await fileJournal(6);
    const dir = fresh();
    for (const [from, to] of [
      [0, 5],
      [5, 5],
      [0, 0],
    ] as const) {
      const res = await exportReceipt(j, { out: join(dir, `r-${from}-${to}.tar`), from, to });
      expect([res.range.from, res.range.to, res.head.seq]).toEqual([from, to, to]);
      expect((await verifyReceiptFile(res.out)).ok).toBe(true);
    }
  });

  test('an empty journal is EMPTY_RANGE', async () => {
    const store = new FileStore(join(fresh(), 'store'), { fsync: 'none' });
    await expect(exportReceipt(await store.create('empty'), { out: join(fresh(), 'r.tar') })).rejects.toMatchObject({
      code: 'EMPTY_RANGE',
    });
  });

  test('the journal is read through `to` only: a file journal need not open the buckets after it', async () => {
    const j = recording(await fileJournal(8));
    await exportReceipt(j, { out: join(fresh(), 'r.tar'), from: 1, to: 3 });
    expect(j.asked.length).toBeGreaterThan(0);
    for (const r of j.asked) expect(r).toEqual({ from: 0, to: 3 });
  });

  test.each<[string, unknown]>([
    ['no options', undefined],
    ['no out', {}],
    ['an empty out', { out: '' }],
    ['an out that is not text', { out: 42 }],
  ])('%s is ARGUMENT_INVALID, and nothing is read or written', async (_name, options) => {
    const j = recording(await fileJournal(2));
    await expect(exportReceipt(j, options as never)).rejects.toMatchObject({ code: 'ARGUMENT_INVALID' });
    expect(j.asked).toEqual([]);
    expect(existsSync('42')).toBe(false);
  });
});

describe('temporary files a killed export left', () => {
  // Outsider H: a SIGKILLed export left `<out>.tmp-<pid>-<ms>` beside its output, never removed.
  test("the next export of the same output removes those of processes that are gone; a live one's, and other names, stay", async () => {
    const src = makeFixture({ steps: 3 });
    const dir = fresh();
    const out = join(dir, 'r.tar');
    const gone = Number(execFileSync(process.execPath, ['-p', 'process.pid'], { encoding: 'utf8' }).trim());
    const names = {
      gone: `r.tar.tmp-${gone}-1700000000000`,
      live: `r.tar.tmp-${process.ppid}-1700000000000`,
      other: 'r.tar.tmp-notes',
      otherOutput: `s.tar.tmp-${gone}-1700000000000`,
    };
    for (const name of Object.values(names)) writeFileSync(join(dir, name), 'partial');
    await exportReceipt(src, { out });
    expect(readdirSync(dir).sort()).toEqual(['r.tar', names.live, names.other, names.otherOutput].sort());
    expect((await verifyReceiptFile(out)).ok).toBe(true);
  });
});

describe("RECEIPT §4.3, §5: exportReceipt's signing, extra members, and what it returns", () => {
  test.each<[string, (dir: string) => KeyFileInput]>([
    ['the 32 seed bytes', () => alice.privateKey],
    ['a PKCS#8 PEM text', () => ({ pem: privateKeyToPem(alice.privateKey) })],
    [
      'a key file',
      (dir) => {
        writeFileSync(join(dir, 'k.pem'), privateKeyToPem(alice.privateKey));
        return { keyFile: join(dir, 'k.pem') };
      },
    ],
  ])('sign with %s: signed by that key, and the pinned .pub verifies it', async (_name, sign) => {
    const dir = fresh();
    const res = await exportReceipt(await fileJournal(3), { out: join(dir, 'r.tar'), sign: sign(dir) });
    expect(res.signed_by).toBe(alice.keyId);
    const r = await verifyReceiptFile(res.out, { publicKey: publicKeyToPem(alice.publicKey) });
    expect(r.ok).toBe(true);
    expect(r.signed_by).toBe(alice.keyId);
  });

  test('a key file that cannot be read is KEY_INVALID naming it, and no receipt is written', async () => {
    const dir = fresh();
    const missing = join(dir, 'nope.pem');
    const err = await exportReceipt(await fileJournal(2), {
      out: join(dir, 'r.tar'),
      sign: { keyFile: missing },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'KEY_INVALID',
      message: expect.stringContaining(`cannot read key file ${missing}`),
    });
    expect(readdirSync(dir)).toEqual([]);
    await expect(readKeyFile(missing)).rejects.toMatchObject({ code: 'KEY_INVALID' });
  });

  test('extra manifest members reach the manifest (§4.3), through exportReceipt and receiptInput', async () => {
    const j = await fileJournal(3);
    const out = join(fresh(), 'r.tar');
    await exportReceipt(j, { out, extra: { anchor: { note: 'x' } } });
    const r = await verifyReceiptFile(out, { extensions: { anchor: () => null } });
    expect(r.ok).toBe(true);
    expect(r.manifest!.anchor).toEqual({ note: 'x' });
    expect((await receiptInput(j, { extra: { anchor: 1 } })).extra).toEqual({ anchor: 1 });
    expect((await verifyReceiptFile(out)).problems.map((p) => p.code)).toEqual(['MANIFEST_INVALID']);
  });

  test('the result: out, bytes on disk, compressed, manifest digest, signer, range, head, and the number of tar entries', async () => {
    const src = makeFixture({ steps: 11, bucketSize: 4, blobEvery: 3 });
    const dir = fresh();
    for (const [file, sign] of [
      ['u.tar', undefined],
      ['s.tar', alice.privateKey],
      ['s.tgz', alice.privateKey],
    ] as const) {
      const out = join(dir, file);
      const res = await exportReceipt(src, { out, from: 2, to: 9, ...(sign ? { sign } : {}) });
      const bytes = readFileSync(out);
      const tar = res.compressed ? gunzipSync(bytes) : bytes;
      const r = await verifyReceiptFile(out);
      const head = (await src.head())!;
      expect(res).toEqual({
        out,
        bytes: bytes.length,
        compressed: file.endsWith('.tgz'),
        manifest_digest: r.manifest_digest,
        signed_by: sign ? alice.keyId : null,
        range: { from: 2, to: 9, prev_hash: JSON.parse(src.stored[1]!.text).step_hash },
        head: { seq: 9, step_hash: JSON.parse(src.stored[9]!.text).step_hash },
        entries: tarNames(tar).length,
      });
      expect(head.seq).toBe(10);
      // manifest, the signature when signed, the chain entries (buckets 0–3, 4–7, 8–9) and the blobs of steps 3, 6, 9
      expect(res.entries).toBe(1 + (sign ? 1 : 0) + 3 + 3);
    }
  });
});

describe('RECEIPT §3.1: the file exportReceipt writes', () => {
  test.each<[string, boolean]>([
    ['r.tar', false],
    ['r.tar.gz', true],
    ['r.tgz', true],
    ['R.TAR.GZ', true],
    ['r.TGZ', true],
    ['r.tgz.tar', false],
    ['r.tar.gz.bak', false],
    ['r.gz', false],
  ])('%s: gzip = %s (only names ending .tar.gz or .tgz, any case)', async (file, gzip) => {
    const out = join(fresh(), file);
    const res = await exportReceipt(await fileJournal(2), { out });
    const bytes = readFileSync(out);
    expect(res.compressed).toBe(gzip);
    expect(bytes[0] === 0x1f && bytes[1] === 0x8b).toBe(gzip);
    expect((await verifyReceiptFile(out)).compressed).toBe(gzip);
  });

  test("the gzip is zlib level 9, window 15, memory level 8, default strategy, OS byte 255: the tar's bytes decide the file's", async () => {
    const src = makeFixture({ steps: 40, filler: 200 });
    const out = join(fresh(), 'r.tar.gz');
    await exportReceipt(src, { out, sign: alice.privateKey });
    const file = readFileSync(out);
    const tar = await receiptBytes(src, { sign: alice.privateKey });
    expect(new Uint8Array(gunzipSync(file))).toEqual(tar);
    const expected = gzipSync(tar, { level: 9, memLevel: 8, windowBits: 15, strategy: zc.Z_DEFAULT_STRATEGY });
    expected[9] = 0xff;
    expect(file[9]).toBe(0xff);
    expect(file.equals(expected)).toBe(true);
  });

  test('an output that cannot be written is OUTPUT_FAILED naming it, with the cause; no temporary file is left', async () => {
    const dir = fresh();
    // A directory in the way is refused before anything is written (it would be replaced, or the rename fail).
    const out = join(dir, 'taken');
    mkdirSync(out);
    const refused = (await exportReceipt(await fileJournal(3), { out }).catch((e: unknown) => e)) as Error & {
      code: string;
    };
    expect(refused).toMatchObject({
      code: 'OUTPUT_FAILED',
      location: { file: out },
    });
    expect(readdirSync(dir)).toEqual(['taken']);
    expect(readdirSync(out)).toEqual([]);
    // A path whose folder is a file: the system's error is the cause, and no temporary file is left.
    const other = fresh();
    writeFileSync(join(other, 'plain'), 'x');
    const under = join(other, 'plain', 'r.tgz');
    const journal = await fileJournal(3);
    const err = (await exportReceipt(journal, { out: under }).catch((e: unknown) => e)) as Error & {
      code: string;
      cause: NodeJS.ErrnoException;
    };
    expect(err).toMatchObject({ code: 'OUTPUT_FAILED', message: expect.stringContaining(`cannot write ${under}: `) });
    expect(err.cause.code).toMatch(/^E[A-Z]+$/);
    expect(readdirSync(other)).toEqual(['plain']);
  });

  test('a receipt error while writing (the source changed between the passes) keeps its code; nothing is left', async () => {
    const src = makeFixture({ steps: 6 });
    const plan = await planReceipt(await receiptInput(src));
    src.stored[4] = { ...src.stored[4]!, text: src.stored[4]!.text.replace('input 4', 'input Y') };
    const dir = fresh();
    await expect(writePlanToFile(plan, join(dir, 'r.tgz'))).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
    expect(readdirSync(dir)).toEqual([]);
  });

  test('an export replaces an existing receipt file whole, through a temporary file', async () => {
    const dir = fresh();
    const out = join(dir, 'r.tar');
    writeFileSync(out, 'old');
    await exportReceipt(await fileJournal(2), { out });
    expect((await verifyReceiptFile(out)).ok).toBe(true);
    expect(leftovers(dir)).toEqual([]);
  });
});

describe('RECEIPT §7: verifyReceipt (the root entry) on a path, bytes or a stream', () => {
  test('each input gives the same report', async () => {
    const dir = fresh();
    const out = join(dir, 'r.tar.gz');
    await exportReceipt(await fileJournal(4), { out });
    const bytes = new Uint8Array(readFileSync(out));
    const byPath = await verifyAt(out);
    expect(byPath.ok).toBe(true);
    expect(byPath.compressed).toBe(true);
    expect(await verifyAt(bytes)).toEqual(byPath);
    expect(await verifyAt(createReadStream(out, { highWaterMark: 1000 }))).toEqual(byPath);
    const web = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    });
    expect(await verifyAt(web)).toEqual(byPath);
  });

  test.each<[string, (dir: string) => string]>([
    ['a missing file', (dir) => join(dir, 'missing.tar')],
    [
      'a path through a file',
      (dir) => {
        writeFileSync(join(dir, 'f'), '');
        return join(dir, 'f', 'r.tar');
      },
    ],
  ])('%s is one ARCHIVE_INVALID at that file, never a throw', async (_name, make) => {
    const path = make(fresh());
    for (const r of [await verifyAt(path), await verifyReceiptFile(path)]) {
      expect(r.ok).toBe(false);
      expect(r.problems).toEqual([
        {
          code: 'ARCHIVE_INVALID',
          message: expect.any(String),
          location: { file: path },
        },
      ]);
    }
  });

  test("a file that cannot be opened still goes through the caller's finish, with the caller's options", async () => {
    const path = join(fresh(), 'missing.tar');
    const r = await verifyReceiptFile(path, { finish: (report: ReceiptReport) => ({ ...report, extension: 'seen' }) });
    expect(r).toMatchObject({
      ok: false,
      extension: 'seen',
      problems: [{ code: 'ARCHIVE_INVALID', location: { file: path } }],
    });
  });
});

describe("RECEIPT §5, §5.2: keygen's key files", () => {
  test("writes the PKCS#8 key (0600) and <key>.pub (SPKI, the umask's 0644), and says what it wrote", async () => {
    const file = join(fresh(), 'signing.key');
    const res = await keygen(file, alice);
    expect(res).toEqual({
      keyFile: file,
      publicKeyFile: `${file}.pub`,
      keyId: alice.keyId,
      publicKeyPem: publicKeyToPem(alice.publicKey),
    });
    expect(readFileSync(file, 'utf8')).toBe(privateKeyToPem(alice.privateKey));
    expect(readFileSync(`${file}.pub`, 'utf8')).toBe(res.publicKeyPem);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const umask = process.umask();
    expect(statSync(`${file}.pub`).mode & 0o777).toBe(0o644 & ~umask);
    expect(await readKeyFile(file)).toEqual(alice.privateKey);
    expect(await readPublicKeyFile(`${file}.pub`)).toEqual(alice.publicKey);
  });

  test('an existing key file is KEY_EXISTS naming it; it is left as it was and no .pub is written', async () => {
    const dir = fresh();
    const file = join(dir, 'k');
    writeFileSync(file, 'mine');
    await expect(keygen(file)).rejects.toMatchObject({
      code: 'KEY_EXISTS',
      location: { file },
    });
    expect(readFileSync(file, 'utf8')).toBe('mine');
    expect(readdirSync(dir)).toEqual(['k']);
  });

  test('an existing .pub is KEY_EXISTS naming it; it is left as it was and the new key file is removed', async () => {
    const dir = fresh();
    const file = join(dir, 'k');
    writeFileSync(`${file}.pub`, 'theirs');
    await expect(keygen(file)).rejects.toMatchObject({
      code: 'KEY_EXISTS',
      location: { file: `${file}.pub` },
    });
    expect(readFileSync(`${file}.pub`, 'utf8')).toBe('theirs');
    expect(readdirSync(dir)).toEqual(['k.pub']);
  });

  test('any other failure is OUTPUT_FAILED naming the file, the system error its cause; a key written before it is removed', async () => {
    const dir = fresh();
    const missing = join(dir, 'no-such-dir', 'k');
    await expect(keygen(missing)).rejects.toMatchObject({
      code: 'OUTPUT_FAILED',
      location: { file: missing },
      cause: { code: 'ENOENT' },
      hint: expect.stringContaining('must exist'),
    });
    // 251 + '.pub' passes NAME_MAX (255): the key is written, its .pub cannot be
    const file = join(dir, 'k'.repeat(252));
    await expect(keygen(file)).rejects.toMatchObject({
      code: 'OUTPUT_FAILED',
      location: { file: `${file}.pub` },
      cause: { code: 'ENAMETOOLONG' },
    });
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('RECEIPT §5.2: readPublicKeyFile, the pinned key files', () => {
  const b64 = base64Encode(alice.publicKey);
  const pem = publicKeyToPem(alice.publicKey);
  test.each<[string, string | Uint8Array]>([
    ['the 32 raw bytes', alice.publicKey],
    ['base64 text with a newline', `${b64}\n`],
    ['base64 text in whitespace', ` \t${b64}\r\n`],
    ["keygen's SPKI PEM", pem],
    ['the SPKI PEM with CRLF line ends', pem.replace(/\n/g, '\r\n')],
  ])('accepts %s', async (_name, content) => {
    const file = join(fresh(), 'key.pub');
    writeFileSync(file, content);
    expect(await readPublicKeyFile(file)).toEqual(alice.publicKey);
  });

  test.each<[string, string | Uint8Array, RegExp]>([
    ['an empty file', '', /: is empty \(0 bytes\)$/],
    ['a private key', privateKeyToPem(alice.privateKey), /: is a PEM private key/],
    [
      'hex text (which reads as the base64 of 48 bytes)',
      Buffer.from(alice.publicKey).toString('hex'),
      /: is the base64 of 48 bytes; an Ed25519 public key is 32$/,
    ],
    ['text that is neither base64 nor PEM', 'ed25519 key', /: is text but neither canonical base64/],
    [
      '31 raw bytes',
      alice.publicKey.subarray(0, 31),
      /: is 31 bytes that are neither 32 raw key bytes nor UTF-8 text$/,
    ],
    ['the identity point', Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 1 : 0)), /small order/],
  ])('refuses %s: KEY_INVALID naming the file, with its reason and a hint', async (_name, content, why) => {
    const file = join(fresh(), 'key.pub');
    writeFileSync(file, content);
    const err = (await readPublicKeyFile(file).catch((e: unknown) => e)) as Error & {
      code: string;
      location: unknown;
      hint: string;
    };
    expect(err.code).toBe('KEY_INVALID');
    // The file is the location; the reason is what tells these defects apart (one code for all of them).
    expect(err.message.split(' (give the')[0]).toMatch(why);
    expect(err.message).not.toMatch(/the pinned key /);
    expect(err.location).toEqual({ file });
    expect(err.hint).toMatch(/keyfile\.pub/);
  });

  test('a file of exactly 64 KiB is read (and refused as text too long for a key); one byte more is refused by its size', async () => {
    const dir = fresh();
    const at = join(dir, 'at.pub');
    writeFileSync(at, `${b64}${' '.repeat(64 * 1024 - b64.length)}`);
    await expect(readPublicKeyFile(at)).rejects.toMatchObject({
      code: 'KEY_INVALID',
      message: expect.stringMatching(/: is 65536 characters of text/),
    });
    const over = join(dir, 'over.pub');
    writeFileSync(over, `${b64}${' '.repeat(64 * 1024 + 1 - b64.length)}`);
    await expect(readPublicKeyFile(over)).rejects.toMatchObject({
      code: 'KEY_INVALID',
      message: expect.stringMatching(/: is 65537 bytes; a public key file is at most 65536/),
    });
  });

  // procfs files are regular files that stat as 0 bytes: only the read loop's own count bounds them.
  test.runIf(existsSync('/proc/kallsyms'))(
    'a regular file that says it is empty but holds more is cut at 64 KiB (Linux /proc/kallsyms)',
    async () => {
      expect(statSync('/proc/kallsyms').size).toBe(0);
      await expect(readPublicKeyFile('/proc/kallsyms')).rejects.toMatchObject({
        code: 'KEY_INVALID',
        message: expect.stringMatching(/: holds more than 65536 bytes/),
      });
    },
  );

  test.each<[string, (dir: string) => string, string]>([
    ['a missing file', (dir) => join(dir, 'missing.pub'), 'cannot be read: no such file ('],
    [
      'a path through a file',
      (dir) => {
        writeFileSync(join(dir, 'f'), '');
        return join(dir, 'f', 'k.pub');
      },
      'cannot be read: ENOTDIR',
    ],
    ['a directory', (dir) => dir, 'is not a regular file ('],
    [
      'a FIFO (not waited on)',
      (dir) => {
        execFileSync('mkfifo', [join(dir, 'fifo')]);
        return join(dir, 'fifo');
      },
      'is not a regular file (',
    ],
    ['a device', () => '/dev/null', 'is not a regular file ('],
  ])('refuses %s: KEY_INVALID naming the file, never "no pin"', async (_name, make, why) => {
    const file = make(fresh());
    const err = (await readPublicKeyFile(file).catch((e: unknown) => e)) as Error & { code: string; location: unknown };
    expect(err.code).toBe('KEY_INVALID');
    expect(err.message).toContain(`: ${why}`);
    expect(err.location).toEqual({ file });
  });

  // Each read opens the file; every outcome closes it. A leak would show as one more open descriptor per read.
  test.runIf(existsSync('/proc/self/fd'))(
    'reading key files, good or refused, leaves no file open (Linux /proc/self/fd)',
    async () => {
      const dir = fresh();
      writeFileSync(join(dir, 'good.pub'), pem);
      writeFileSync(join(dir, 'bad.pub'), 'nonsense');
      const open = (): number => readdirSync('/proc/self/fd').length;
      const before = open();
      for (let i = 0; i < 20; i++) {
        await readPublicKeyFile(join(dir, 'good.pub'));
        await readPublicKeyFile(join(dir, 'bad.pub')).catch(() => {});
        await readPublicKeyFile(dir).catch(() => {});
      }
      expect(open() - before).toBeLessThan(10);
    },
  );
});
