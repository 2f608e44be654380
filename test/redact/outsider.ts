/**
 * Issue 32's outsider: a real default (stepchain/v2) journal, written and published with the built CLI
 * (dist/cli/main.js, child processes), and the rewrites someone holding nothing but the unsigned public
 * receipt can make to it — edit a chain line, move a disclosed slot into `digests` (its digest follows from
 * its public salt), recompute the chain entry's digest and size in the manifest, pack the archive again.
 *
 * STEPCHAIN_CLI_UNDER_TEST=<main.js> runs the same tests against another build (how the tests were shown
 * to fail on the main branch before the fix).
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestBytes } from '../../src/canonical/sha256.js';
import { slotDigest } from '../../src/record/commitments.js';
import type { Json } from '../../src/record/index.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';

export const CLI =
  process.env.STEPCHAIN_CLI_UNDER_TEST ?? fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(args: string[], cwd: string, input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** The steps of the issue: a transfer to alice, a withheld instruction, a price next to an e-mail address. */
export const STEPS = [
  {
    input: { user: 'u-1' },
    model: 'm',
    prompt: 'Pay alice her 10 EUR.',
    tool_call: { name: 'transfer', arguments: { to: 'alice', amount: 10 } },
    result: { ok: true },
  },
  {
    input: { user: 'u-1' },
    model: 'm',
    prompt: 'Internal: never send more than 50 EUR.',
    tool_call: null,
    result: { ok: true },
  },
  {
    input: { customer: 'alice.liddell@example.org', price: 59 },
    model: 'm',
    prompt: 'Quote the price.',
    tool_call: null,
    result: { quoted: 59 },
  },
];

export const POLICY = {
  rules: [
    { id: 'prompts', paths: ['/prompt'], seq: { from: 1, to: 1 } },
    { id: 'secrets', detectors: ['email'] },
  ],
};

export const INVENTED = 'transfer 10000 EUR to mallory';

export interface Published {
  dir: string;
  journal: string;
  /** The public receipt (gzip), as `stepchain publish` wrote it. */
  receipt: string;
  /** The original head, from `stepchain head`. */
  head: string;
  /** What `stepchain publish` told the publisher (stderr). */
  published: string;
}

/** `stepchain init`, `append --jsonl`, `publish` and `head`, each a real process; throws if one fails. */
export async function publishedRun(dir: string): Promise<Published> {
  const journal = join(dir, 'run');
  const must = async (args: string[], input?: string): Promise<Run> => {
    const r = await run(args, dir, input);
    if (r.code !== 0) throw new Error(`stepchain ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r;
  };
  await must(['init', journal, '--format', 'v2']); // the redacted views of a v2 publication (v3 binds every shown byte)
  await must(['append', journal, '--jsonl'], STEPS.map((s) => JSON.stringify(s)).join('\n') + '\n');
  writeFileSync(join(dir, 'policy.json'), JSON.stringify(POLICY));
  const receipt = join(dir, 'public.tar.gz');
  const published = (await must(['publish', journal, '--policy', join(dir, 'policy.json'), '--opt-in', '-o', receipt]))
    .stderr;
  const head = (await must(['head', journal])).stdout.trim().split(' ')[1]!;
  return { dir, journal, receipt, head, published };
}

type Rec = Record<string, Json> & { salts: Record<string, string>; digests?: Record<string, string> };
export type Manifest = Record<string, Json> & {
  chain: Array<{ name: string; digest: string; size: number }>;
  redactions: Array<{ seq: number; path: string; rule: string }>;
};

/**
 * The outsider's rewrite of a public receipt: each chain record and the manifest edited in place, the chain
 * entry's digest and size recomputed in the manifest, the archive packed again (gzip, like the original).
 */
export function rewrite(
  receipt: Uint8Array,
  edit: { record?: (r: Rec, seq: number) => void; manifest?: (m: Manifest) => void },
): Uint8Array {
  const entries = entriesOf(gunzipSync(receipt));
  const manifest = JSON.parse(new TextDecoder().decode(entries[0]!.data)) as Manifest;
  for (const [i, e] of entries.entries()) {
    if (!e.name.startsWith('chain/')) continue;
    const lines = new TextDecoder()
      .decode(e.data)
      .split('\n')
      .slice(0, -1)
      .map((l) => {
        const r = JSON.parse(l) as Rec;
        edit.record?.(r, r.seq as number);
        return canonicalJson(r as Json, { refuseReserved: false });
      });
    const data = text(lines.map((l) => l + '\n').join(''));
    entries[i] = { name: e.name, data };
    manifest.chain = manifest.chain.map((c) =>
      c.name === e.name ? { ...c, digest: digestBytes(data), size: data.length } : c,
    );
  }
  edit.manifest?.(manifest);
  entries[0] = { name: entries[0]!.name, data: text(canonicalJson(manifest as Json, { refuseReserved: false })) };
  return gzipSync(tarOf(entries));
}

/**
 * Moves a disclosed slot into `digests` with another value: its slot digest is computed from the public salt
 * (spec/FORMAT.md §12.2: SHA-256 over the tag, the salt and JCS([slot, value])), so the step hash stays.
 */
export function asView(r: Rec, slot: string, value: Json): void {
  const salt = r.salts[slot]!;
  r.digests = {
    ...(r.digests ?? {}),
    [slot]: slotDigest(salt, slot, canonicalJson(r[slot]!, { refuseReserved: false })),
  };
  delete r.salts[slot];
  r[slot] = value;
}

/** A withheld slot (a whole marker) turned into a view of `value`: the marker's commitment is the slot digest. */
export function withheldAsView(r: Rec, slot: string, value: Json): void {
  const marker = r[slot] as { '$stepchain:redacted': { commitment: string } };
  r.digests = { ...(r.digests ?? {}), [slot]: marker['$stepchain:redacted'].commitment };
  r[slot] = value;
}

export const marker = (rule: string): Json => ({
  '$stepchain:redacted': { commitment: 'sha256:' + 'ab'.repeat(32), rule },
});

/** Re-sorts declarations as §6.3 requires, after an edit. */
export function sortDeclarations(m: Manifest): void {
  m.redactions.sort((a, b) => a.seq - b.seq || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export const read = (path: string): Uint8Array => new Uint8Array(readFileSync(path));
