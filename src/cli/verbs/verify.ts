/**
 * `stepchain verify`: a journal (a directory or a Postgres location) or a receipt, offline. The verb an
 * auditor times, so it loads little beyond what the location in hand needs: a directory's verifier (no
 * writer) comes with the verb, the common case in the verb's own bundle (src/cli/verify-main.ts); Postgres
 * loads the store, a receipt the receipt verifier and the publication checks. It runs the per-line checks on
 * every core when the chain is big enough to gain.
 */
import { basename, resolve } from 'node:path';
import type { ChainReport, LineCheckPool, ReceiptVerdict, ReceiptVerifyOptions } from '../../index.js';
import { messageBesideCode, settleJournalVerdict, type VerdictFields } from '../../chain/verdict.js';
import type { AttestOptions, CheckpointPolicy, TreeHead, VerifiedLine } from '../../verify.js';
import { readRegular } from '../../store/file/fsutil.js';
import { verifyJournalDir } from '../../store/file/verify-dir.js';
import { assertJournalId } from '../../store/ids.js';
import { parseMeta } from '../../store/meta.js';
import { intArg, threadsArg } from '../args.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Context, type Verb } from '../cli.js';
import { identityLine } from '../identity.js';
import { pathKind } from '../input.js';
import { printReport, type Output } from '../output.js';
import { POLICY_OPTIONS, READ_LIMITS, pinnedCheckpoint, policyFrom, readBounded } from '../policy.js';
import { unboundLines } from '../unbound.js';
import { inline } from '../safe-text.js';
import {
  hasRunNotes,
  noteLines,
  ReceiptRunNotes,
  RunNoteCollector,
  storedRunNotes,
  type RunNote,
} from '../run-notes.js';
import { backendOf } from '../../store/scheme.js';
import type { PinnedApprover } from '../../runtime.js';
import { approvalLines, approverPins } from './approve-lines.js';
import { linePool } from '../verify-pool.js';
import { originMismatch } from '../origin-advice.js';

const HEAD_RE = /^sha256:[0-9a-f]{64}$/;

export const verifyVerb: Verb = {
  name: 'verify',
  summary: 'verify a journal or a receipt offline: the verdict, then every problem with its location',
  usage:
    '<journal | receipt.tar | receipt.tar.gz> [--head sha256:…] [--pubkey file] [--checkpoint FILE] [--log-key VKEY …] [--tsa-cert FILE] [--cosigner KEY … [--threshold t]] [--approver KEY …] [--require-pin] [--threads N]  |  --proof FILE --log-key VKEY',
  description: [
    'Three verdicts (docs/auditors.md): "authenticated" — intact, and a pin held (--pubkey, --head, or a checkpoint signed by',
    'the --log-key with the --witness policy); "intact, NOT authenticated" — consistent, but nothing ties it to anyone (exit 0,',
    'or exit 1 with --require-pin); "INVALID" — a problem was found (exit 1). --json carries "authenticated" beside "ok".',
    "A receipt proves integrity relative to its head: pin the head you obtained independently (--head) or the signer's",
    'public key (--pubkey), or the check only shows the receipt is self-consistent. A pin that cannot be used (an empty',
    'or malformed key file, a malformed head) is an error (exit 2), never "no pin". A published (redacted) receipt is',
    'verified with its anchor and redaction declarations (spec/REDACTION.md §7).',
    'Transparency proofs (spec/PROOFS.md): --checkpoint pins an earlier checkpoint that the journal or receipt must extend',
    '(SIZE_DECREASED, INCONSISTENT, ORIGIN_MISMATCH, CONSISTENCY_UNPROVEN: exit 1); --log-key, --witness and --quorum are',
    'the policy a carried or given checkpoint must satisfy ("the log key and k of these witnesses"); --proof checks a proof file.',
    'Lines are hashed and checked on every core (--threads: this thread and a worker thread per other core, at most 8',
    'threads in all) once the chain is larger than one batch (128 KiB); the links between them are checked in order on',
    'this thread, which also checks batches while the workers are busy. The report is the same with any --threads.',
    "A stepchain/v3 journal is checked by its fast tier (every record's bind and step hash); --deep also recomputes every",
    "record's root from its values (spec/FORMAT.md §14.7).",
    "A run journal's verdict carries notes (--json: notes), not problems: effects of unknown outcome, decisions recorded",
    'for them, repeated step ids, a run that ended with effects pending (spec/RUNS.md §2, §5); a valid journal exits 0.',
  ].join('\n'),
  options: {
    head: {
      type: 'string',
      arg: 'sha256:…',
      description: 'the head you expect (obtained out of band); a different head fails',
    },
    pubkey: {
      type: 'string',
      arg: 'file',
      description:
        "receipts: the signer's public key file — keyfile.pub from keygen, the base64 of the 32 key bytes, or the 32 raw bytes; the receipt must be signed by it (any other file is an error, exit 2)",
    },
    checkpoint: {
      type: 'string',
      arg: 'FILE',
      description:
        'an earlier signed checkpoint: what is verified must extend it (a truncated or rewritten journal fails, exit 1)',
    },
    proof: {
      type: 'string',
      arg: 'FILE',
      description:
        'a proof file from `stepchain prove`: alone, check it; with a partial receipt and --checkpoint, the consistency proof between them',
    },
    ...POLICY_OPTIONS,
    'tsa-cert': {
      type: 'string',
      multiple: true,
      arg: 'FILE',
      description:
        "receipts: a time-stamping authority's certificate (PEM or DER); every carried RFC 3161 token must verify against it (spec/TIME.md), and the verdict says when the steps existed by",
    },
    cosigner: {
      type: 'string',
      multiple: true,
      arg: 'KEY',
      description: "receipts: a co-signer's public key file (as --pubkey); repeat for each party",
    },
    threshold: {
      type: 'string',
      arg: 't',
      description: 'how many of the --cosigner keys must have signed (default: all of them)',
    },
    'require-pin': {
      type: 'boolean',
      description:
        'exit 1 unless the verdict is authenticated: an intact journal or receipt that no pin ties to anyone fails (for scripts and CI)',
    },
    threads: {
      type: 'string',
      arg: 'N',
      description:
        'threads that check lines, this one included: N − 1 worker threads (1 to 64; default: one per core, at most 8; 1 checks on this thread only)',
    },
    approver: {
      type: 'string',
      multiple: true,
      arg: 'KEY',
      description:
        "stepchain/v3: an approver's public key file (as --pubkey); repeat for each. Decisions signed by them are authenticated, any other signer fails (APPROVER_UNKNOWN; spec/APPROVALS.md)",
    },
    deep: {
      type: 'boolean',
      description:
        "stepchain/v3 journals: also recompute every record's root from its values (ROOT_MISMATCH), not only its bind and step hash (spec/FORMAT.md §14.7)",
    },
  },
  args: { min: 0, max: 1, names: ['path'] },
  examples: [
    ['stepchain verify receipt.tar.gz --pubkey alice.key.pub', 'an auditor checks a signed receipt'],
    [
      'stepchain verify runs/today --checkpoint yesterday.checkpoint --log-key "$LOG_VKEY"',
      "the journal still extends yesterday's checkpoint",
    ],
    [
      'stepchain verify --proof steps.proof --log-key "$LOG_VKEY" --witness "$W1" --witness "$W2" --quorum 1',
      'check a proof file: the log key and 1 of 2 witnesses',
    ],
    ['stepchain verify runs/today --head sha256:3b4c…', 'check a journal against a head published earlier'],
    ['stepchain verify runs/today --threads 1', 'the same check on one thread'],
  ],
  async run({ out, values, positionals }) {
    const policy = await policyFrom(values, 'verify');
    if (positionals.length === 0) {
      if (values.proof === undefined)
        throw new UsageError('missing <path> (or --proof FILE to check a proof file)', 'verify');
      return verifyProofFile(out, values, policy);
    }
    const path = positionals[0]!;
    const expectHead = values.head as string | undefined;
    if (expectHead !== undefined && !HEAD_RE.test(expectHead))
      throw new UsageError('--head must be "sha256:" followed by 64 lowercase hex digits', 'verify');
    const threads = values.threads === undefined ? undefined : threadsArg(values.threads);
    // A journal in a database (sqlite:, postgres://) is verified by its store; an unknown scheme is SCHEME_UNKNOWN.
    const postgres = backendOf(path) !== 'file';
    const kind = postgres ? 'journal' : await pathKind(path);
    if (kind === 'journal' && values.pubkey !== undefined)
      throw new UsageError('--pubkey applies to receipts; a journal is not signed', 'verify');
    if (
      kind === 'journal' &&
      (values['tsa-cert'] !== undefined || values.cosigner !== undefined || values.threshold !== undefined)
    )
      throw new UsageError(
        '--tsa-cert, --cosigner and --threshold apply to receipts, which carry the tokens and co-signatures (export --attest)',
        'verify',
      );
    if (values.threshold !== undefined && values.cosigner === undefined)
      throw new UsageError('--threshold needs --cosigner keys to count', 'verify');
    if (kind === 'journal' && values.proof !== undefined)
      throw new UsageError(
        '--proof with a journal: a journal holds every step, so --checkpoint alone proves it extends the checkpoint',
        'verify',
      );
    // A pinned checkpoint that cannot be used is an error (exit 2), never "not pinned".
    const trusted =
      values.checkpoint === undefined
        ? undefined
        : {
            head: await pinnedCheckpoint(values.checkpoint as string, policy, 'verify'),
            file: values.checkpoint as string,
            signed: policy !== null,
            witnesses: policy?.quorum ?? 0,
          };
    const pool = await linePool(threads, !postgres && kind === 'journal' ? path : undefined);
    try {
      const deep = values.deep === true;
      if (deep && kind !== 'journal')
        throw new UsageError(
          "--deep applies to journals (a published receipt's records are always checked deep)",
          'verify',
        );
      const approvers = await approverPins((values.approver as string[] | undefined) ?? []);
      const verdict = postgres
        ? await verifyStored(out, path, expectHead, pool, trusted, deep, approvers)
        : kind === 'journal'
          ? await verifyJournal(out, path, expectHead, pool, trusted, deep, approvers)
          : await verifyReceipt(
              out,
              path,
              kind,
              expectHead,
              values.pubkey as string | undefined,
              pool,
              { policy, trusted: trusted?.head, proof: values.proof as string | undefined },
              await attestOptions(values),
              approvers,
            );
      if (verdict.ok && !verdict.authenticated && values['require-pin'] === true) {
        out.say(out.style(['red', 'bold'], '✘ --require-pin: not authenticated, so this check fails (exit 1)'));
        return EXIT_FAILED;
      }
      return verdict.ok ? EXIT_OK : EXIT_FAILED;
    } finally {
      await pool?.close();
    }
  },
};

/** An earlier checkpoint the journal must extend (--checkpoint), the file it came from, and whether a log key (and how many witnesses) verified it. */
interface Pinned {
  head: TreeHead;
  file: string;
  signed: boolean;
  witnesses: number;
}

/** What the verb's exit status depends on. */
type Settled = Pick<VerdictFields, 'authenticated'> & { ok: boolean };

/** The flags that would authenticate a journal, or a receipt (printed with "intact, NOT authenticated"). */
const PIN_JOURNAL = '--head, or --checkpoint with --log-key';
const PIN_RECEIPT = '--pubkey, --head, or --log-key';

/** A verified journal's verdict (chain/verdict.ts), its JSON document or its lines. */
function renderJournal(
  out: Output,
  display: string,
  report: ChainReport,
  expectHead: string | undefined,
  trusted: Pinned | undefined,
  lines: string[],
  identity: { run: unknown } | null,
  notes: RunNote[] | null = null,
): Settled {
  const settled = settleJournalVerdict(report, {
    ...(expectHead !== undefined ? { head: expectHead } : {}),
    ...(trusted
      ? {
          checkpoint: {
            origin: trusted.head.origin,
            size: trusted.head.size,
            signed: trusted.signed,
            witnesses: trusted.witnesses,
          },
        }
      : {}),
  });
  // Run notes (RUNS.md §2, §5) sit beside the report, not in it: they are what the run did, not defects of the chain.
  if (out.json)
    out.document('verify', {
      ok: settled.ok,
      authenticated: settled.authenticated,
      verdict: settled.verdict,
      kind: 'journal',
      path: display,
      ...(identity ? { run: identity.run } : {}),
      ...(notes ? { notes } : {}),
      report: settled,
    });
  else printReport(out, `journal ${display}`, settled, [...lines, ...noteLines(out, notes ?? [])], PIN_JOURNAL);
  return settled;
}

/** The pinned checkpoint's verdict on a verified journal, and the line that says so. */
async function extendsPinned(
  out: Output,
  path: string,
  report: ChainReport,
  trusted: Pinned | undefined,
): Promise<string[]> {
  if (trusted === undefined || !report.ok) return [];
  await checkJournalExtends(path, trusted.head, report);
  return report.ok
    ? [
        `  ${out.style('green', 'proves')}   it extends the checkpoint of size ${trusted.head.size} (${inline(trusted.file)})`,
      ]
    : [];
}

async function verifyJournal(
  out: Output,
  path: string,
  expectHead: string | undefined,
  pool: LineCheckPool | undefined,
  trusted?: Pinned,
  deep = false,
  approvers: PinnedApprover[] = [],
): Promise<Settled> {
  // The directory's own verifier, not the whole store: a start loads no writer. Verified without opening
  // the journal, so a metadata file that cannot be opened is a problem in the report (as FileStore.verify).
  // Imported statically: the journal path is the common one, and each module loaded on its own costs a
  // start about a millisecond of CPU (bench/speed.mjs, start-up rows).
  const checkId: (id: string) => void = assertJournalId;
  const full = resolve(path);
  checkId(basename(full));
  const progress = out.progress('verifying');
  const notesOf = await runNoteCollector(full);
  const report = await verifyJournalDir(full, {
    ...(expectHead !== undefined ? { expectHead } : {}),
    ...(pool ? { pool } : {}),
    ...(deep ? { deep } : {}),
    ...(approvers.length ? { approvers } : {}),
    onProgress: () => progress.tick(),
    ...(notesOf === null ? {} : { onLine: notesOf.onLine }),
  });
  progress.end();
  // Only a journal that verified: its journal.json is then a regular file of bounded size, read the safe way.
  const identity = !report.ok
    ? null
    : await runIdentity(async () => {
        const file = resolve(full, 'journal.json');
        return parseMeta((await readRegular(file, 1 << 20)).toString('utf8'), file).genesis;
      });
  const notes = identity !== null && notesOf !== null ? notesOf.notes() : null;
  const extended = await extendsPinned(out, path, report, trusted);
  return renderJournal(
    out,
    out.json ? full : path,
    report,
    expectHead,
    trusted,
    [...(identity ? [`  ${identity.line}`] : []), ...approvalLines(out, report.approvals), ...extended],
    identity,
    notes,
  );
}

/**
 * The run notes (RUNS.md §2, §5) of a run journal, collected from the verifier's own pass over its clean lines:
 * a second read of every bucket cost a 100 000-step v3 journal a third of its verify (bench/RESULTS.md). A
 * pass that starts again from an earlier seq (a streamed batch settled under it, FILE-STORE.md §18) starts
 * the notes again. Null for a v1 journal, or one whose metadata cannot be read (its verify says why).
 */
async function runNoteCollector(
  dir: string,
): Promise<{ onLine: (l: VerifiedLine) => void; notes: () => RunNote[] } | null> {
  try {
    const file = resolve(dir, 'journal.json');
    if (!hasRunNotes(parseMeta((await readRegular(file, 1 << 20)).toString('utf8'), file).genesis.format)) return null;
  } catch {
    return null;
  }
  let collector = new RunNoteCollector();
  let last = -1;
  return {
    onLine: (l) => {
      if (!l.clean || l.seq === null) return;
      if (l.seq <= last) collector = new RunNoteCollector();
      last = l.seq;
      collector.addLine(l, l.seq);
    },
    notes: () => collector.notes(),
  };
}

/**
 * A run journal's identity (spec/FORMAT.md §11.2), for the verdict to name which run it is; null for a v1
 * journal, or when the metadata cannot be read (the report already says why).
 */
async function runIdentity(
  genesisOf: () => Promise<{ format: string; run?: unknown }>,
): Promise<{ run: unknown; line: string; format: string } | null> {
  try {
    const genesis = await genesisOf();
    const line = identityLine(genesis);
    return line === null ? null : { run: genesis.run, line, format: genesis.format };
  } catch {
    return null;
  }
}

/** A journal in a store the CLI reaches through a location (Postgres): the store's own verify. */
async function verifyStored(
  out: Output,
  path: string,
  expectHead: string | undefined,
  pool: LineCheckPool | undefined,
  trusted?: Pinned,
  deep = false,
  approvers: PinnedApprover[] = [],
): Promise<Settled> {
  const { journalId, locate } = await import('../location.js');
  const at = await locate(path);
  let report;
  let identity;
  let notes: RunNote[] | null = null;
  try {
    const progress = out.progress('verifying');
    report = await at.store.verify(journalId(at), {
      ...(expectHead !== undefined ? { expectHead } : {}),
      ...(pool ? { pool } : {}),
      ...(deep ? { deep } : {}),
      ...(approvers.length ? { approvers } : {}),
      onProgress: () => progress.tick(),
    });
    progress.end();
    identity = await runIdentity(async () => {
      const journal = await at.store.open(journalId(at), { readOnly: true });
      await journal.close();
      return journal.genesis;
    });
    if (report.ok && report.head_seq !== null && identity !== null && hasRunNotes(identity.format))
      notes = await storedRunNotes(at.store, journalId(at), report.head_seq);
  } finally {
    await at.close();
  }
  const extended = await extendsPinned(out, path, report, trusted);
  return renderJournal(
    out,
    at.display,
    report,
    expectHead,
    trusted,
    [...(identity ? [`  ${identity.line}`] : []), ...approvalLines(out, report.approvals), ...extended],
    identity,
    notes,
  );
}

/** What the transparency-proof options ask of a receipt: the policy, a pinned earlier checkpoint, a consistency proof file. */
interface ProofAsk {
  policy: CheckpointPolicy | null;
  trusted: TreeHead | undefined;
  proof: string | undefined;
}

/** The pins of spec/TIME.md: TSA certificates and co-signer keys, each read and checked before the receipt (unusable: exit 2). */
async function attestOptions(values: Context['values']): Promise<AttestOptions> {
  const certs = (values['tsa-cert'] as string[] | undefined) ?? [];
  const keys = (values.cosigner as string[] | undefined) ?? [];
  if (certs.length === 0 && keys.length === 0) return {};
  const [{ parseTsaCertificate, keyIdOf }, { readPublicKeyFile }] = await Promise.all([
    import('../../attest/pins.js'),
    import('../../receipt/node.js'),
  ]);
  const tsa = [];
  for (const file of certs) {
    const parsed = parseTsaCertificate(await readBounded(file, '--tsa-cert', 'verify', READ_LIMITS.checkpoint));
    if (!parsed.ok) throw new UsageError(`--tsa-cert ${file}: ${parsed.reason}`, 'verify');
    tsa.push(parsed.tsa);
  }
  const cosigners = [];
  const seen = new Set<string>();
  for (const file of keys) {
    const key = await readPublicKeyFile(file);
    if (seen.has(keyIdOf(key)))
      throw new UsageError(`--cosigner ${file}: the same key is given twice; each co-signer counts once`, 'verify');
    seen.add(keyIdOf(key));
    cosigners.push({ key, name: basename(file) });
  }
  const threshold = values.threshold === undefined ? undefined : intArg(values.threshold, '--threshold', 'verify');
  if (threshold !== undefined && (threshold < 1 || threshold > cosigners.length))
    throw new UsageError(`--threshold must be from 1 to the ${cosigners.length} --cosigner keys`, 'verify');
  return {
    ...(tsa.length ? { tsa } : {}),
    ...(cosigners.length ? { cosigners } : {}),
    ...(threshold !== undefined ? { threshold } : {}),
  };
}

async function verifyReceipt(
  out: Output,
  path: string,
  kind: string,
  expectHead: string | undefined,
  pubkey: string | undefined,
  pool: LineCheckPool | undefined,
  ask: ProofAsk,
  attest: AttestOptions,
  approvers: PinnedApprover[] = [],
): Promise<Settled> {
  const [{ readPublicKeyFile, openReceiptFile }, { verifyReceipt: verifyAny }, { notAReceipt }] = await Promise.all([
    import('../../receipt/node.js'),
    import('../../verifier/index.js'),
    import('../../receipt/describe.js'),
  ]);
  // An unusable key file is a usage error (exit 2), never "no key pinned".
  const publicKey = pubkey === undefined ? undefined : await readPublicKeyFile(pubkey);
  const consistency =
    ask.proof === undefined ? undefined : await readBounded(ask.proof, '--proof', 'verify', READ_LIMITS.proof);
  const receiptNotes = new ReceiptRunNotes();
  // The one receipt verifier reads what the receipt is (plain, published, proven, attested) and checks all of it.
  const options: ReceiptVerifyOptions = {
    ...(expectHead !== undefined ? { expectHead } : {}),
    ...(publicKey !== undefined ? { publicKey } : {}),
    ...(pool ? { pool } : {}),
    ...(approvers.length ? { approvers } : {}),
    ...(ask.policy ? { log: ask.policy } : {}),
    ...(ask.trusted ? { checkpoint: ask.trusted } : {}),
    ...(consistency ? { consistencyProof: new Uint8Array(consistency) } : {}),
    ...(attest.tsa ? { tsaCerts: attest.tsa } : {}),
    ...(attest.cosigners ? { cosigners: attest.cosigners } : {}),
    ...(attest.threshold !== undefined ? { threshold: attest.threshold } : {}),
    onLine: (line) => receiptNotes.onLine(line),
  };
  const opened = await openReceiptFile(path);
  const report: ReceiptVerdict = await verifyAny(opened.ok ? opened.chunks : new Uint8Array(0), options);
  if (!opened.ok) report.problems = [opened.problem];
  const notes = receiptNotes.of(report);
  if (out.json) {
    out.document('verify', {
      ok: report.ok,
      authenticated: report.authenticated,
      verdict: report.verdict,
      kind,
      path: resolve(path),
      ...(notes ? { notes } : {}),
      report,
    });
  } else if (notAReceipt(report)) {
    out.say(
      `${out.style(['red', 'bold'], '✘ not a receipt')} ${inline(path)}: nothing in it reads as a stepchain receipt (a .tar or .tar.gz from \`stepchain export\` or \`publish\`, starting with its manifest)`,
    );
    for (const p of report.problems) out.say(`  ${out.style('red', inline(p.code))} ${inline(messageBesideCode(p))}`);
  } else {
    const extra: string[] = [];
    if (report.ok) {
      extra.push(
        `  scope: ${report.scope}${report.range ? ` (steps ${report.range.from}..${report.range.to})` : ''}; signed by: ${inline(report.signed_by ?? 'nobody (unsigned)')}`,
      );
      extra.push(...unboundLines(out, report)); // issue 32: view text is never shown as proven
      extra.push(...approvalLines(out, report.approvals));
      // Each sentence is one line, and quotes content (the agent, labels, an effect's tool and key): inline.
      for (const p of report.proves) extra.push(`  ${out.style('green', 'proves')}   ${inline(p)}`);
      for (const p of report.does_not_prove) extra.push(`  ${out.style('yellow', 'does not prove')} ${inline(p)}`);
      extra.push(...noteLines(out, notes ?? []));
    }
    printReport(out, `receipt ${path}`, report, extra, PIN_RECEIPT);
  }
  return report;
}

/** A journal against a pinned checkpoint: its origin names this journal, and its verified lines extend the tree. */
async function checkJournalExtends(path: string, trusted: TreeHead, report: ChainReport): Promise<void> {
  const [{ leavesExtend, parseJournalOrigin }, { withJournal }] = await Promise.all([
    import('../../proofs/index.js'),
    import('../location.js'),
  ]);
  await withJournal(path, true, async (journal) => {
    const mismatch = originMismatch(trusted.origin, parseJournalOrigin(trusted.origin), journal);
    let verdict: { ok: true } | { ok: false; problem: { code: string; message: string } };
    if (mismatch !== null) {
      verdict = { ok: false, problem: { code: 'ORIGIN_MISMATCH', message: mismatch } };
    } else {
      verdict = await leavesExtend(
        (async function* () {
          for await (const l of journal.lines()) yield (JSON.parse(l.text) as { step_hash: string }).step_hash;
        })(),
        trusted,
        report.steps,
      );
    }
    if (!verdict.ok) {
      report.problems.push({ code: verdict.problem.code, message: verdict.problem.message, location: {} });
      report.ok = false;
    }
  });
}

/** `verify --proof FILE`: a proof file against the policy (and a pinned earlier checkpoint for a consistency proof). */
async function verifyProofFile(
  out: Context['out'],
  values: Context['values'],
  policy: CheckpointPolicy | null,
): Promise<number> {
  if (policy === null)
    throw new UsageError('--proof needs --log-key: a proof file is checked against the log key you trust', 'verify');
  const { verifyProofDocument } = await import('../../proofs/index.js');
  const file = values.proof as string;
  const trusted =
    values.checkpoint === undefined ? undefined : await pinnedCheckpoint(values.checkpoint as string, policy, 'verify');
  const bytes = await readBounded(file, '--proof', 'verify', READ_LIMITS.proof);
  const report = verifyProofDocument(new Uint8Array(bytes), policy, trusted ? { trusted } : {});
  if (trusted && report.ok && report.type === 'inclusion') {
    report.problems.push({
      code: 'CONSISTENCY_UNPROVEN',
      message:
        'CONSISTENCY_UNPROVEN: --checkpoint pins an earlier checkpoint; an inclusion proof cannot show its checkpoint extends it (check a consistency proof)',
    });
    report.ok = false;
  }
  const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
  const summary = {
    ok: report.ok,
    type: report.type,
    problems: report.problems,
    cosignatures: report.cosignatures,
    checkpoint: report.checkpoint
      ? { origin: report.checkpoint.origin, size: report.checkpoint.size, root: b64(report.checkpoint.root) }
      : null,
    old_checkpoint: report.old_checkpoint
      ? {
          origin: report.old_checkpoint.origin,
          size: report.old_checkpoint.size,
          root: b64(report.old_checkpoint.root),
        }
      : null,
    from: report.from,
    to: report.to,
    steps: report.steps,
  };
  // A proof file is always checked against a pinned log key (and witness policy): valid is authenticated.
  if (out.json)
    out.document('verify', {
      ok: report.ok,
      authenticated: report.ok,
      verdict: report.ok ? 'authenticated' : 'invalid',
      kind: 'proof',
      path: resolve(file),
      report: summary,
    });
  else if (report.ok) {
    const cp = report.checkpoint!;
    out.say(
      `${out.style('green', '✔ authenticated')} proof ${inline(file)}: ${report.type === 'inclusion' ? `steps ${report.from}..${report.to} are in` : `size ${report.old_checkpoint!.size} is extended by`} ${inline(cp.origin)} at size ${cp.size}${report.cosignatures.length ? `, cosigned by ${inline(report.cosignatures.map((c) => c.name).join(', '))}` : ''}`,
    );
  } else {
    out.say(
      `${out.style(['red', 'bold'], '✘ INVALID')} proof ${inline(file)}: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}`,
    );
    for (const p of report.problems)
      out.say(`  ${out.style('red', inline(p.code))}\n      ${inline(messageBesideCode(p))}`);
  }
  return report.ok ? EXIT_OK : EXIT_FAILED;
}
