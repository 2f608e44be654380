// Outsider (black-box) attacks on stepchain/v3 bound publication and on retention (prune, tombstones).
// Only the built CLI is used (in one process of its own, test/helpers/cli-sync.ts, but for the calls below
// that start it); every test asserts the SAFE behaviour, so a test fails while a hole is open.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncCli } from '../helpers/cli-sync.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const dirs: string[] = [];
const tmp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), `sc-out-${p}-`));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Res {
  status: number;
  stdout: string;
  stderr: string;
}
const inProcess = syncCli();
function sc(args: string[], input?: string): Res {
  return inProcess({ args, input });
}
const ok = (r: Res) => {
  if (r.status !== 0) throw new Error(`cli failed ${r.status}: ${r.stderr}${r.stdout}`);
  return r;
};
const codes = (r: Res): string[] => {
  try {
    return (JSON.parse(r.stdout).report?.problems ?? []).map((p: { code: string }) => p.code);
  } catch {
    return ['NOJSON'];
  }
};
const jcs = (v: unknown): string => {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${jcs(o[k])}`)
    .join(',')}}`;
};
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest();
const bucketOf = (j: string) =>
  join(
    j,
    'buckets',
    readdirSync(join(j, 'buckets'))
      .filter((f) => f.endsWith('.jsonl'))
      .sort()[0]!,
  );
const OLD = new Date(Date.now() - 200 * 86_400_000).toISOString();
const step = (x: Record<string, unknown>) => JSON.stringify({ model: 'm', prompt: 'p', result: 'r', ...x });

// --- a minimal ustar/gzip rewriter that keeps the writer's header profile ---------------------------
type Entries = { name: string; header: Buffer; data: Buffer }[];
function readArchive(file: string): Entries {
  const raw = gunzipSync(readFileSync(file));
  const out: Entries = [];
  let i = 0;
  while (i + 512 <= raw.length && raw.subarray(i, i + 512).some((b) => b !== 0)) {
    const h = raw.subarray(i, i + 512);
    const name = h.subarray(0, 100).toString().replace(/\0.*$/s, '');
    const size = parseInt(h.subarray(124, 136).toString().replace(/[\0 ]/g, '') || '0', 8);
    out.push({ name, header: Buffer.from(h), data: Buffer.from(raw.subarray(i + 512, i + 512 + size)) });
    i += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}
function writeArchive(entries: Entries, file: string, fixManifest = true): void {
  const byName = new Map(entries.map((e) => [e.name, e]));
  if (fixManifest) {
    const m = JSON.parse(byName.get('manifest.json')!.data.toString());
    for (const c of m.chain) {
      const b = byName.get(c.name)!.data;
      c.digest = `sha256:${sha(b).toString('hex')}`;
      c.size = b.length;
      c.steps = b.toString().split('\n').length - 1;
    }
    byName.get('manifest.json')!.data = Buffer.from(jcs(m));
  }
  const parts: Buffer[] = [];
  for (const e of entries) {
    const h = Buffer.from(e.header);
    h.write(`${e.data.length.toString(8).padStart(11, '0')} `, 124, 'latin1');
    h.fill(0x20, 148, 156);
    let s = 0;
    for (const b of h) s += b;
    h.write(`${s.toString(8).padStart(6, '0')} \0`, 148, 'latin1');
    parts.push(h, e.data, Buffer.alloc((512 - (e.data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  const gz = gzipSync(Buffer.concat(parts), { level: 9 });
  gz[9] = 255;
  writeFileSync(file, gz);
}
const chainName = (e: Entries) => e.find((x) => x.name.startsWith('chain/'))!.name;
function mutate(
  src: string,
  dst: string,
  f: (lines: any[], manifest: any) => void,
  raw?: (chain: string) => string,
): void {
  const e = readArchive(src);
  const c = e.find((x) => x.name === chainName(e))!;
  const m = e.find((x) => x.name === 'manifest.json')!;
  const manifest = JSON.parse(m.data.toString());
  if (raw) c.data = Buffer.from(raw(c.data.toString()));
  else {
    const lines = c.data
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    f(lines, manifest);
    c.data = Buffer.from(lines.map((l) => `${jcs(l)}\n`).join(''));
  }
  m.data = Buffer.from(jcs(manifest));
  writeArchive(e, dst);
}

// --- fixtures --------------------------------------------------------------------------------------
const W = '$stepchain:withheld';
const C = '$stepchain:chunks';
let P: { dir: string; journal: string; pub: string; head: string };
beforeAll(() => {
  const dir = tmp('pub');
  const journal = join(dir, 'j');
  ok(sc(['init', journal, '--format', 'v3']));
  const steps = [
    {
      input: { user: 'pin please', pin: '4821', ok: 'yes', mail: 'bob@example.com' },
      model: 'gpt-4o',
      prompt: 'Use tools.',
      tool_call: {
        name: 'http',
        arguments: { url: 'https://api.example.com/v1', api_key: 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c' },
      },
      result: {
        list: ['a', 'b', 'c'],
        note: 'Please contact alice.liddell+test@example.org about the overdue invoice INV-9 before Friday.',
      },
    },
    { input: { user: 'second' }, model: 'gpt-4o', prompt: 'Answer.', result: 'done' },
  ];
  const out = ok(sc(['append', journal, '--jsonl'], steps.map((s) => JSON.stringify(s)).join('\n') + '\n')).stdout;
  const head = out.trim().split('\n').at(-1)!.split(' ')[1]!;
  writeFileSync(
    join(dir, 'policy.json'),
    JSON.stringify({
      rules: [
        { id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] },
        { id: 'pin', paths: ['/input/pin', '/input/ok', '/input/mail', '/result/list/1'] },
        { id: 'secrets', detectors: ['email'] },
      ],
    }),
  );
  const pub = join(dir, 'pub.tar.gz');
  ok(sc(['publish', journal, '--policy', join(dir, 'policy.json'), '--opt-in', '-o', pub]));
  P = { dir, journal, pub, head };
});
const vpub = (file: string, head = P.head) => sc(['verify', file, '--json', '--head', head]);

describe('v3 publication: held', () => {
  it('the untouched publication verifies against the original head and the rewriter is faithful', () => {
    expect(vpub(P.pub).status).toBe(0);
    const same = join(P.dir, 'same.tar.gz');
    mutate(P.pub, same, () => {});
    expect(vpub(same).status).toBe(0);
  });

  const cases: [string, (l: any[], m: any) => void, string[]][] = [
    [
      'rewrite a disclosed value',
      (l) => {
        l[1].input.user = 'HACKED';
      },
      ['ROOT_MISMATCH'],
    ],
    [
      'unmarked invented text for a withheld element',
      (l) => {
        l[0].result.list[1] = 'b';
      },
      ['SECRETS_INVALID'],
    ],
    [
      'invented text for a withheld chunk',
      (l) => {
        l[0].result.note[C][0] = 'Please contact bob ';
      },
      ['SECRETS_INVALID'],
    ],
    [
      'a whole string in place of a chunk list',
      (l) => {
        l[0].result.note = 'Please contact nobody. invoice INV-9 before Friday.';
      },
      ['SECRETS_INVALID'],
    ],
    [
      'a withheld member re-added with a value',
      (l) => {
        l[0].input.pin = '0000';
      },
      ['SECRETS_INVALID'],
    ],
    [
      'drop secrets and rewrite',
      (l) => {
        delete l[1].secrets;
        l[1].input.user = 'HACKED';
      },
      ['MISSING_FIELD'],
    ],
    [
      'reorder array elements',
      (l) => {
        l[0].result.list = ['c', l[0].result.list[1], 'a'];
      },
      ['ROOT_MISMATCH'],
    ],
    [
      'duplicate an array element',
      (l) => {
        l[0].result.list.push('c');
      },
      ['SECRETS_INVALID'],
    ],
    [
      'move a withheld digest to another element',
      (l) => {
        const x = l[0].result.list;
        [x[0], x[1]] = [x[1], 'a'];
      },
      ['ROOT_MISMATCH'],
    ],
    [
      'a withheld marker in a key-disclosed slot',
      (l) => {
        l[1].input = { [W]: [`sha256:${'0'.repeat(64)}`] };
      },
      ['SECRET_PUBLISHED'],
    ],
    [
      'withheld list unsorted',
      (l) => {
        l[0].input[W].reverse();
      },
      ['MARKER_INVALID'],
    ],
    [
      'chunk list of one chunk',
      (l) => {
        l[0].result.note[C] = l[0].result.note[C].slice(0, 1);
      },
      ['MARKER_INVALID'],
    ],
    [
      'an over-long chunk',
      (l) => {
        l[0].result.note[C][1] = 'x'.repeat(300);
      },
      ['MARKER_INVALID'],
    ],
    [
      'strip the publication member',
      (_l, m) => {
        delete m.publication;
      },
      ['MANIFEST_INVALID'],
    ],
    [
      'strip publication and redactions',
      (_l, m) => {
        delete m.publication;
        delete m.redactions;
      },
      ['REDACTION_UNDECLARED'],
    ],
    [
      'drop one declaration',
      (_l, m) => {
        m.redactions.shift();
      },
      ['REDACTION_UNDECLARED'],
    ],
    [
      'declare a shown member as withheld',
      (_l, m) => {
        m.redactions[0].path = '/input/user';
        m.redactions.sort((a: any, b: any) => (a.path < b.path ? -1 : 1));
      },
      ['REDACTION_UNDECLARED'],
    ],
  ];
  for (const [name, f, want] of cases) {
    it(`refuses: ${name}`, () => {
      const out = join(P.dir, 'm.tar.gz');
      mutate(P.pub, out, f);
      const r = vpub(out);
      expect(r.status).toBe(1);
      expect(codes(r)).toEqual(expect.arrayContaining(want));
    });
  }

  it('splicing a record from a publication of another journal fails', () => {
    const j2 = join(P.dir, 'j2');
    ok(sc(['init', j2, '--format', 'v3']));
    ok(sc(['append', j2], step({ input: { user: 'pin please' } })));
    const pub2 = join(P.dir, 'pub2.tar.gz');
    ok(sc(['publish', j2, '--policy', join(P.dir, 'policy.json'), '--opt-in', '-o', pub2]));
    const foreign = readArchive(pub2)
      .find((x) => x.name.startsWith('chain/'))!
      .data.toString()
      .split('\n')[0]!;
    const out = join(P.dir, 'splice.tar.gz');
    mutate(
      P.pub,
      out,
      () => {},
      (chain) => {
        const l = chain.split('\n');
        l[0] = foreign;
        return l.join('\n');
      },
    );
    expect(vpub(out).status).toBe(1);
  });

  it('hostile bytes (deep nesting, 20 MB line, bad UTF-8, lone surrogate) exit 1 with a code, never a crash', () => {
    const hostile = [
      (c: string) => c.replace('"user":"second"', `"user":${'['.repeat(50_000)}${']'.repeat(50_000)}`),
      (c: string) => c.replace('"user":"second"', `"user":"${'A'.repeat(20 << 20)}"`),
      (c: string) => c.replace('second', 'sec\\ud800nd'),
    ];
    for (const h of hostile) {
      const out = join(P.dir, 'h.tar.gz');
      mutate(P.pub, out, () => {}, h);
      const r = vpub(out);
      expect(r.status).toBe(1);
      expect(codes(r).length).toBeGreaterThan(0);
      expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
    }
    const e = readArchive(P.pub);
    const c = e.find((x) => x.name.startsWith('chain/'))!;
    c.data = Buffer.concat([c.data.subarray(0, 200), Buffer.from([0xff, 0xfe]), c.data.subarray(202)]);
    const out = join(P.dir, 'u.tar.gz');
    writeArchive(e, out);
    const r = vpub(out);
    expect(r.status).toBe(1);
    expect(codes(r).length).toBeGreaterThan(0);
  });

  it('guessing a withheld PIN / yes-no / e-mail with every salt, key and seed the receipt shows finds nothing (control: the true salt finds it)', () => {
    const H = (...b: Buffer[]) => sha(Buffer.concat(b));
    const slotKey = (seed: Buffer, j: number) => H(Buffer.from([0x6b]), seed, Buffer.from([j])).subarray(0, 16);
    const salt = (k: Buffer, i: number) => {
      const u = Buffer.alloc(4);
      u.writeUInt32BE(Math.floor(i / 2));
      return H(Buffer.from([0x73]), k, u).subarray(16 * (i % 2), 16 * (i % 2) + 16);
    };
    const member = (s: Buffer, name: string, v: unknown) =>
      H(Buffer.from([0x6d]), s, Buffer.from(JSON.stringify(name)), Buffer.from(JSON.stringify(v))).toString('hex');
    const prefixed = (s: Buffer, name: string) =>
      createHash('sha256')
        .update(Buffer.from([0x6d]))
        .update(s)
        .update(JSON.stringify(name));
    const lines = readArchive(P.pub)
      .find((x) => x.name.startsWith('chain/'))!
      .data.toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const withheld = new Set<string>(lines[0].input[W].map((d: string) => d.slice(7)));
    // control, from the private journal: input slot preorder is /input, mail, ok, pin, user
    const priv = JSON.parse(readFileSync(bucketOf(P.journal), 'utf8').split('\n')[0]!);
    const k1 = slotKey(Buffer.from(priv.seed, 'hex'), 1);
    expect(withheld.has(member(salt(k1, 3), 'pin', '4821'))).toBe(true);
    // attacker: everything 16 bytes long the public records carry, and what it derives
    const b64 = (s: string) => Buffer.from(s, 'base64url');
    const cands: Buffer[] = [Buffer.alloc(0), Buffer.alloc(16)];
    for (const l of lines) {
      if (l.secrets.seed) {
        for (let j = 0; j < 7; j++) {
          const k = slotKey(Buffer.from(l.secrets.seed, 'hex'), j);
          for (let i = 0; i < 12; i++) cands.push(salt(k, i));
        }
        continue;
      }
      for (const v of Object.values<string>(l.secrets.keys)) {
        const k = b64(v);
        cands.push(k);
        for (let i = 0; i < 12; i++) cands.push(salt(k, i));
      }
      for (const v of Object.values<string>(l.secrets.salts)) {
        const b = b64(v);
        for (let i = 0; i < b.length; i += 16) cands.push(b.subarray(i, i + 16));
      }
    }
    const guesses: [string, unknown][] = [
      ...Array.from({ length: 10_000 }, (_, i) => ['pin', String(i).padStart(4, '0')] as [string, unknown]),
      ['ok', 'yes'],
      ['ok', 'no'],
      ['ok', true],
      ['ok', false],
      ...['alice@example.com', 'bob@example.com', 'carol@example.com'].map((m) => ['mail', m] as [string, unknown]),
    ];
    const hits: unknown[] = [];
    for (const s of cands) {
      const pre = new Map(['pin', 'ok', 'mail'].map((n) => [n, prefixed(s, n)]));
      for (const [n, v] of guesses)
        if (withheld.has(pre.get(n)!.copy().update(JSON.stringify(v)).digest('hex'))) hits.push([n, v]);
    }
    for (const [n, v] of guesses)
      if (withheld.has(sha(JSON.stringify(v)).toString('hex')) || withheld.has(member(Buffer.alloc(0), n, v)))
        hits.push([n, v]);
    expect(hits).toEqual([]);
    const text = gunzipSync(readFileSync(P.pub)).toString('latin1');
    // The PIN as the JSON string it was: its four digits alone turn up by chance in hex digests and ids (about
    // one receipt in thirty failed on that).
    for (const secret of ['"4821"', 'bob@example.com', 'alice.liddell', 'sk-live-']) expect(text).not.toContain(secret);
  });

  it('a journal holding parts is published with its parts (REDACTION.md §13.10) and verifies against its original head', () => {
    const d = tmp('parts');
    const j = join(d, 'jp');
    ok(sc(['init', j, '--format', 'v3']));
    const head = ok(sc(['append', j], step({ input: { doc: 'word '.repeat(400) } })))
      .stdout.trim()
      .split(' ')[1]!;
    ok(sc(['publish', j, '--policy', join(P.dir, 'policy.json'), '--opt-in', '-o', join(d, 'p.tar.gz')]));
    expect(existsSync(join(d, 'p.tar.gz'))).toBe(true);
    expect(vpub(join(d, 'p.tar.gz'), head).status).toBe(0);
  });
});

describe('v3 journal: byte edits are detected and located', () => {
  it('single-byte edits of records and part files fail verify (fast and --deep) with a code', () => {
    const d = tmp('jedit');
    const j = join(d, 'j');
    ok(sc(['init', j, '--format', 'v3']));
    ok(
      sc(
        ['append', j, '--jsonl'],
        [step({ input: { doc: 'word '.repeat(300), n: 1 } }), step({ input: { x: [1, 2, 'three'] } })].join('\n') +
          '\n',
      ),
    );
    const partFiles: string[] = [];
    const walk = (p: string) => {
      for (const f of readdirSync(p, { withFileTypes: true })) {
        const q = join(p, f.name);
        if (f.isDirectory() && f.name !== 'index') walk(q);
        else if (f.isFile() && f.name !== 'key') partFiles.push(q);
      }
    };
    walk(join(j, 'parts'));
    expect(partFiles.length).toBeGreaterThan(0);
    const bucket = bucketOf(j);
    const size = readFileSync(bucket).length;
    const targets: [string, number][] = [
      [bucket, Math.floor(size / 3)],
      [bucket, size - 30],
      [partFiles[0]!, 5],
      [partFiles[0]!, 200],
    ];
    for (const [file, pos] of targets) {
      const copy = join(d, 'c');
      rmSync(copy, { recursive: true, force: true });
      cpSync(j, copy, { recursive: true });
      const f = file.replace(j, copy);
      const b = readFileSync(f);
      b[pos] = b[pos] === 0x58 ? 0x59 : 0x58;
      writeFileSync(f, b);
      for (const deep of [[], ['--deep']]) {
        const r = sc(['verify', copy, '--json', ...deep]);
        expect(r.status, `${file}@${pos}`).toBe(1);
        expect(codes(r).length).toBeGreaterThan(0);
      }
    }
  });

  // HOLE: the derived Merkle tree cache (tree/state.json, tiles) is trusted by writers and by the signer, so a
  // journal rewritten after a checkpoint gets a new checkpoint that "extends" the old one (FILE-STORE.md §16:
  // the tree "MUST NOT be preferred to" the chain; signing must refuse a rewritten journal).
  it('a rewritten journal cannot get a new checkpoint by restoring the old tree cache', () => {
    const d = tmp('tree');
    const j = join(d, 'j');
    const key = join(d, 'log.key');
    ok(sc(['init', j, '--format', 'v3']));
    ok(sc(['append', j, '--jsonl'], [step({ input: 'a' }), step({ input: 'b' })].join('\n') + '\n'));
    ok(sc(['keygen', '-o', key]));
    ok(sc(['checkpoint', j, '--sign', key, '--authority', 'a.example.com', '-o', join(d, 'cp1')]));
    const saved = join(d, 'savedtree');
    cpSync(join(j, 'tree'), saved, { recursive: true });
    const bucket = bucketOf(j);
    writeFileSync(bucket, readFileSync(bucket, 'utf8').split('\n')[0] + '\n');
    rmSync(join(j, 'head.json'), { force: true });
    ok(sc(['append', j], step({ input: 'FORGED' })));
    expect(sc(['checkpoint', j, '--sign', key, '-o', join(d, 'x')]).status).toBe(1); // the honest refusal
    const last = JSON.parse(readFileSync(bucket, 'utf8').trim().split('\n').at(-1)!);
    rmSync(join(j, 'tree'), { recursive: true, force: true });
    cpSync(saved, join(j, 'tree'), { recursive: true });
    const st = JSON.parse(readFileSync(join(j, 'tree', 'state.json'), 'utf8'));
    st.step_hash = last.step_hash;
    writeFileSync(join(j, 'tree', 'state.json'), jcs(st));
    ok(sc(['append', j], step({ input: 'more' })));
    const r = sc(['checkpoint', j, '--sign', key, '-o', join(d, 'cp2')]);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr + r.stdout).toContain('CHECKPOINT_REFUSED');
  });
});

describe('retention', () => {
  // A run created long ago (retention counts a run's age from its creation and its steps, RETENTION.md §2, so a
  // back-dated step alone does not make a run old): created through the public library with an old genesis time.
  const DIST = new URL('../../dist/index.js', import.meta.url).href;
  const oldRun = (store: string, id: string, extra: string[] = []) => {
    const options = `{ run: {}, createdAt: ${JSON.stringify(OLD)}${extra.includes('v3') ? ", format: 'stepchain/v3'" : ''} }`;
    const made = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { FileStore } from ${JSON.stringify(DIST)}; const s = new FileStore(${JSON.stringify(store)}); const j = await s.create(${JSON.stringify(id)}, ${options}); await j.close();`,
      ],
      { encoding: 'utf8' },
    );
    expect(made.status, made.stderr).toBe(0);
    ok(sc(['append', join(store, id)], step({ ts: OLD, input: id })));
  };

  it('held: a damaged expired run is kept; escapes in the reason never reach the terminal raw', () => {
    const s = tmp('ret');
    oldRun(s, 'old1');
    oldRun(s, 'dmg');
    const b = bucketOf(join(s, 'dmg'));
    writeFileSync(b, readFileSync(b, 'utf8').replace('"result":"r"', '"result":"R"'));
    const p = sc(['prune', s, '--keep-days', '180', '--reason', 'rp \u001b]0;pwned\u0007 \u001b[2J x']);
    expect([0, 1]).toContain(p.status); // a skipped (damaged) run makes prune report it
    expect(p.stdout + p.stderr).toMatch(/kept dmg/);
    expect(existsSync(join(s, 'dmg'))).toBe(true);
    expect(existsSync(join(s, 'old1'))).toBe(false);
    const r = sc(['runs', s, '--removed']);
    for (const out of [p.stdout, p.stderr, r.stdout, r.stderr]) expect(out).not.toMatch(/[\u001b\u0007]/);
  });

  // HOLE: `runs --removed` does not verify the _tombstones chain: a byte-edited tombstone is listed as checked OK.
  it('runs --removed does not show a byte-edited tombstone as checked OK', () => {
    const s = tmp('ret');
    oldRun(s, 'old1');
    ok(sc(['prune', s, '--keep-days', '180']));
    const b = bucketOf(join(s, '_tombstones'));
    writeFileSync(b, readFileSync(b, 'utf8').replace('"steps":1', '"steps":7'));
    expect(sc(['verify', join(s, '_tombstones')]).status).toBe(1);
    const r = sc(['runs', s, '--removed', '--json']);
    const j = JSON.parse(r.stdout);
    const shownOk =
      r.status === 0 && j.ok === true && j.removed.some((t: any) => t.steps === 7 && t.check?.ok === true);
    expect(shownOk).toBe(false);
  });

  // HOLE (spec gap, RETENTION.md §4): the checkpoint's origin is not compared with the tombstone's journal, so a
  // tombstone for journal "victim" borrowing another run's checkpoint is shown as "extends its checkpoint".
  it('a tombstone carrying a checkpoint of another journal is not shown as consistent', () => {
    const s = tmp('ret');
    const key = join(tmp('key'), 'log.key');
    oldRun(s, 'cpr');
    ok(
      sc(
        ['append', join(s, 'cpr'), '--jsonl'],
        [1, 2, 3].map((i) => step({ ts: OLD, input: String(i) })).join('\n') + '\n',
      ),
    );
    ok(sc(['keygen', '-o', key]));
    ok(sc(['checkpoint', join(s, 'cpr'), '--sign', key, '--authority', 'a.example.com', '-o', join(s, 'cp')]));
    ok(sc(['prune', s, '--keep-days', '180']));
    const t = JSON.parse(
      readFileSync(bucketOf(join(s, '_tombstones')), 'utf8')
        .trim()
        .split('\n')
        .at(-1)!,
    ).result;
    const forged = {
      ...t,
      journal: 'victim',
      run_id: '11111111-2222-3333-4444-555555555555',
      head: `sha256:${'cd'.repeat(32)}`,
    };
    ok(
      sc(
        ['append', join(s, '_tombstones')],
        JSON.stringify({
          step_id: `tombstone:victim:${forged.head}`,
          input: { journal: 'victim' },
          model: null,
          prompt: null,
          tool_call: null,
          result: forged,
        }),
      ),
    );
    const j = JSON.parse(sc(['runs', s, '--removed', '--json']).stdout);
    const victim = j.removed.find((x: any) => x.journal === 'victim');
    expect(victim.check.ok).toBe(false);
  });

  // HOLE: stepchain/v3 run journals (`init --format v3 --run`) are invisible to `runs` and so never pruned.
  it('an expired v3 run journal is subject to the retention policy', () => {
    const s = tmp('ret');
    oldRun(s, 'v3run', ['--format', 'v3', '--run']);
    const r = sc(['prune', s, '--keep-days', '180', '--dry-run']);
    expect(r.stdout + r.stderr).toContain('v3run');
  });

  // HOLE (design level): a step's ts is the writer's word and need not increase, so a run created and active
  // today is removed by a 180-day policy because its last step carries an old ts.
  it('a run created and written today is not expired by one back-dated last step', () => {
    const s = tmp('ret');
    const j = join(s, 'mixed');
    ok(sc(['init', j]));
    ok(sc(['append', j], step({ input: 'today' })));
    ok(sc(['append', j], step({ ts: OLD, input: 'old' })));
    const r = sc(['prune', s, '--keep-days', '180', '--dry-run']);
    expect(r.stdout + r.stderr).not.toMatch(/would remove mixed/);
  });

  it('held: SIGKILL mid-prune, then rerun: no run lost without a tombstone, no tombstone twice', async () => {
    const s = tmp('kill');
    for (let i = 0; i < 3; i++) oldRun(s, `r${i}`);
    const p = spawn(process.execPath, [CLI, 'prune', s, '--keep-days', '180'], { stdio: 'ignore' });
    // Listen before killing: a prune that already finished has emitted 'exit' by then.
    const exited = new Promise((res) => p.once('exit', res));
    await new Promise((res) => setTimeout(res, 400));
    p.kill('SIGKILL');
    await exited;
    const tombs = () =>
      existsSync(join(s, '_tombstones')) ? JSON.parse(ok(sc(['runs', s, '--removed', '--json'])).stdout).removed : [];
    const t1 = tombs();
    for (let i = 0; i < 3; i++) {
      if (!existsSync(join(s, `r${i}`))) expect(t1.some((t: any) => t.journal === `r${i}`)).toBe(true);
      else expect(sc(['verify', join(s, `r${i}`)]).status).toBe(0);
    }
    ok(sc(['prune', s, '--keep-days', '180']));
    const t2 = tombs();
    const keys = t2.map((t: any) => `${t.journal} ${t.head}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (let i = 0; i < 3; i++) expect(existsSync(join(s, `r${i}`))).toBe(false);
    expect(sc(['verify', join(s, '_tombstones')]).status).toBe(0);
  });
});
