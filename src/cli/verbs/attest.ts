/**
 * `stepchain timestamp` and `stepchain cosign` (spec/TIME.md): a time-stamping authority's RFC 3161 token
 * over a journal's head, and a party's Ed25519 co-signature over a range of its steps, each added to an
 * attestations file kept beside the journal (spec/TIME.md §6.1) that `export --attest` carries into
 * receipts. Works on every journal format and store: both bind only seqs and step hashes.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { base64Encode } from '../../receipt/base64.js';
import { readKeyFile } from '../../receipt/node.js';
import { genesisHash } from '../../record/formats.js';
import type { Journal } from '../../index.js';
import { writeFileAtomic } from '../../store/file/fsutil.js';
import {
  cosign,
  parseStatement,
  statementBytes,
  timeStampRequest,
  timestampSubject,
  tokenFromResponse,
  type CosignEnvelope,
  type TimestampEntry,
} from '../../attest/index.js';
import { intArg } from '../args.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Verb } from '../cli.js';
import { withJournal } from '../location.js';
import { inline } from '../safe-text.js';
import { approverPins } from './approve-lines.js';

export const ATTESTATIONS_FORMAT = 'stepchain-attestations/v1';

/** The attestations file: the tokens and envelopes gathered for one journal (spec/TIME.md §6.1). */
export interface AttestationsFile {
  cosignatures: CosignEnvelope[];
  format: typeof ATTESTATIONS_FORMAT;
  genesis_hash: string;
  journal_id: string;
  timestamps: TimestampEntry[];
}

/** The most bytes an attestations file may hold (64 envelopes and 16 tokens fit with room to spare). */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** Reads the attestations file of `journal`, or a new one when it does not exist yet. A file of another journal is refused. */
export async function readAttestations(
  path: string,
  journal: { id: string; genesis: Journal['genesis'] } | null,
  verb: string,
): Promise<AttestationsFile | null> {
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_FILE_BYTES)
      throw new UsageError(
        `${path} is ${bytes.length} bytes; an attestations file holds at most ${MAX_FILE_BYTES}`,
        verb,
      );
    text = bytes.toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && journal) return null;
    if (e instanceof UsageError) throw e;
    throw new UsageError(`cannot read attestations file ${path}: ${(e as Error).message}`, verb);
  }
  let doc: AttestationsFile;
  try {
    doc = JSON.parse(text) as AttestationsFile;
  } catch {
    throw new UsageError(`${path} is not JSON: not an attestations file`, verb);
  }
  if (doc?.format !== ATTESTATIONS_FORMAT || !Array.isArray(doc.timestamps) || !Array.isArray(doc.cosignatures)) {
    throw new UsageError(`${path} is not an attestations file (format ${ATTESTATIONS_FORMAT})`, verb);
  }
  if (journal && doc.genesis_hash !== genesisHash(journal.genesis)) {
    throw new UsageError(
      `${path} holds attestations of journal ${inline(String(doc.journal_id))} (genesis ${inline(String(doc.genesis_hash))}), not of ${journal.id}`,
      verb,
    );
  }
  return doc;
}

async function writeAttestations(path: string, doc: AttestationsFile): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(doc, null, 2) + '\n', { fsyncFile: true, fsyncDir: true });
}

function fresh(journal: Journal): AttestationsFile {
  return {
    cosignatures: [],
    format: ATTESTATIONS_FORMAT,
    genesis_hash: genesisHash(journal.genesis),
    journal_id: journal.id,
    timestamps: [],
  };
}

/** The step hash at `seq` (the head when undefined), as the journal stores it. */
async function stepAt(
  journal: Journal,
  seq: number | undefined,
  verb: string,
): Promise<{ seq: number; step_hash: string }> {
  const head = await journal.head();
  if (head === null) throw new UsageError(`journal ${journal.id} has no steps yet: there is nothing to attest`, verb);
  if (seq === undefined) return { seq: head.seq, step_hash: head.step_hash };
  if (seq > head.seq) throw new UsageError(`--at ${seq} is past the head (seq ${head.seq})`, verb);
  const record = await journal.get(seq);
  if (record === null) throw new UsageError(`journal ${journal.id} has no step ${seq}`, verb);
  return { seq, step_hash: record.step_hash };
}

/** Asks a TSA for a token over `subject`: one HTTP POST of a DER TimeStampReq (RFC 3161 §3.4). */
async function requestToken(url: string, subject: Uint8Array, verb: string): Promise<Uint8Array> {
  const nonce = new Uint8Array(randomBytes(8));
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
      body: timeStampRequest(subject, nonce),
      signal: AbortSignal.timeout(60_000),
    });
  } catch (e) {
    throw new UsageError(`the TSA at ${url} could not be reached: ${(e as Error).message}`, verb);
  }
  if (!response.ok) throw new UsageError(`the TSA at ${url} answered HTTP ${response.status}`, verb);
  const body = new Uint8Array(await response.arrayBuffer());
  const got = tokenFromResponse(body, subject, nonce);
  if (!got.ok) throw new UsageError(`the TSA at ${url}: ${got.reason}`, verb);
  return got.token;
}

export const timestampVerb: Verb = {
  name: 'timestamp',
  summary: "ask a time-stamping authority (RFC 3161) for a token over the journal's head: independent time",
  usage: '<journal> --tsa URL -o attestations.json [--at SEQ]',
  description: [
    "Sends SHA-256 of the head's timestamp subject (spec/TIME.md §3) to the TSA and adds its token to the attestations",
    'file (created if absent). `export --attest FILE` carries the token in a receipt; `verify --tsa-cert` checks it offline',
    "against the TSA's certificate, and the verdict then says when the steps existed no later than, per that TSA.",
  ].join('\n'),
  options: {
    tsa: {
      type: 'string',
      arg: 'URL',
      description: 'the time-stamping authority (HTTP POST of application/timestamp-query)',
    },
    out: {
      type: 'string',
      short: 'o',
      arg: 'file',
      description: 'the attestations file to add the token to (kept beside the journal)',
    },
    at: { type: 'string', arg: 'SEQ', description: 'stamp the step at this seq instead of the head' },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    [
      'stepchain timestamp runs/today --tsa http://tsa.example/tsr -o runs/today.attest.json',
      'a token over the head from an independent TSA',
    ],
  ],
  async run({ out, values, positionals }) {
    if (values.tsa === undefined) throw new UsageError('--tsa URL is required', 'timestamp');
    if (values.out === undefined) throw new UsageError('-o <attestations file> is required', 'timestamp');
    const at = values.at === undefined ? undefined : intArg(values.at, '--at', 'timestamp');
    return withJournal(positionals[0]!, true, async (journal) => {
      const file = values.out as string;
      const doc = (await readAttestations(file, journal, 'timestamp')) ?? fresh(journal);
      const step = await stepAt(journal, at, 'timestamp');
      const token = await requestToken(
        values.tsa as string,
        timestampSubject(doc.genesis_hash, step.seq, step.step_hash),
        'timestamp',
      );
      doc.timestamps = [
        ...doc.timestamps.filter((t) => t.seq !== step.seq),
        { seq: step.seq, step_hash: step.step_hash, token: base64Encode(token) },
      ].sort((a, b) => a.seq - b.seq);
      await writeAttestations(file, doc);
      if (out.json)
        out.document('timestamp', {
          ok: true,
          out: file,
          seq: step.seq,
          step_hash: step.step_hash,
          token_bytes: token.length,
        });
      else
        out.say(
          `stamped seq ${step.seq} (${step.step_hash}): the TSA's token (${token.length} bytes) added to ${inline(file)}`,
        );
      return EXIT_OK;
    });
  },
};

export const cosignVerb: Verb = {
  name: 'cosign',
  summary: 'co-sign a range of steps with an Ed25519 key (DSSE): one of several parties vouching for them',
  usage: '<journal> --key keyfile -o attestations.json [--from N] [--to M]',
  description: [
    "Signs the co-signature statement of steps N..M (spec/TIME.md §5: the journal's genesis hash, the prev_hash of N, the",
    'step_hash of M) and adds the signature to the attestations file; parties who sign the same range share one DSSE',
    'envelope. `verify --cosigner KEY … --threshold t` counts the pinned keys that signed.',
  ].join('\n'),
  options: {
    key: { type: 'string', arg: 'keyfile', description: 'the Ed25519 private key (from keygen)' },
    out: { type: 'string', short: 'o', arg: 'file', description: 'the attestations file to add the signature to' },
    from: { type: 'string', arg: 'N', description: 'first seq (default 0)' },
    to: { type: 'string', arg: 'M', description: 'last seq (default: the head)' },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    [
      'stepchain cosign runs/today --key operator.key -o runs/today.attest.json',
      'the operator vouches for every step so far',
    ],
  ],
  async run({ out, values, positionals }) {
    if (values.key === undefined) throw new UsageError('--key keyfile is required', 'cosign');
    if (values.out === undefined) throw new UsageError('-o <attestations file> is required', 'cosign');
    const key = await readKeyFile(values.key as string);
    const from = values.from === undefined ? 0 : intArg(values.from, '--from', 'cosign');
    const toArg = values.to === undefined ? undefined : intArg(values.to, '--to', 'cosign');
    return withJournal(positionals[0]!, true, async (journal) => {
      const file = values.out as string;
      const doc = (await readAttestations(file, journal, 'cosign')) ?? fresh(journal);
      const end = await stepAt(journal, toArg, 'cosign');
      if (from > end.seq) throw new UsageError(`--from ${from} is after --to ${end.seq}`, 'cosign');
      const prev = from === 0 ? doc.genesis_hash : (await stepAt(journal, from - 1, 'cosign')).step_hash;
      const payload = statementBytes({
        from,
        genesis_hash: doc.genesis_hash,
        prev_hash: prev,
        step_hash: end.step_hash,
        to: end.seq,
      });
      const b64 = base64Encode(payload);
      const i = doc.cosignatures.findIndex((e) => e.payload === b64);
      const envelope = cosign(i >= 0 ? doc.cosignatures[i]! : payload, key);
      if (i >= 0) doc.cosignatures[i] = envelope;
      else doc.cosignatures.push(envelope);
      await writeAttestations(file, doc);
      if (out.json)
        out.document('cosign', {
          ok: true,
          out: file,
          from,
          to: end.seq,
          step_hash: end.step_hash,
          signatures: envelope.signatures.length,
        });
      else
        out.say(
          `co-signed steps ${from}..${end.seq} (${end.step_hash}): ${envelope.signatures.length} signature${envelope.signatures.length === 1 ? '' : 's'} on this range in ${inline(file)}`,
        );
      return EXIT_OK;
    });
  },
};

/** The manifest members for steps from..to: the tokens and envelopes the receipt can bind (spec/TIME.md §6). */
export function attestMembers(
  doc: AttestationsFile,
  from: number,
  to: number,
): { timestamps?: TimestampEntry[]; cosignatures?: CosignEnvelope[] } {
  const timestamps = doc.timestamps.filter((t) => t.seq >= from && t.seq <= to);
  // A statement binds to a receipt whose range holds its last step (spec/TIME.md §7.2 step 3).
  const cosignatures = doc.cosignatures.filter((e) => {
    const s = parseStatement(e);
    return s.ok && s.statement.to >= from && s.statement.to <= to;
  });
  return { ...(timestamps.length ? { timestamps } : {}), ...(cosignatures.length ? { cosignatures } : {}) };
}

export const recordKeepingVerb: Verb = {
  name: 'record-keeping',
  summary:
    'an EU AI Act Art. 12 record-keeping view of runs: period of use, reference inputs, input data, persons, retention',
  usage: '<journal>… --retention PERIOD -o record.json [--profile art12] [--approver KEY …]',
  description: [
    'Verifies each journal, then writes one JSON document (format stepchain-record-keeping/v1, profile eu-ai-act-art12)',
    "with an entry per run: the period of use (first to last step, on the agent's clock), the models and tools used,",
    "each input by seq and digest, the persons involved (the approvers of a stepchain/v3 journal's approval records), the journal's",
    'head, and the retention period you state. It says plainly that logging is what Art. 12 asks and that tamper-evidence',
    "is this tool's addition. A journal that does not verify is refused (exit 1): a record that cannot be trusted is not written.",
  ].join('\n'),
  options: {
    out: { type: 'string', short: 'o', arg: 'file', description: 'where to write the document' },
    retention: {
      type: 'string',
      arg: 'PERIOD',
      description: 'how long these logs are kept, e.g. "6 months" or P6M (Art. 19 and 26: at least six months)',
    },
    profile: { type: 'string', arg: 'NAME', description: 'the profile: art12 (the only one)' },
    approver: {
      type: 'string',
      multiple: true,
      arg: 'KEY',
      description:
        "an approver's public key file: the persons it signed for are named as authenticated (repeat for each; spec/APPROVALS.md)",
    },
  },
  args: { min: 1, max: 64, names: ['journal'] },
  examples: [
    ['stepchain record-keeping runs/today --retention P6M -o today.art12.json', 'the Art. 12 view of one run'],
  ],
  async run({ out, values, positionals }) {
    if (values.profile !== undefined && values.profile !== 'art12')
      throw new UsageError(`--profile ${inline(String(values.profile))}: the only profile is art12`, 'record-keeping');
    if (values.retention === undefined || String(values.retention).trim() === '')
      throw new UsageError(
        '--retention PERIOD is required: say how long these logs are kept (at least six months under Art. 19 and 26)',
        'record-keeping',
      );
    if (values.out === undefined) throw new UsageError('-o <file> is required', 'record-keeping');
    const { runRecordKeeping, recordKeepingDocument } = await import('../../attest/record-keeping.js');
    const approvers = await approverPins((values.approver as string[] | undefined) ?? []);
    const runs = [];
    for (const path of positionals) {
      const entry = await withJournal(path, true, async (journal) => {
        const report = await journal.verify(approvers.length ? { approvers } : {});
        if (!report.ok) return null;
        return runRecordKeeping(journal.genesis, journal.read() as AsyncIterable<never>, true, report.approvals);
      });
      if (entry === null) {
        out.say(`✘ ${inline(path)} does not verify: run \`stepchain verify ${inline(path)}\`; no record was written`);
        return EXIT_FAILED;
      }
      runs.push(entry);
    }
    const doc = recordKeepingDocument(runs, String(values.retention).trim());
    const text = JSON.stringify(doc, null, 2) + '\n';
    await writeFileAtomic(values.out as string, text, { fsyncFile: true, fsyncDir: true });
    if (out.json) out.document('record-keeping', { ok: true, out: values.out, runs: runs.length });
    else
      out.say(
        `wrote ${inline(values.out as string)}: ${runs.length} run${runs.length === 1 ? '' : 's'}, ${runs.reduce((n, r) => n + r.integrity.steps, 0)} steps, retention ${inline(doc.retention.period)}`,
      );
    return EXIT_OK;
  },
};
