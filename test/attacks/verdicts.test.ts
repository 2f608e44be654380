/**
 * Outside attacks on the three verdicts, the pins and published views (docs/auditors.md,
 * docs/published-views.md, spec/RECEIPT.md §8.1, spec/REDACTION.md §12, spec/PROOFS.md §9.8, §11.1), run
 * through the built CLI (dist/cli/main.js) on real files: in one process of the CLI (test/helpers/cli-sync.ts),
 * except the checks that it never hangs on hostile input, which start it for real and kill it at their limit.
 *
 * The genuine side (a journal, alice's signing key, a log key, witnesses) is made with the CLI; the attacker
 * holds only what is public — the receipt, the publication, the checkpoints, the verifier keys — plus keys and
 * journals of its own, and rewrites archives byte by byte (same tar profile as `stepchain export`).
 *
 * A test that FAILS here is an attack that succeeded (see the comment above it); a passing test is an attack
 * the product held, kept as a regression test.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { MORE, POLICY, STEP } from '../helpers/attack-world.js';
import { header, jcs, sha, tarOf, untar } from '../helpers/receipt-tar.js';
import { syncCli } from '../helpers/cli-sync.js';
import { tempDir } from '../helpers/tmp.js';

const ROOT = resolve(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const dir = tempDir('stepchain-attack-verdicts-');

interface Run {
  rc: number | null;
  out: string;
  err: string;
  ms: number;
  // biome-ignore lint: any JSON
  json: any;
}

const inProcess = syncCli({ NO_COLOR: '1' });
/** A call given a `timeout` is a check that the CLI never hangs: it starts a process, killed at that limit. */
function cli(args: string[], opts: { input?: string; timeout?: number } = {}): Run {
  const t0 = Date.now();
  const r =
    opts.timeout === undefined
      ? inProcess({ args, cwd: dir, input: opts.input })
      : spawnSync(process.execPath, [CLI, ...args], {
          cwd: dir,
          input: opts.input,
          timeout: opts.timeout,
          env: { ...process.env, NO_COLOR: '1' },
        });
  const out = r.stdout?.toString() ?? '';
  const err = r.stderr?.toString() ?? '';
  let json: unknown = null;
  try {
    json = JSON.parse(out);
  } catch {
    json = null;
  }
  return { rc: r.status, out, err, ms: Date.now() - t0, json };
}
const ok = (args: string[], input?: string): string => {
  const r = cli(args, { input });
  if (r.rc !== 0) throw new Error(`stepchain ${args.join(' ')} failed (${r.rc}): ${r.err}`);
  return r.out + r.err;
};
const f = (name: string): string => join(dir, name);

// ---------- archives, rebuilt as `stepchain export` writes them (ustar profile, mtime 0, no padding) ----------

let TEMPLATE: Buffer; // a genuine 512-byte header

const tar = (entries: Array<[string, Buffer]>): Buffer => tarOf(TEMPLATE, entries);

/**
 * Rewrites a receipt as the attacker: `lines` edits the chain file's lines (raw strings), `manifest` the
 * parsed manifest; chain digests and sizes are recomputed; the signature is dropped unless keepSig.
 */
function forge(
  src: string,
  out: string,
  edit: {
    lines?: (lines: string[]) => string[];
    // biome-ignore lint: JSON
    manifest?: (m: any) => void;
    rawManifest?: (s: string) => string;
    keepSig?: boolean;
  },
): string {
  const entries = untar(readFileSync(f(src)));
  const files = new Map(entries);
  const m = JSON.parse(files.get('manifest.json')!.toString('utf8'));
  for (const c of m.chain) {
    let body = files.get(c.name)!.toString('utf8');
    if (edit.lines) {
      const ls = body.split('\n');
      const last = ls.pop();
      body = `${edit.lines(ls).join('\n')}\n${last ?? ''}`;
    }
    const b = Buffer.from(body, 'utf8');
    files.set(c.name, b);
    c.digest = sha(b);
    c.size = b.length;
  }
  edit.manifest?.(m);
  let ms = jcs(m);
  if (edit.rawManifest) ms = edit.rawManifest(ms);
  const list: Array<[string, Buffer]> = [['manifest.json', Buffer.from(ms, 'utf8')]];
  if (edit.keepSig && files.has('manifest.sig.json')) list.push(['manifest.sig.json', files.get('manifest.sig.json')!]);
  for (const c of m.chain) list.push([c.name, files.get(c.name)!]);
  const data = tar(list);
  writeFileSync(f(out), out.endsWith('.gz') ? gzipSync(data) : data);
  return out;
}

// ---------- the genuine world, and the attacker's own ----------

const JSON_LINES = `${MORE.map((s) => JSON.stringify(s)).join('\n')}\n`;
let MID: string; // the genuine chain's step 1
let HEAD: string; // genuine head (runs/today, 3 steps)
let MAL_HEAD: string; // the attacker's journal's head
let W1: string;
let W2: string;
let W1_IMPOSTOR: string;
let LOG_VKEY: string;

beforeAll(() => {
  writeFileSync(f('step.json'), JSON.stringify(STEP));
  writeFileSync(f('more.jsonl'), `${MORE.map((s) => JSON.stringify(s)).join('\n')}\n`);
  writeFileSync(f('policy.json'), JSON.stringify(POLICY));
  for (const k of ['alice', 'mallory', 'log', 'evil', 'w1', 'w2', 'w1impostor']) ok(['keygen', '-o', `${k}.key`]);
  // genuine journal, receipt, publication, checkpoint (size 3), witness cosignature. The matrix is of the v2
  // publication with a secrets file (v3 publications: v3-publication-cli.test.ts, v3-outsider.test.ts).
  ok(['init', 'runs/today', '--format', 'v2']);
  ok(['append', 'runs/today', '--file', 'step.json']);
  MID = ok(['append', 'runs/today', '--jsonl'], JSON_LINES).split('\n')[0]!.split(' ')[1]!;
  HEAD = ok(['head', 'runs/today']).trim().split(' ')[1]!;
  ok(['export', 'runs/today', '-o', 'receipt.tar.gz', '--sign', 'alice.key']);
  ok(['export', 'runs/today', '-o', 'receipt.tar']);
  TEMPLATE = readFileSync(f('receipt.tar')).subarray(0, 512);
  ok([
    'publish',
    'runs/today',
    '--policy',
    'policy.json',
    '--opt-in',
    '-o',
    'public.tar.gz',
    '--secrets-out',
    'public.secrets.json',
  ]);
  LOG_VKEY = cli([
    'checkpoint',
    'runs/today',
    '--sign',
    'log.key',
    '--authority',
    'agents.example.com',
    '-o',
    'cp3.checkpoint',
    '--json',
  ]).json.vkey;
  writeFileSync(f('log.vkey'), `${LOG_VKEY}\n`);
  W1 = ok(['witness', '--key', 'w1.key', '--name', 'witness.example/w1']).split('\n')[0]!.trim();
  W2 = ok(['witness', '--key', 'w2.key', '--name', 'witness.example/w2']).split('\n')[0]!.trim();
  W1_IMPOSTOR = ok(['witness', '--key', 'w1impostor.key', '--name', 'witness.example/w1']).split('\n')[0]!.trim();
  writeFileSync(f('w1.vkey'), `${W1}\n`);
  ok([
    'witness',
    'cp3.checkpoint',
    '--key',
    'w1.key',
    '--name',
    'witness.example/w1',
    '--state',
    'w1state',
    '--log-key',
    LOG_VKEY,
    '-o',
    'cp3.w1',
  ]);
  ok([
    'witness',
    'cp3.checkpoint',
    '--key',
    'w1impostor.key',
    '--name',
    'witness.example/w1',
    '--state',
    'w1istate',
    '--log-key',
    LOG_VKEY,
    '-o',
    'cp3.impostor',
  ]);
  // the attacker's journal with the same content, signed with its own key; a checkpoint of it signed by the
  // genuine log key (the log serves several journals) and one by the attacker's key
  ok(['init', 'mal', '--format', 'v2']);
  ok(['append', 'mal', '--file', 'step.json']);
  ok(['append', 'mal', '--jsonl'], JSON_LINES);
  MAL_HEAD = ok(['head', 'mal']).trim().split(' ')[1]!;
  ok(['export', 'mal', '-o', 'forged.tar.gz', '--sign', 'mallory.key']);
  ok(['checkpoint', 'mal', '--sign', 'log.key', '--authority', 'agents.example.com', '-o', 'mal-logsigned.checkpoint']);
  // equal-size fork: a copy of a 2-step journal (same genesis, same origin) grown differently to size 4
  mkdirSync(f('g'));
  mkdirSync(f('fk'));
  ok(['init', 'g/today', '--format', 'v2']);
  ok(['append', 'g/today', '--file', 'step.json']);
  ok(['append', 'g/today', '--file', 'step.json']);
  cpSync(f('g/today'), f('fk/today'), { recursive: true });
  ok(['append', 'g/today', '--jsonl'], JSON_LINES);
  writeFileSync(f('alt.json'), JSON.stringify({ input: { user: 'x' }, model: 'm', prompt: 'p', result: 'FORKED' }));
  ok(['append', 'fk/today', '--file', 'alt.json']);
  ok(['append', 'fk/today', '--file', 'alt.json']);
  writeFileSync(
    f('glog.vkey'),
    `${cli(['checkpoint', 'g/today', '--sign', 'log.key', '--authority', 'agents.example.com', '-o', 'g4.checkpoint', '--json']).json.vkey}\n`,
  );
  ok(['checkpoint', 'fk/today', '--sign', 'log.key', '--authority', 'agents.example.com', '-o', 'f4.checkpoint']);
  ok(['checkpoint', 'fk/today', '--sign', 'evil.key', '--authority', 'agents.example.com', '-o', 'fevil.checkpoint']);
  ok(['export', 'g/today', '-o', 'g.tar.gz', '--sign', 'alice.key']);
  ok(['export', 'fk/today', '-o', 'fk-carry.tar.gz', '--checkpoint', 'fevil.checkpoint', '--sign', 'mallory.key']);
}, 120_000);

const verdictOf = (r: Run) => ({
  rc: r.rc,
  ok: r.json?.ok,
  authenticated: r.json?.authenticated,
  verdict: r.json?.verdict,
});
const codes = (r: Run): string[] =>
  (r.json?.report?.problems ?? r.json?.problems ?? []).map((p: { code: string }) => p.code);

// =====================================================================================================
describe('forged receipts and wrong pins (held)', () => {
  it("a receipt re-chained and signed by the attacker is INVALID against alice's pinned key", () => {
    const r = cli(['verify', 'forged.tar.gz', '--pubkey', 'alice.key.pub', '--json']);
    expect(verdictOf(r)).toMatchObject({ rc: 1, ok: false, authenticated: false, verdict: 'invalid' });
  });
  it('the same forgery unpinned is only "intact, NOT authenticated"; --require-pin exits 1', () => {
    const r = cli(['verify', 'forged.tar.gz', '--json']);
    expect(verdictOf(r)).toMatchObject({ rc: 0, ok: true, authenticated: false, verdict: 'intact' });
    const h = cli(['verify', 'forged.tar.gz']);
    expect(h.err).toMatch(/intact, NOT authenticated/);
    expect(h.err).not.toMatch(/✔ authenticated/);
    expect(cli(['verify', 'forged.tar.gz', '--require-pin']).rc).toBe(1);
    expect(cli(['verify', 'forged.tar.gz', '--require-pin', '--log-key', 'log.vkey']).rc).toBe(1);
  });
  it('a signature by an unpinned key (the receipt names its own signer) never authenticates', () => {
    const r = cli(['verify', 'receipt.tar.gz', '--json']);
    expect(verdictOf(r)).toMatchObject({ rc: 0, authenticated: false, verdict: 'intact' });
  });
  it("the genuine head pinned on the attacker's receipt, and the attacker's head on the genuine one: INVALID", () => {
    expect(verdictOf(cli(['verify', 'forged.tar.gz', '--head', HEAD, '--json']))).toMatchObject({
      rc: 1,
      authenticated: false,
    });
    expect(verdictOf(cli(['verify', 'receipt.tar.gz', '--head', MAL_HEAD, '--json']))).toMatchObject({
      rc: 1,
      authenticated: false,
    });
    // a head of the genuine chain, but not its end
    const mid = cli(['verify', 'receipt.tar.gz', '--head', MID, '--json']);
    expect(verdictOf(mid)).toMatchObject({ rc: 1, authenticated: false });
    expect(codes(mid)).toContain('HEAD_MISMATCH');
  });
  it('malformed or empty pins are errors (exit 2), never "no pin"', () => {
    for (const args of [
      ['--head', ''],
      ['--head', HEAD.toUpperCase()],
      ['--head', HEAD.slice(7)],
      ['--head', ` ${HEAD}`],
      ['--pubkey', ''],
      ['--pubkey', 'alice.key'],
      ['--log-key', ''],
      ['--checkpoint', ''],
    ]) {
      const r = cli(['verify', 'receipt.tar.gz', ...args, '--json']);
      expect(r.rc, args.join(' ')).toBe(2);
      expect(r.json?.authenticated, args.join(' ')).not.toBe(true);
    }
  });
  it("a checkpoint of the genuine journal does not authenticate the attacker's receipt", () => {
    expect(
      verdictOf(cli(['verify', 'forged.tar.gz', '--checkpoint', 'cp3.checkpoint', '--log-key', 'log.vkey', '--json'])),
    ).toMatchObject({ rc: 1, authenticated: false });
  });
  it("a checkpoint of the attacker's journal signed by the genuine log key does not pass for this journal (ORIGIN_MISMATCH, exit 2)", () => {
    const r = cli([
      'verify',
      'forged.tar.gz',
      '--checkpoint',
      'mal-logsigned.checkpoint',
      '--log-key',
      'log.vkey',
      '--json',
    ]);
    expect(r.rc).toBe(2);
    expect(r.out + r.err).toMatch(/ORIGIN_MISMATCH/);
    const j = cli([
      'verify',
      'runs/today',
      '--checkpoint',
      'mal-logsigned.checkpoint',
      '--log-key',
      'log.vkey',
      '--json',
    ]);
    expect(j.rc).toBe(2);
  });
  it('a checkpoint pinned without its log key authenticates nothing (--require-pin exits 1)', () => {
    expect(verdictOf(cli(['verify', 'receipt.tar.gz', '--checkpoint', 'cp3.checkpoint', '--json']))).toMatchObject({
      rc: 0,
      authenticated: false,
    });
    expect(cli(['verify', 'runs/today', '--checkpoint', 'cp3.checkpoint', '--require-pin']).rc).toBe(1);
  });
  it("a carried checkpoint signed by the attacker's key under the genuine origin is not the log's (invalid with --log-key)", () => {
    const r = cli(['verify', 'fk-carry.tar.gz', '--log-key', 'glog.vkey', '--json']);
    expect(verdictOf(r)).toMatchObject({ rc: 1, authenticated: false });
    const p = cli(['verify', 'g/today', '--checkpoint', 'fevil.checkpoint', '--log-key', 'glog.vkey', '--json']);
    expect(p.rc).toBe(2);
    expect(p.out + p.err).toMatch(/SIGNATURE_MISSING/);
  });
});

// =====================================================================================================
describe('witness policy', () => {
  it('held: no cosignature, an impostor cosignature under the witness name, a witness named twice, the log key as a witness, 1 of 2', () => {
    const base = ['verify', 'receipt.tar.gz', '--log-key', 'log.vkey', '--json'];
    const cases: string[][] = [
      ['--checkpoint', 'cp3.checkpoint', '--witness', W1, '--quorum', '1'],
      ['--checkpoint', 'cp3.checkpoint', '--witness', W1],
      ['--checkpoint', 'cp3.impostor', '--witness', W1, '--quorum', '1'],
      ['--checkpoint', 'cp3.w1', '--witness', W1, '--witness', W1, '--quorum', '2'],
      [
        '--checkpoint',
        'cp3.w1',
        '--witness',
        W1,
        '--witness',
        W1_IMPOSTOR.replace('witness.example/w1', 'witness.example/w1'),
        '--quorum',
        '2',
      ],
      ['--checkpoint', 'cp3.checkpoint', '--witness', LOG_VKEY, '--quorum', '1'],
      ['--checkpoint', 'cp3.w1', '--witness', W1, '--witness', W2, '--quorum', '2'],
      ['--checkpoint', 'cp3.checkpoint', '--witness', W1, '--quorum', '1.5'],
      ['--checkpoint', 'cp3.checkpoint', '--witness', W1, '--quorum', '1e0'],
      ['--checkpoint', 'cp3.checkpoint', '--witness', W1, '--quorum', '+1'],
    ];
    for (const c of cases) {
      const r = cli([...base, ...c]);
      expect(r.rc, c.join(' ')).not.toBe(0);
      expect(r.json?.authenticated, c.join(' ')).not.toBe(true);
    }
    expect(verdictOf(cli([...base, '--checkpoint', 'cp3.w1', '--witness', W1, '--quorum', '1']))).toMatchObject({
      rc: 0,
      authenticated: true,
    });
  });

  // ATTACK (succeeded): an empty or blank --quorum (`--quorum "$K"` with K unset, or " ") is read as 0, so
  // a checkpoint with NO witness cosignature is accepted — and authenticates — under `--witness W1`. The
  // quorum is a pin's policy; an unusable one must be an error (exit 2), never a weaker policy. (A written
  // 0 is documented: "a quorum of zero trusts the log alone"; an empty string is not a number.) Repro:
  //   stepchain verify receipt.tar.gz --checkpoint cp3.checkpoint --log-key log.vkey --witness "$W1" --quorum ""
  //   → ✔ authenticated, exit 0 (cp3.checkpoint carries only the log's signature). Same with --quorum " ",
  //   "-0", "00", "0.0", on journals and on --proof.
  it('ATTACK: --quorum "" (or " ") with --witness accepts a checkpoint lacking every witness cosignature', () => {
    for (const q of ['', ' ', '-0', '0.0']) {
      const r = cli([
        'verify',
        'receipt.tar.gz',
        '--checkpoint',
        'cp3.checkpoint',
        '--log-key',
        'log.vkey',
        '--witness',
        W1,
        `--quorum=${q}`,
        '--json',
      ]);
      expect({ q, rc: r.rc, authenticated: r.json?.authenticated }).toEqual({ q, rc: 2, authenticated: undefined });
    }
  });
  it('ATTACK: the same empty --quorum on a journal and on --proof', () => {
    const j = cli([
      'verify',
      'runs/today',
      '--checkpoint',
      'cp3.checkpoint',
      '--log-key',
      'log.vkey',
      '--witness',
      W1,
      '--quorum=',
      '--json',
    ]);
    expect(j.rc).toBe(2);
    ok(['prove', 'runs/today', '--checkpoint', 'cp3.checkpoint', '--from', '0', '--to', '1', '-o', 's.proof']);
    const p = cli(['verify', '--proof', 's.proof', '--log-key', 'log.vkey', '--witness', W1, '--quorum=', '--json']);
    expect(p.rc).toBe(2);
  });
});

// =====================================================================================================
describe('equal-size checkpoints (held)', () => {
  it('a checkpoint of the same size with another root is FORKED, for a journal and a receipt, with or without its log key', () => {
    for (const args of [
      ['g/today', '--checkpoint', 'f4.checkpoint', '--log-key', 'glog.vkey'],
      ['g/today', '--checkpoint', 'f4.checkpoint'],
      ['g.tar.gz', '--checkpoint', 'f4.checkpoint', '--log-key', 'glog.vkey'],
      ['g.tar.gz', '--checkpoint', 'f4.checkpoint', '--pubkey', 'alice.key.pub'],
    ]) {
      const r = cli(['verify', ...args, '--json']);
      expect(verdictOf(r), args.join(' ')).toMatchObject({ rc: 1, ok: false, authenticated: false });
      expect(codes(r), args.join(' ')).toContain('FORKED');
    }
  });
  it('the same root needs no proof; prove --old refuses a fork', () => {
    expect(
      verdictOf(cli(['verify', 'g.tar.gz', '--checkpoint', 'g4.checkpoint', '--log-key', 'glog.vkey', '--json'])),
    ).toMatchObject({ rc: 0, authenticated: true });
    const p = cli([
      'prove',
      'g/today',
      '--old',
      'f4.checkpoint',
      '--checkpoint',
      'g4.checkpoint',
      '-o',
      'x.proof',
      '--json',
    ]);
    expect(p.rc).toBe(1);
    expect(p.out + p.err).toMatch(/FORKED/);
  });
});

// =====================================================================================================
describe('input files: size bounds and non-regular files', () => {
  beforeAll(() => {
    spawnSync('mkfifo', [f('fifo')]);
    mkdirSync(f('adir'), { recursive: true });
    writeFileSync(f('big.txt'), Buffer.alloc(2_000_000, 0x41));
    writeFileSync(f('big5.bin'), Buffer.alloc(5_000_000, 0x20));
  });
  it('held: FIFO, device, directory, symlink to a device, oversized — refused at once (exit 2 / LIMIT_EXCEEDED)', () => {
    const runs: Array<[string[], number]> = [];
    for (const p of ['/dev/zero', 'fifo', 'adir', 'big.txt']) {
      runs.push([['verify', 'receipt.tar.gz', '--checkpoint', p], 2]);
      runs.push([['verify', 'receipt.tar.gz', '--pubkey', p], 2]);
      runs.push([['verify', 'receipt.tar.gz', '--log-key', p], 2]);
    }
    runs.push([['verify', '--proof', 'fifo', '--log-key', 'log.vkey'], 2]);
    runs.push([['verify', '--proof', '/dev/zero', '--log-key', 'log.vkey'], 2]);
    runs.push([['verify', '--proof', 'big5.bin', '--log-key', 'log.vkey'], 1]);
    for (const [args, rc] of runs) {
      const r = cli([...args, '--json'], { timeout: 20_000 });
      expect(r.rc, args.join(' ')).toBe(rc);
      expect(r.err, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });

  // ATTACK (succeeded): a verifier-key file over its 64 KiB limit is accepted when the bytes past the key are
  // whitespace. spec/PROOFS.md §11.1: "a larger file fails its limit (LIMIT_EXCEEDED, or an unusable key)";
  // docs/auditors.md: verifier-key files are read "at most one byte past their limits (… 64 KiB)". Repro:
  //   (cat log.vkey; head -c 100000 /dev/zero | tr '\0' ' ') > big.vkey
  //   stepchain verify receipt.tar.gz --checkpoint cp3.checkpoint --log-key big.vkey   → ✔ authenticated, exit 0
  // (a 300 MB such file too — memory stays bounded, but the file is not refused); the same for --witness
  // files and for `stepchain witness --log-key`. A public key file of the same shape is refused (exit 2).
  it('ATTACK: a --log-key file of 100 KB (the key, then spaces) is accepted instead of failing its 64 KiB limit', () => {
    writeFileSync(f('big.vkey'), Buffer.concat([Buffer.from(`${LOG_VKEY}\n`), Buffer.alloc(100_000, 0x20)]));
    const r = cli(['verify', 'receipt.tar.gz', '--checkpoint', 'cp3.checkpoint', '--log-key', 'big.vkey', '--json']);
    expect(r.rc).toBe(2);
  });
  it('ATTACK: a --witness file of 100 KB (the key, then newlines) is accepted instead of failing its 64 KiB limit', () => {
    writeFileSync(f('bigw1.vkey'), Buffer.concat([Buffer.from(`${W1}\n`), Buffer.alloc(100_000, 0x0a)]));
    const r = cli([
      'verify',
      'receipt.tar.gz',
      '--checkpoint',
      'cp3.w1',
      '--log-key',
      'log.vkey',
      '--witness',
      'bigw1.vkey',
      '--json',
    ]);
    expect(r.rc).toBe(2);
  });
  it('ATTACK: `stepchain witness --log-key` reads a 100 KB verifier-key file and cosigns instead of failing its 64 KiB limit', () => {
    writeFileSync(f('big-w.vkey'), Buffer.concat([Buffer.from(`${LOG_VKEY}\n`), Buffer.alloc(100_000, 0x20)]));
    const r = cli([
      'witness',
      'cp3.checkpoint',
      '--key',
      'w2.key',
      '--name',
      'witness.example/w2',
      '--state',
      'w2big',
      '--log-key',
      'big-w.vkey',
      '-o',
      'cp3.w2big',
    ]);
    expect(r.rc).toBe(2);
  });
  it('held: a public key file of 100 KB (the key, then spaces) is refused', () => {
    writeFileSync(f('bigpub.txt'), Buffer.concat([readFileSync(f('alice.key.pub')), Buffer.alloc(100_000, 0x20)]));
    expect(cli(['verify', 'receipt.tar.gz', '--pubkey', 'bigpub.txt']).rc).toBe(2);
  });
  it('held: a checkpoint file over 1 MiB (the note, then newlines) fails LIMIT_EXCEEDED', () => {
    writeFileSync(f('bigcp.txt'), Buffer.concat([readFileSync(f('cp3.checkpoint')), Buffer.alloc(1_100_000, 0x0a)]));
    const r = cli(['verify', 'receipt.tar.gz', '--checkpoint', 'bigcp.txt', '--log-key', 'log.vkey']);
    expect(r.rc).toBe(2);
    expect(r.err).toMatch(/LIMIT_EXCEEDED/);
  });
});

// =====================================================================================================
describe('published receipts: rewritten values', () => {
  const BLANKET = /every (disclosed|shown) value is the original/i;

  it('held: rewriting the text of a redacted view still verifies, and every CLI surface lists it as NOT bound', () => {
    forge('public.tar.gz', 'view-rewritten.tar', {
      lines: (ls) => ls.map((l, i) => (i === 1 ? l.replace('"price":59', '"price":5') : l)),
    });
    const h = cli(['verify', 'view-rewritten.tar', '--head', HEAD]);
    expect(h.rc).toBe(0);
    expect(h.err).toMatch(/NOT BOUND/);
    expect(h.err).toMatch(/not bound seq 1 \/result/);
    expect(h.err).not.toMatch(BLANKET);
    const j = cli(['verify', 'view-rewritten.tar', '--head', HEAD, '--json']);
    expect(j.json.report.unbound).toContainEqual({ seq: 1, field: 'result', path: '/result', why: 'view' });
    expect(j.json.report.unbound_count).toBe(2);
    expect(JSON.stringify(j.json)).not.toMatch(BLANKET);
    const d = cli(['diff', 'public.tar.gz', 'view-rewritten.tar']);
    expect(d.out + d.err).toMatch(/not bound seq 1 \/result/);
  });

  it('held: a disclosed slot turned into a "view" (its digest computed from the public salt) is listed as NOT bound', () => {
    forge('public.tar.gz', 'disclosed-as-view.tar', {
      lines: (ls) =>
        ls.map((l, i) => {
          if (i !== 2) return l;
          const r = JSON.parse(l);
          const salt = r.salts.result;
          delete r.salts.result;
          r.digests = { result: sha(`stepchain/v2 slot\n${salt}\n${jcs(['result', r.result])}`) };
          r.result = {
            summary: 'Rain in Lyon; no flights.',
            x: { '$stepchain:redacted': { commitment: `sha256:${'ab'.repeat(32)}`, rule: 'secrets' } },
          };
          return jcs(r);
        }),
      manifest: (m) => {
        m.redactions.push({ path: '/result/x', rule: 'secrets', seq: 2 });
        m.redactions.sort(
          (a: { seq: number; path: string }, b: { seq: number; path: string }) =>
            a.seq - b.seq || (a.path < b.path ? -1 : 1),
        );
      },
    });
    const j = cli(['verify', 'disclosed-as-view.tar', '--head', HEAD, '--json']);
    expect(j.json?.ok).toBe(true);
    expect(j.json.report.unbound).toContainEqual({ seq: 2, field: 'result', path: '/result', why: 'view' });
    const h = cli(['verify', 'disclosed-as-view.tar', '--head', HEAD]);
    expect(h.err).toMatch(/not bound seq 2 \/result/);
    expect(h.err).not.toMatch(BLANKET);
  });

  it('held: the same, but with the marker removed (a "view" with no marker) is VIEW_INVALID', () => {
    forge('public.tar.gz', 'view-no-marker.tar', {
      lines: (ls) =>
        ls.map((l, i) => {
          if (i !== 2) return l;
          const r = JSON.parse(l);
          const salt = r.salts.result;
          delete r.salts.result;
          r.digests = { result: sha(`stepchain/v2 slot\n${salt}\n${jcs(['result', r.result])}`) };
          r.result = 'Rain in Lyon; no flights.';
          return jcs(r);
        }),
    });
    const r = cli(['verify', 'view-no-marker.tar', '--head', HEAD, '--json']);
    expect(r.rc).toBe(1);
    expect(codes(r)).toContain('VIEW_INVALID');
  });

  it('held: a withheld slot dressed in marker text is VIEW_INVALID', () => {
    forge('public.tar.gz', 'withheld-text.tar', {
      lines: (ls) =>
        ls.map((l, i) =>
          i === 1 ? l.replace('"rule":"tool-secrets"}', '"rule":"tool-secrets","text":"sk-test-nothing-to-see"}') : l,
        ),
    });
    const r = cli(['verify', 'withheld-text.tar', '--head', HEAD, '--json']);
    // the api_key marker is inside the tool_call view, so its text is view text: listed unbound, or refused
    expect(
      r.rc === 1 ||
        (r.json?.report?.unbound ?? []).some(
          (u: { seq: number; field: string }) => u.seq === 1 && u.field === 'tool_call',
        ),
    ).toBe(true);
  });

  it('held: any byte change to a disclosed value fails against the original head (value, number spelling, escape, duplicate key)', () => {
    const edits: Array<[string, (l: string) => string]> = [
      ['value', (l) => l.replace('"forecast":"sunny"', '"forecast":"rainy"')],
      ['number', (l) => l.replace('"high_c":14}', '"high_c":14.0000000000000001}')],
      ['escape', (l) => l.replace('"sunny"', '"\\u0073unny"')],
      [
        'dupkey',
        (l) =>
          l.replace(
            '"result":{"forecast":"sunny"',
            '"result":{"forecast":"rainy","high_c":99},"result":{"forecast":"sunny"',
          ),
      ],
      ['bignum', (l) => l.replace('"high_c":14}', '"high_c":1e400}')],
      ['hugeint', (l) => l.replace('"high_c":14}', '"high_c":123456789012345678901234567890}')],
    ];
    for (const [name, e] of edits) {
      forge('public.tar.gz', `pub-${name}.tar`, { lines: (ls) => ls.map((l, i) => (i === 0 ? e(l) : l)) });
      const r = cli(['verify', `pub-${name}.tar`, '--head', HEAD, '--json']);
      expect(verdictOf(r), name).toMatchObject({ rc: 1, ok: false, authenticated: false });
    }
  });

  it('held: a disclosure proof re-pointed at a rewritten publication still says the marker is NOT bound to the head', () => {
    ok([
      'disclose',
      'public.tar.gz',
      '--secrets',
      'public.secrets.json',
      '--seq',
      '1',
      '--path',
      '/result/contact',
      '-o',
      'contact.proof.json',
    ]);
    const md = cli(['verify', 'view-rewritten.tar', '--json']).json.report.manifest_digest;
    const p = JSON.parse(readFileSync(f('contact.proof.json'), 'utf8'));
    p.manifest_digest = md;
    writeFileSync(f('contact.repointed.json'), JSON.stringify(p));
    const r = cli(['disclose', 'view-rewritten.tar', '--check', 'contact.repointed.json']);
    expect(r.err).toMatch(/NOT bound to the original head/);
  });
});

// =====================================================================================================
describe('hostile archives: no crash, no hang, no green verdict (held)', () => {
  const hostile = (name: string, bytes: Buffer) => {
    writeFileSync(f(name), bytes);
    const r = cli(['verify', name, '--json'], { timeout: 30_000 });
    expect(r.rc, name).toBe(1);
    expect(r.json?.ok, name).toBe(false);
    expect(r.json?.authenticated, name).toBe(false);
    expect(r.err, name).not.toMatch(/\n\s+at |RangeError|TypeError|Maximum call stack/);
    expect(r.ms, name).toBeLessThan(20_000);
    return r;
  };
  it('truncated gzip and truncated tar', () => {
    hostile('trunc.tar.gz', readFileSync(f('receipt.tar.gz')).subarray(0, 1000));
    hostile('trunc.tar', readFileSync(f('receipt.tar')).subarray(0, 2000));
    hostile('trunc2.tar', readFileSync(f('receipt.tar')).subarray(0, 600));
  });
  it('a gzip bomb (300 MB of zeros) is refused quickly', () => {
    hostile('bomb.tar.gz', gzipSync(Buffer.alloc(300_000_000), { level: 1 }));
  });
  it('duplicate entries (chain twice, manifest twice, signature twice), a path with ..', () => {
    const e = new Map(untar(readFileSync(f('receipt.tar.gz'))));
    const m = e.get('manifest.json')!;
    const s = e.get('manifest.sig.json')!;
    const c = e.get('chain/0000000000000000.jsonl')!;
    hostile(
      'dup-chain.tar',
      tar([
        ['manifest.json', m],
        ['manifest.sig.json', s],
        ['chain/0000000000000000.jsonl', c],
        ['chain/0000000000000000.jsonl', c],
      ]),
    );
    hostile(
      'dup-manifest.tar',
      tar([
        ['manifest.json', m],
        ['manifest.json', m],
        ['manifest.sig.json', s],
        ['chain/0000000000000000.jsonl', c],
      ]),
    );
    hostile(
      'dup-sig.tar',
      tar([
        ['manifest.json', m],
        ['manifest.sig.json', s],
        ['manifest.sig.json', s],
        ['chain/0000000000000000.jsonl', c],
      ]),
    );
    hostile(
      'dotdot.tar',
      tar([
        ['manifest.json', m],
        ['manifest.sig.json', s],
        ['chain/0000000000000000.jsonl', c],
        ['chain/../manifest.json', m],
      ]),
    );
  });
  it('manifest tricks: huge and negative numbers, deep nesting', () => {
    forge('receipt.tar', 'm-seq.tar', { manifest: (m) => void (m.head.seq = 9007199254740993) });
    forge('receipt.tar', 'm-to.tar', { rawManifest: (s) => s.replace(/"to":2/, `"to":1${'0'.repeat(400)}`) });
    forge('receipt.tar', 'm-size.tar', { manifest: (m) => void (m.chain[0].size = 1e308) });
    forge('receipt.tar', 'm-steps.tar', { manifest: (m) => void (m.chain[0].steps = -1) });
    forge('receipt.tar', 'm-deep.tar', {
      rawManifest: (s) => s.replace('"run":{}', `"run":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`),
    });
    for (const n of ['m-seq', 'm-to', 'm-size', 'm-steps', 'm-deep']) hostile(`${n}.tar`, readFileSync(f(`${n}.tar`)));
  });
  it('a chain line nested 100 000 deep, and a signature file nested 100 000 deep', () => {
    forge('receipt.tar', 'c-deep.tar', {
      lines: (ls) =>
        ls.map((l, i) =>
          i === 0 ? l.replace('"high_c":14', `"high_c":${'['.repeat(100_000)}${']'.repeat(100_000)}`) : l,
        ),
    });
    hostile('c-deep.tar', readFileSync(f('c-deep.tar')));
    const e = untar(readFileSync(f('receipt.tar.gz'))).map(([n, b]): [string, Buffer] => [
      n,
      n === 'manifest.sig.json' ? Buffer.from(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) : b,
    ]);
    writeFileSync(f('s-deep.tar'), tar(e));
    const r = cli(['verify', 's-deep.tar', '--pubkey', 'alice.key.pub', '--json']);
    expect(verdictOf(r)).toMatchObject({ rc: 1, authenticated: false });
  });
  it('/dev/zero as the receipt: refused as a device before any read (exit 2, an input error), never read forever', () => {
    const r = cli(['verify', '/dev/zero', '--json'], { timeout: 20_000 });
    expect(r.rc).toBe(2);
    expect(JSON.parse(r.out)).toMatchObject({
      ok: false,
      error: { code: 'INPUT_UNREADABLE', location: { file: '/dev/zero' } },
    });
  });
});

describe('signature replay and manifest paths (held)', () => {
  it("alice's signature file replayed onto a rewritten receipt, or onto the publication, does not authenticate", () => {
    forge('receipt.tar.gz', 'resigned.tar', {
      keepSig: true,
      lines: (ls) => ls.map((l, i) => (i === 2 ? l.replace('Sunny in Lyon', 'Rainy in Lyon') : l)),
    });
    expect(verdictOf(cli(['verify', 'resigned.tar', '--pubkey', 'alice.key.pub', '--json']))).toMatchObject({
      rc: 1,
      authenticated: false,
    });
    const sig = new Map(untar(readFileSync(f('receipt.tar.gz')))).get('manifest.sig.json')!;
    const pub = untar(readFileSync(f('public.tar.gz')));
    writeFileSync(f('pub-sig.tar'), tar([pub[0]!, ['manifest.sig.json', sig], ...pub.slice(1)]));
    expect(verdictOf(cli(['verify', 'pub-sig.tar', '--pubkey', 'alice.key.pub', '--json']))).toMatchObject({
      rc: 1,
      authenticated: false,
    });
  });
  it('chain names with .., absolute paths, or naming a file the archive lacks are refused without a crash', () => {
    const e = new Map(untar(readFileSync(f('receipt.tar'))));
    const c = e.get('chain/0000000000000000.jsonl')!;
    for (const name of [
      'chain/../0000000000000000.jsonl',
      '/etc/passwd',
      'chain/0000000000000001.jsonl',
      'manifest.json',
    ]) {
      const m = JSON.parse(e.get('manifest.json')!.toString());
      m.chain[0].name = name;
      const data = tar([
        ['manifest.json', Buffer.from(jcs(m))],
        [name === 'manifest.json' ? 'chain/0000000000000000.jsonl' : name, c],
      ]);
      writeFileSync(f('name.tar'), data);
      const r = cli(['verify', 'name.tar', '--json']);
      expect(r.rc, name).toBe(1);
      expect(r.err, name).not.toMatch(/\n\s+at /);
    }
  });
  it('a symlink or hard-link entry in place of the chain file is refused', () => {
    const e = untar(readFileSync(f('receipt.tar')));
    for (const flag of ['1', '2', '5']) {
      const parts: Buffer[] = [];
      for (const [n, b] of e) {
        const link = n.startsWith('chain/');
        const h = header(TEMPLATE, n, link ? 0 : b.length);
        if (link) {
          h[156] = flag.charCodeAt(0);
          h.write('manifest.json', 157, 'latin1');
          h.fill(0x20, 148, 156);
          let sum = 0;
          for (const x of h) sum += x;
          h.write(`${sum.toString(8).padStart(6, '0')} \0`, 148, 'latin1');
        }
        parts.push(h);
        if (!link) parts.push(b, Buffer.alloc((512 - (b.length % 512)) % 512));
      }
      parts.push(Buffer.alloc(1024));
      writeFileSync(f(`link${flag}.tar`), Buffer.concat(parts));
      const r = cli(['verify', `link${flag}.tar`, '--json']);
      expect(r.rc, flag).toBe(1);
      expect(r.json?.authenticated, flag).toBe(false);
    }
  });
});

describe('witness and prover refuse forks and truncation (held)', () => {
  it('a witness that cosigned one size-4 root refuses another root of the same size', () => {
    ok([
      'witness',
      'g4.checkpoint',
      '--key',
      'w2.key',
      '--name',
      'witness.example/w2',
      '--state',
      'wg',
      '--log-key',
      'glog.vkey',
      '-o',
      'g4.w2',
    ]);
    const r = cli([
      'witness',
      'f4.checkpoint',
      '--key',
      'w2.key',
      '--name',
      'witness.example/w2',
      '--state',
      'wg',
      '--log-key',
      'glog.vkey',
      '-o',
      'f4.w2',
    ]);
    expect(r.rc).toBe(1);
    expect(r.err).toMatch(/INCONSISTENT|FORKED/);
  });
  it('a receipt shorter than the pinned checkpoint is SIZE_DECREASED', () => {
    ok(['export', 'g/today', '--to', '2', '-o', 'g3.tar.gz']);
    const r = cli(['verify', 'g3.tar.gz', '--checkpoint', 'g4.checkpoint', '--log-key', 'glog.vkey', '--json']);
    expect(verdictOf(r)).toMatchObject({ rc: 1, authenticated: false });
    expect(codes(r)).toContain('SIZE_DECREASED');
  });
});

// =====================================================================================================
// Fixes after the attacks above (spec/PROOFS.md §8.4, §11.1); each of these failed before the fix.
describe('one value per single-value option, for every verb', () => {
  // Before: parseArgs kept the last, so a second --pubkey (appended by a wrapper, an alias, a copied
  // command line) silently replaced the auditor's pin — mallory's forgery authenticated.
  it('a repeated pin is a usage error naming the option, whatever the order, and nothing is verified', () => {
    for (const args of [
      ['verify', 'forged.tar.gz', '--pubkey', 'alice.key.pub', '--pubkey', 'mallory.key.pub'],
      ['verify', 'forged.tar.gz', '--pubkey', 'mallory.key.pub', '--pubkey', 'alice.key.pub'],
      ['verify', 'forged.tar.gz', '--head', HEAD, '--head', MAL_HEAD],
      ['verify', 'receipt.tar.gz', '--checkpoint', 'cp3.w1', '--checkpoint', 'cp3.checkpoint', '--log-key', 'log.vkey'],
      ['verify', 'receipt.tar.gz', '--checkpoint', 'cp3.checkpoint', '--log-key', 'log.vkey', '--log-key', 'log.vkey'],
      [
        'verify',
        'receipt.tar.gz',
        '--checkpoint',
        'cp3.w1',
        '--log-key',
        'log.vkey',
        '--witness',
        W1,
        '--quorum',
        '1',
        '--quorum',
        '0',
      ],
    ]) {
      const r = cli([...args, '--json']);
      const option = args.find((a, i) => a.startsWith('--') && args.indexOf(a) !== i)!;
      expect({
        args: args.join(' '),
        rc: r.rc,
        authenticated: r.json?.authenticated,
        code: r.json?.error?.code,
      }).toEqual({ args: args.join(' '), rc: 2, authenticated: undefined, code: 'USAGE' });
      expect(r.err).toContain(`${option} is given more than once`);
    }
  });
  it('the same for other verbs, and for a short and a long spelling of one option; nothing is written', () => {
    for (const args of [
      ['export', 'runs/today', '-o', 'twice-a.tar.gz', '-o', 'twice-b.tar.gz'],
      ['export', 'runs/today', '-o', 'twice-a.tar.gz', '--out', 'twice-b.tar.gz'],
      ['log', 'runs/today', '--from', '0', '--from', '1'],
      [
        'witness',
        'cp3.checkpoint',
        '--key',
        'w1.key',
        '--name',
        'witness.example/w1',
        '--name',
        'witness.example/w2',
        '--state',
        'twice-state',
        '--log-key',
        'log.vkey',
        '-o',
        'twice-a.cp',
      ],
    ]) {
      const r = cli(args);
      expect(r.rc, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toMatch(/--(out|from|name) is given more than once/);
    }
    expect(spawnSync('ls', [dir]).stdout.toString()).not.toMatch(/twice-/);
  });
  it('repeatable options and flags still repeat', () => {
    expect(
      verdictOf(
        cli([
          'verify',
          'receipt.tar.gz',
          '--checkpoint',
          'cp3.w1',
          '--log-key',
          'log.vkey',
          '--witness',
          W1,
          '--witness',
          W2,
          '--quorum',
          '1',
          '--json',
          '--json',
        ]),
      ),
    ).toMatchObject({ rc: 0, authenticated: true });
  });
});

describe('--quorum as written (PROOFS.md §8.4)', () => {
  // Before: Number(text), so "00" and " 1" were quietly 0 and 1; now only a plain decimal integer is a quorum.
  it('anything but a plain decimal integer is a usage error naming the value, even where the checkpoint would pass', () => {
    for (const q of ['', ' ', '00', '01', ' 1', '1 ', '0x1', '-0', '+1', '1e0', '1.0']) {
      const r = cli([
        'verify',
        'receipt.tar.gz',
        '--checkpoint',
        'cp3.w1',
        '--log-key',
        'log.vkey',
        '--witness',
        W1,
        `--quorum=${q}`,
        '--json',
      ]);
      expect({ q, rc: r.rc, authenticated: r.json?.authenticated }).toEqual({ q, rc: 2, authenticated: undefined });
      expect(r.err, q).toContain(`(got "${q}")`);
    }
    for (const q of ['0', '1'])
      expect(
        verdictOf(
          cli([
            'verify',
            'receipt.tar.gz',
            '--checkpoint',
            'cp3.w1',
            '--log-key',
            'log.vkey',
            '--witness',
            W1,
            '--quorum',
            q,
            '--json',
          ]),
        ),
      ).toMatchObject({ rc: 0, authenticated: true });
  });
});

describe('verifier keys: the whitespace around them and the 64 KiB limit (PROOFS.md §8.4, §11.1)', () => {
  it('an inline --log-key or --witness with spaces, tabs or newlines around it is the key (as in a file and on the page)', () => {
    const r = cli([
      'verify',
      'receipt.tar.gz',
      '--checkpoint',
      'cp3.w1',
      '--log-key',
      ` ${LOG_VKEY}\t\n`,
      '--witness',
      `\n${W1} `,
      '--json',
    ]);
    expect(verdictOf(r)).toMatchObject({ rc: 0, authenticated: true });
    // Whitespace inside a key is not trimmed: still refused.
    expect(
      cli(['verify', 'receipt.tar.gz', '--checkpoint', 'cp3.checkpoint', '--log-key', LOG_VKEY.replace('+', ' +')]).rc,
    ).toBe(2);
  });
  it('a key file of exactly 64 KiB is read; one byte more fails LIMIT_EXCEEDED, for --log-key, --witness and witness --log-key', () => {
    const pad = (key: string, total: number) =>
      Buffer.concat([Buffer.from(`${key}\n`), Buffer.alloc(total - key.length - 1, 0x20)]);
    writeFileSync(f('at-limit.vkey'), pad(LOG_VKEY, 64 * 1024));
    writeFileSync(f('over-limit.vkey'), pad(LOG_VKEY, 64 * 1024 + 1));
    writeFileSync(f('w1-over-limit.vkey'), pad(W1, 64 * 1024 + 1));
    expect(
      verdictOf(
        cli(['verify', 'receipt.tar.gz', '--checkpoint', 'cp3.checkpoint', '--log-key', 'at-limit.vkey', '--json']),
      ),
    ).toMatchObject({ rc: 0, authenticated: true });
    for (const args of [
      ['verify', 'receipt.tar.gz', '--checkpoint', 'cp3.checkpoint', '--log-key', 'over-limit.vkey'],
      [
        'verify',
        'receipt.tar.gz',
        '--checkpoint',
        'cp3.w1',
        '--log-key',
        'log.vkey',
        '--witness',
        'w1-over-limit.vkey',
      ],
      [
        'witness',
        'cp3.checkpoint',
        '--key',
        'w2.key',
        '--name',
        'witness.example/w2',
        '--state',
        'w2-over',
        '--log-key',
        'over-limit.vkey',
        '-o',
        'cp3.w2-over',
      ],
    ]) {
      const r = cli(args);
      expect(r.rc, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toMatch(/file \S+-limit\.vkey: LIMIT_EXCEEDED: is larger than 65536 bytes/);
    }
  });
});
