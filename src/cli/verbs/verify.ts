/**
 * `stepchain verify`: a journal (a directory or a Postgres location) or a receipt, offline. The verb an
 * auditor times, so it loads only what the location in hand needs (a directory: its verifier, no writer;
 * Postgres: the store; a receipt: the receipt verifier and the publication checks) and runs the per-line
 * checks on every core when the chain is big enough to gain.
 */
import { basename, resolve } from 'node:path';
import type { LineCheckPool } from '../../chain/batch.js';
import type { ReceiptReport } from '../../receipt/verify.js';
import { intArg } from '../args.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Verb } from '../cli.js';
import { pathKind } from '../input.js';
import { printReport, type Output } from '../output.js';

const HEAD_RE = /^sha256:[0-9a-f]{64}$/;
/** A Postgres location (store/postgres/location.ts, isPostgresLocation), told apart without loading the store. */
const POSTGRES_RE = /^postgres(?:ql)?:\/\//i;

export const verifyVerb: Verb = {
  name: 'verify',
  summary: 'verify a journal or a receipt offline: the verdict, then every problem with its location',
  usage: '<journal | receipt.tar | receipt.tar.gz> [--head sha256:…] [--pubkey file] [--threads N]',
  description: [
    'A receipt proves integrity relative to its head: pin the head you obtained independently (--head) or the signer\'s',
    'public key (--pubkey), or the check only shows the receipt is self-consistent. A pin that cannot be used (an empty',
    'or malformed key file, a malformed head) is an error (exit 2), never "no pin". A published (redacted) receipt is',
    'verified with its anchor and redaction declarations (spec/REDACTION.md §7).',
    'Lines are hashed and checked on worker threads (one per core, at most 8) once the chain is larger than one',
    'batch (128 KiB); the links between them are checked in order on one thread. The report is the same with any',
    '--threads.',
  ].join('\n'),
  options: {
    head: { type: 'string', arg: 'sha256:…', description: 'the head you expect (obtained out of band); a different head fails' },
    pubkey: { type: 'string', arg: 'file', description: 'receipts: the signer\'s public key file — keyfile.pub from keygen, the base64 of the 32 key bytes, or the 32 raw bytes; the receipt must be signed by it (any other file is an error, exit 2)' },
    threads: { type: 'string', arg: 'N', description: 'worker threads for the per-line checks (default: one per core, at most 8; 1 checks on the main thread only)' },
  },
  args: { min: 1, max: 1, names: ['path'] },
  examples: [
    ['stepchain verify receipt.tar.gz --pubkey alice.key.pub', 'an auditor checks a signed receipt'],
    ['stepchain verify runs/today --head sha256:3b4c…', 'check a journal against a head published earlier'],
    ['stepchain verify runs/today --threads 1', 'the same check on one thread'],
  ],
  async run({ out, values, positionals }) {
    const path = positionals[0]!;
    const expectHead = values.head as string | undefined;
    if (expectHead !== undefined && !HEAD_RE.test(expectHead)) throw new UsageError('--head must be "sha256:" followed by 64 lowercase hex digits', 'verify');
    const threads = values.threads === undefined ? undefined : intArg(values.threads, '--threads', 'verify');
    if (threads === 0) throw new UsageError('--threads must be at least 1', 'verify');
    const postgres = POSTGRES_RE.test(path);
    const kind = postgres ? 'journal' : await pathKind(path);
    if (kind === 'journal' && values.pubkey !== undefined) throw new UsageError('--pubkey applies to receipts; a journal is not signed', 'verify');
    const pool = await linePool(threads);
    try {
      const ok = postgres ? await verifyStored(out, path, expectHead, pool)
        : kind === 'journal' ? await verifyJournal(out, path, expectHead, pool)
        : await verifyReceipt(out, path, kind, expectHead, values.pubkey as string | undefined, pool);
      return ok ? EXIT_OK : EXIT_FAILED;
    } finally {
      await pool?.close();
    }
  },
};

/** The worker pool, unless one thread was asked for (or there is one core); its workers start with the first batch. */
async function linePool(threads: number | undefined): Promise<(LineCheckPool & { close(): Promise<void> }) | undefined> {
  const { createLineCheckPool, defaultThreads } = await import('../../parallel/index.js');
  const n = threads ?? defaultThreads();
  return n > 1 ? createLineCheckPool({ threads: n }) : undefined;
}

async function verifyJournal(out: Output, path: string, expectHead: string | undefined, pool: LineCheckPool | undefined): Promise<boolean> {
  // The directory's own verifier, not the whole store: a start loads no writer. Verified without opening
  // the journal, so a metadata file that cannot be opened is a problem in the report (as FileStore.verify).
  const [{ verifyJournalDir }, ids] = await Promise.all([import('../../store/file/verify-dir.js'), import('../../store/ids.js')]);
  const checkId: (id: string) => void = ids.assertJournalId;
  const full = resolve(path);
  checkId(basename(full));
  const progress = out.progress('verifying');
  const report = await verifyJournalDir(full, {
    ...(expectHead !== undefined ? { expectHead } : {}), ...(pool ? { pool } : {}), onProgress: () => progress.tick(),
  });
  progress.end();
  // Only a journal that verified: its journal.json is then a regular file of bounded size, read the safe way.
  const identity = !report.ok ? null : await runIdentity(async () => {
    const [{ readRegular }, { parseMeta }] = await Promise.all([import('../../store/file/fsutil.js'), import('../../store/meta.js')]);
    const file = resolve(full, 'journal.json');
    return parseMeta((await readRegular(file, 1 << 20)).toString('utf8'), file).genesis;
  });
  if (out.json) out.document('verify', { ok: report.ok, kind: 'journal', path: full, ...(identity ? { run: identity.run } : {}), report });
  else printReport(out, `journal ${path}`, report, identity ? [`  ${identity.line}`] : []);
  return report.ok;
}

/**
 * A run journal's identity (spec/FORMAT.md §11.2), for the verdict to name which run it is; null for a v1
 * journal, or when the metadata cannot be read (the report already says why).
 */
async function runIdentity(genesisOf: () => Promise<{ format: string; run?: unknown }>): Promise<{ run: unknown; line: string } | null> {
  try {
    const genesis = await genesisOf();
    const { identityLine } = await import('../identity.js');
    const line = identityLine(genesis);
    return line === null ? null : { run: genesis.run, line };
  } catch {
    return null;
  }
}

/** A journal in a store the CLI reaches through a location (Postgres): the store's own verify. */
async function verifyStored(out: Output, path: string, expectHead: string | undefined, pool: LineCheckPool | undefined): Promise<boolean> {
  const { journalId, locate } = await import('../location.js');
  const at = locate(path);
  let report;
  let identity;
  try {
    const progress = out.progress('verifying');
    report = await at.store.verify(journalId(at), { ...(expectHead !== undefined ? { expectHead } : {}), ...(pool ? { pool } : {}), onProgress: () => progress.tick() });
    progress.end();
    identity = await runIdentity(async () => {
      const journal = await at.store.open(journalId(at), { readOnly: true });
      await journal.close();
      return journal.genesis;
    });
  } finally {
    await at.close();
  }
  if (out.json) out.document('verify', { ok: report.ok, kind: 'journal', path: at.display, ...(identity ? { run: identity.run } : {}), report });
  else printReport(out, `journal ${at.display}`, report, identity ? [`  ${identity.line}`] : []);
  return report.ok;
}

async function verifyReceipt(out: Output, path: string, kind: string, expectHead: string | undefined, pubkey: string | undefined, pool: LineCheckPool | undefined): Promise<boolean> {
  const [{ readPublicKeyFile, verifyReceiptFile }, { publishedReceiptHooks }] = await Promise.all([import('../../receipt/node.js'), import('../../redact/verify.js')]);
  // An unusable key file is a usage error (exit 2), never "no key pinned".
  const publicKey = pubkey === undefined ? undefined : await readPublicKeyFile(pubkey);
  // A published (redacted) receipt carries anchor and redactions members; the hooks check them (their
  // finish adds the publication checks), and leave an ordinary receipt's report unchanged.
  const report: ReceiptReport<string> = await verifyReceiptFile(path, {
    ...(expectHead !== undefined ? { expectHead } : {}), ...(publicKey !== undefined ? { publicKey } : {}), ...(pool ? { pool } : {}), ...publishedReceiptHooks().options,
  });
  if (out.json) {
    out.document('verify', { ok: report.ok, kind, path: resolve(path), report });
  } else {
    const extra: string[] = [];
    if (report.ok) {
      extra.push(`  scope: ${report.scope}${report.range ? ` (steps ${report.range.from}..${report.range.to})` : ''}; signed by: ${report.signed_by ?? 'nobody (unsigned)'}`);
      for (const p of report.proves) extra.push(`  ${out.style('green', 'proves')}   ${p}`);
      for (const p of report.does_not_prove) extra.push(`  ${out.style('yellow', 'does not prove')} ${p}`);
      if (expectHead === undefined && publicKey === undefined) extra.push(out.style('yellow', '  hint: pin the head (--head) or the signer\'s key (--pubkey); otherwise anyone could have made this receipt'));
    }
    printReport(out, `receipt ${path}`, report, extra);
  }
  return report.ok;
}
