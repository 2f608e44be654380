/**
 * The Node shell of the publisher (spec/REDACTION.md): policy and key files in, the public receipt and the
 * private secrets file out, disclosure proofs to and from files. Decisions live in the pure modules.
 */
import { lstat, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import type { ChainSource } from '../chain/source.js';
import type { KeyFileInput } from '../receipt/keys.js';
import { signingKey, writePlanToFile, type ExportResult } from '../receipt/node.js';
import { writeReceipt } from '../receipt/writer.js';
import { verifyReceiptFile } from '../receipt/node.js';
import type { SaltSource } from './commit.js';
import {
  discloseFromSecrets,
  invalidProofReport,
  secretsFile,
  verifyDisclosure,
  type DisclosureProof,
  type DisclosureReport,
  type SecretsFile,
} from './disclose.js';
import {
  HASH_DISCLOSURE_FORMAT,
  discloseHashFromSecrets,
  verifyHashDisclosure,
  type HashDisclosureProof,
  type HashDisclosureReport,
} from './disclose-hash.js';
import {
  discloseStepFromSecrets,
  verifyStepDisclosure,
  type StepDisclosureProof,
  type StepDisclosureReport,
} from './disclose-step.js';
import { RedactError } from './errors.js';
import { compilePolicy, parsePolicyText, type Policy, type PolicyDocument } from './policy.js';
import { planPublication, type Publication } from './publish.js';
import { planCommittedPublication } from './commit-publish.js';
import { planV3Publication } from './v3-publish.js';
import { afterLiveErasure, describeErasedSince, erasedSince, lineReader } from '../record/v3/erasure-pending.js';
import { formatOf } from '../record/formats.js';
import {
  publishedReceiptHooks,
  verifyPublishedReceipt,
  type PublishedReport,
  type VerifyPublishedOptions,
} from './verify.js';
import { viewSlots } from './unbound.js';
import type { ByteInput } from '../receipt/inflate.js';
import { concatBytes } from '../bytes.js';

export interface PublishOptions {
  /** A compiled policy, a policy document, or { file } naming a policy JSON file. */
  policy: Policy | PolicyDocument | { file: string };
  /** Must be exactly true: publishing shares data beyond the team, so it never happens by default. */
  optIn: true;
  /** The public receipt; gzip-compressed when it ends in .tar.gz or .tgz. */
  out: string;
  /** Sign the manifest (and so the anchor and declarations): 32 seed bytes, a PKCS#8 PEM, or { keyFile }. */
  sign?: KeyFileInput;
  /** Write the salts and original values here (mode 0600, never overwritten): needed to disclose later. */
  secretsOut?: string;
  /** Salt source; default 32 random bytes per value. Deterministic sources are for tests and vectors. */
  salts?: SaltSource;
  exporter?: string;
}

export interface PublishResult extends ExportResult {
  redactions: number;
  policy_digest: string;
  /** The original head. Private: the public receipt holds it only as a salted commitment, unless nothing was redacted. */
  original_head: { seq: number; step_hash: string };
  /** The first seq with a redaction (the steps before it are published unchanged); the step count when none. */
  redacted_from: number;
  secrets_out: string | null;
  /**
   * How the receipt ties to the run: "anchored" (a v1 journal, re-chained with an anchor, REDACTION §6) or
   * "original-head" (a v2 journal, published against its own head, REDACTION §12).
   */
  publication: 'anchored' | 'original-head';
  /**
   * Fields published as redacted views (REDACTION §12.2; 0 for an anchored publication): every verifier shows
   * their text as not bound to the head (§12.5 step 6), since only their digests are bound.
   */
  views: number;
  /**
   * A `stepchain/v3` journal (REDACTION §13): true — every value the receipt shows is bound to the original
   * head, and each withheld unit stands as a marker at its place. Absent for v1 and v2 publications.
   */
  bound?: true;
}

const isPolicy = (p: unknown): p is Policy =>
  p !== null && typeof p === 'object' && 'digest' in p && 'rules' in p && 'document' in p;

export async function loadPolicy(policy: PublishOptions['policy']): Promise<Policy> {
  if (isPolicy(policy)) return policy;
  if (policy !== null && typeof policy === 'object' && 'file' in policy && typeof policy.file === 'string')
    return readPolicyFile(policy.file);
  return compilePolicy(policy);
}

export async function readPolicyFile(path: string): Promise<Policy> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new RedactError(
      'ARGUMENT_INVALID',
      `cannot read policy file ${path}: ${e instanceof Error ? e.message : String(e)}`,
      { location: { file: path } },
    );
  }
  return parsePolicyText(text, path);
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

function assertOptIn(options: unknown): asserts options is { optIn: true } {
  if (options === null || typeof options !== 'object' || (options as { optIn?: unknown }).optIn !== true) {
    throw new RedactError(
      'OPT_IN_REQUIRED',
      'publishing shares a redacted copy of the journal beyond its owners; pass { optIn: true } (CLI: --opt-in) to confirm. Nothing was read or written.',
    );
  }
}

/** Plans a publication without writing anything (tests, vectors, `--dry-run`-like uses). */
export async function preparePublication(
  source: ChainSource,
  options: Omit<PublishOptions, 'out' | 'secretsOut'>,
): Promise<Publication> {
  assertOptIn(options);
  const policy = await loadPolicy(options.policy);
  const sign = options.sign === undefined ? undefined : await signingKey(options.sign);
  return planPublication(source, {
    policy,
    ...(options.salts ? { salts: options.salts } : {}),
    ...(sign === undefined ? {} : { sign }),
    ...(options.exporter === undefined ? {} : { exporter: options.exporter }),
  });
}

/** The publication's receipt as an uncompressed tar in memory. */
export async function publicationBytes(pub: Publication): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of writeReceipt(pub.plan)) parts.push(Uint8Array.from(chunk));
  return concatBytes(parts);
}

/**
 * Publishes a redacted, re-anchored receipt of the whole journal. Refuses without `optIn: true` before
 * reading anything. The journal is only read. The secrets file is created (0600, never overwriting)
 * before the receipt, and removed again if the receipt cannot be written.
 */
export async function publish(source: ChainSource, options: PublishOptions): Promise<PublishResult> {
  assertOptIn(options);
  if (typeof options.out !== 'string' || options.out === '')
    throw new RedactError('ARGUMENT_INVALID', 'publish needs { out: <path> }');
  if (options.secretsOut !== undefined) {
    if (typeof options.secretsOut !== 'string' || options.secretsOut === '' || options.secretsOut === options.out)
      throw new RedactError('ARGUMENT_INVALID', 'secretsOut must be a path other than out');
    if (await exists(options.secretsOut))
      throw new RedactError('OUTPUT_EXISTS', `${options.secretsOut} exists; a secrets file is never overwritten`, {
        location: { file: options.secretsOut },
      });
  }
  const scheme = formatOf(source.genesis).capabilities.publication;
  if (scheme === 'tree') return publishV3(source, options);
  if (scheme === 'slots') return publishCommitted(source, options);
  const pub = await preparePublication(source, options);
  let wroteSecrets = false;
  if (options.secretsOut !== undefined) {
    await writeSecrets(
      options.secretsOut,
      secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed, pub.steps),
    );
    wroteSecrets = true;
  }
  let result: ExportResult;
  try {
    result = await writePlanToFile(pub.plan, options.out);
  } catch (e) {
    if (wroteSecrets) await rm(options.secretsOut!, { force: true });
    throw e;
  }
  return {
    ...result,
    redactions: pub.redactions.length,
    policy_digest: pub.anchor.policy_digest,
    original_head: pub.originalHead,
    redacted_from: pub.anchor.redacted_from,
    secrets_out: options.secretsOut ?? null,
    publication: 'anchored',
    views: 0,
  };
}

/**
 * Creates the secrets file, private (0600). 'wx': a file that appeared since publish checked the path (it
 * reads the whole journal in between) is refused as OUTPUT_EXISTS, never overwritten.
 */
async function writeSecrets(path: string, secrets: SecretsFile): Promise<void> {
  try {
    await writeFile(path, JSON.stringify(secrets) + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    throw outputError(path, e, 'a secrets file is never overwritten');
  }
  await chmod(path, 0o600); // the mode given to writeFile passes through the umask
}

/** A private output that could not be created: OUTPUT_EXISTS when it is there already, else OUTPUT_FAILED; both name it. */
function outputError(path: string, e: unknown, never: string): RedactError {
  if ((e as NodeJS.ErrnoException).code === 'EEXIST')
    return new RedactError('OUTPUT_EXISTS', `${path} exists; ${never}`, { location: { file: path } });
  return new RedactError('OUTPUT_FAILED', `cannot write ${path}: ${e instanceof Error ? e.message : String(e)}`, {
    location: { file: path },
    cause: e,
    hint: 'the folder must exist and be writable',
  });
}

/**
 * A v2 journal (REDACTION §12): public records against the original head. The secrets file, when asked
 * for, holds only the value commitments inside redacted views; every slot opens from the journal itself.
 */
async function publishCommitted(source: ChainSource, options: PublishOptions): Promise<PublishResult> {
  const policy = await loadPolicy(options.policy);
  const sign = options.sign === undefined ? undefined : await signingKey(options.sign);
  const pub = await planCommittedPublication(source, {
    policy,
    ...(options.salts ? { salts: options.salts } : {}),
    ...(sign === undefined ? {} : { sign }),
    ...(options.exporter === undefined ? {} : { exporter: options.exporter }),
  });
  if (options.secretsOut !== undefined)
    await writeSecrets(options.secretsOut, secretsFile(pub.plan.manifestDigest, pub.redactions, [], []));
  let result: ExportResult;
  try {
    result = await writePlanToFile(pub.plan, options.out);
  } catch (e) {
    if (options.secretsOut !== undefined) await rm(options.secretsOut, { force: true });
    throw e;
  }
  return {
    ...result,
    redactions: pub.declarations.length,
    policy_digest: policy.digest,
    original_head: pub.head,
    redacted_from: firstWithheld(pub.declarations, pub.head.seq),
    secrets_out: options.secretsOut ?? null,
    publication: 'original-head',
    views: pub.lines.reduce((n, l) => n + (l.startsWith('{"digests":{') ? viewSlots(JSON.parse(l)).length : 0), 0),
  };
}

/**
 * A v3 journal (REDACTION §13): public records against the original head, every shown byte bound. No
 * secrets file: each withheld unit's salt derives from its record's seed, which stays in the journal.
 */
async function publishV3(source: ChainSource, options: PublishOptions): Promise<PublishResult> {
  if (options.secretsOut !== undefined) {
    throw new RedactError(
      'ARGUMENT_INVALID',
      'a stepchain/v3 journal is published without a secrets file: every withheld unit opens from the journal itself (its salt derives from the record seed)',
      {
        hint: 'leave out --secrets-out',
      },
    );
  }
  const policy = await loadPolicy(options.policy);
  const sign = options.sign === undefined ? undefined : await signingKey(options.sign);
  const { pub, result } = await afterLiveErasure(async () => {
    const pub = await planV3Publication(source, {
      policy,
      ...(sign === undefined ? {} : { sign }),
      ...(options.exporter === undefined ? {} : { exporter: options.exporter }),
    });
    // An erasure recorded while the file was written, of what it shows: not put in place; published again.
    const result = await writePlanToFile(pub.plan, options.out, {
      source,
      check: async () => {
        const p = await erasedSince(source.lines({ from: pub.checkedTo + 1 }), 0, pub.head.seq, lineReader(source));
        if (p !== null)
          throw new RedactError('ERASURE_PENDING', describeErasedSince(p, `${options.out} was being written`), {
            hint: 'publish again once the erase is done',
          });
      },
    });
    return { pub, result };
  });
  return {
    ...result,
    redactions: pub.declarations.length,
    policy_digest: policy.digest,
    original_head: pub.head,
    redacted_from: firstWithheld(pub.declarations, pub.head.seq),
    secrets_out: null,
    publication: 'original-head',
    views: 0,
    bound: true,
  };
}

/** The first seq whose record withholds a unit; 0 when only parts withhold some (a part may be shown by any record). */
function firstWithheld(declarations: readonly { seq?: number; part?: string }[], head: number): number {
  const first = declarations[0];
  return first === undefined ? head + 1 : (first.seq ?? 0);
}

/** `verifyPublishedReceipt` for a file path as well as bytes or a stream: the root entry's `verifyPublishedReceipt`. */
export async function verifyPublishedAt(
  input: ByteInput | string,
  options: VerifyPublishedOptions = {},
): Promise<PublishedReport> {
  return typeof input === 'string' ? verifyPublishedFile(input, options) : verifyPublishedReceipt(input, options);
}

/** Verifies a published receipt file (streamed from disk). Never throws on the file's content. */
export async function verifyPublishedFile(
  path: string,
  options: VerifyPublishedOptions = {},
): Promise<PublishedReport> {
  const { locate, ...rest } = options;
  const hooks = publishedReceiptHooks(locate);
  return (await verifyReceiptFile(path, { ...rest, ...hooks.options, finish: hooks.finish })) as PublishedReport; // eslint-disable-line @typescript-eslint/no-unnecessary-type-assertion -- the finish hook makes it a PublishedReport; the generic cannot say so
}

/** A secrets file's JSON: a path that cannot be read is ARGUMENT_INVALID, text that is not JSON SECRETS_INVALID. */
async function readSecrets(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new RedactError(
      'ARGUMENT_INVALID',
      `cannot read secrets file ${path}: ${e instanceof Error ? e.message : String(e)}`,
      { location: { file: path } },
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new RedactError('SECRETS_INVALID', `secrets file ${path} is not JSON`, { location: { file: path } });
  }
}

/**
 * Makes a disclosure proof for one redacted location from the secrets file, after checking that the
 * public receipt verifies and is the one the secrets file belongs to, and that the proof verifies.
 */
export async function disclose(
  receiptPath: string,
  options: { secrets: string; seq: number; path: string; out?: string },
): Promise<{ proof: DisclosureProof; report: DisclosureReport }> {
  const secrets = await readSecrets(options.secrets);
  const proof = discloseFromSecrets(secrets, options.seq, options.path);
  const bytes = await readReceiptBytes(receiptPath);
  const report = await verifyDisclosure(bytes, proof);
  if (!report.ok) {
    const p = report.problems[0]!;
    throw new RedactError(
      p.code === 'MANIFEST_MISMATCH' ? 'SECRETS_INVALID' : 'RECEIPT_INVALID',
      `the proof does not verify against ${receiptPath}: ${p.code}: ${p.message}`,
    );
  }
  if (options.out !== undefined) await writeProof(options.out, proof);
  return { proof, report };
}

/** Makes a whole-step proof (every redaction of one step) from the secrets file, checked against the receipt. */
export async function discloseStep(
  receiptPath: string,
  options: { secrets: string; seq: number; out?: string },
): Promise<{ proof: StepDisclosureProof; report: StepDisclosureReport }> {
  const secrets = await readSecrets(options.secrets);
  const proof = discloseStepFromSecrets(secrets, options.seq);
  const report = await verifyStepDisclosure(await readReceiptBytes(receiptPath), proof);
  if (!report.ok) {
    const p = report.problems[0]!;
    throw new RedactError(
      p.code === 'MANIFEST_MISMATCH' ? 'SECRETS_INVALID' : 'RECEIPT_INVALID',
      `the step proof does not verify against ${receiptPath}: ${p.code}: ${p.message}`,
    );
  }
  if (options.out !== undefined) await writeProof(options.out, proof);
  return { proof, report };
}

/** Makes a hash disclosure (the anchor's commitment to step `seq`'s original hash opened; default: the original head), checked against the receipt. */
export async function discloseHash(
  receiptPath: string,
  options: { secrets: string; seq?: number; out?: string },
): Promise<{ proof: HashDisclosureProof; report: HashDisclosureReport }> {
  const secrets = await readSecrets(options.secrets);
  let proof: HashDisclosureProof;
  try {
    proof = discloseHashFromSecrets(secrets, options.seq);
  } catch (e) {
    // Nothing to open: say why when the receipt is one that has no anchor at all.
    if (e instanceof RedactError && e.code === 'NOT_REDACTED')
      throw (await notAnchored(await readReceiptBytes(receiptPath), receiptPath)) ?? e;
    throw e;
  }
  const report = await verifyHashDisclosure(await readReceiptBytes(receiptPath), proof);
  if (!report.ok) {
    const p = report.problems[0]!;
    throw new RedactError(
      p.code === 'MANIFEST_MISMATCH' ? 'SECRETS_INVALID' : 'RECEIPT_INVALID',
      `the hash disclosure does not verify against ${receiptPath}: ${p.code}: ${p.message}`,
    );
  }
  if (options.out !== undefined) await writeProof(options.out, proof);
  return { proof, report };
}

/**
 * Why a hash disclosure cannot be made against a receipt published against its original head (a
 * stepchain/v2 journal, spec/REDACTION.md §12): it has no anchor, so there is no commitment to open — its
 * head is the original head, which whoever holds it pins with `verify --head`. Null for any other receipt.
 */
async function notAnchored(bytes: Uint8Array, receiptPath: string): Promise<RedactError | null> {
  const published = await verifyPublishedReceipt(bytes);
  if (published.publication === null || published.head === null) return null;
  return new RedactError(
    'NOT_REDACTED',
    `${receiptPath} is published against its original head (a stepchain/v2 journal, spec/REDACTION.md §12): its head ${published.head} (seq ${published.head_seq}) is the original head, so there is no anchor commitment for a hash disclosure to open`,
    {
      location: { file: receiptPath },
      hint: `whoever holds the original head checks it with \`stepchain verify ${receiptPath} --head ${published.head}\`; hash disclosures (§8.5) are for stepchain/v1 publications, and a withheld value of this receipt opens from the journal (§12.6)`,
    },
  );
}

export async function writeProof(out: string, proof: unknown): Promise<void> {
  try {
    await writeFile(out, JSON.stringify(proof) + '\n', { flag: 'wx', mode: 0o600 }); // it reveals values: private until shared
  } catch (e) {
    throw outputError(out, e, 'it is not overwritten');
  }
}

/** Checks a proof file (a value, a whole step or a hash, by its format) against a receipt file. Never throws on their content. */
export async function verifyDisclosureFiles(
  receiptPath: string,
  proofPath: string,
  options: Omit<VerifyPublishedOptions, 'locate'> = {},
): Promise<DisclosureReport | StepDisclosureReport | HashDisclosureReport> {
  let proof: unknown;
  try {
    proof = JSON.parse(await readFile(proofPath, 'utf8'));
  } catch (e) {
    return invalidProofReport(`cannot read ${proofPath} as JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const bytes = await readReceiptBytes(receiptPath);
  const format = proof !== null && typeof proof === 'object' ? (proof as { format?: unknown }).format : undefined;
  if (format === HASH_DISCLOSURE_FORMAT) return verifyHashDisclosure(bytes, proof, options);
  // A withdrawn step-disclosure format goes to the step verifier, which says why it is refused.
  if (typeof format === 'string' && format.startsWith('stepchain-step-disclosure/'))
    return verifyStepDisclosure(bytes, proof, options);
  return verifyDisclosure(bytes, proof, options);
}

export async function readReceiptBytes(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (e) {
    throw new RedactError(
      'ARGUMENT_INVALID',
      `cannot read receipt ${path}: ${e instanceof Error ? e.message : String(e)}`,
      { location: { file: path } },
    );
  }
}
