/**
 * The publisher's core (spec/REDACTION.md §5–§6): reads a journal, verifies it, refuses an envelope member
 * a detector of the policy matches (it cannot be redacted), redacts every step by the policy, re-chains the
 * redacted steps from the same genesis, commits to every original step hash that depends on a redaction
 * with a salted step commitment, sweeps the result for any string a rule matched, and plans a receipt of
 * the new chain with the anchor block and the declarations in its manifest. No file I/O here (node.ts
 * writes the files); the journal is only read.
 *
 * Memory: the redacted chain and the blobs it keeps are held in memory until the receipt is written, so
 * publishing needs about the journal's size in RAM. The manifest limit (16 MiB) bounds a published
 * receipt to about 200 000 steps (75 bytes of anchor per step plus the declarations).
 */
import { canonicalJson } from '../canonical/jcs.js';
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import { digestBytes, digestUtf8 } from '../canonical/sha256.js';
import { genesisHash, sealRecord, type Json, type JsonObject, type StepRecord, type UnsealedRecord } from '../chain/record.js';
import { describeLocation } from '../chain/report.js';
import type { ChainSource } from '../chain/source.js';
import { BLOB_MARKER, ChainVerifier, REDACTED_MARKER } from '../chain/verify.js';
import { planReceipt, type ReceiptPlan } from '../receipt/writer.js';
import { REDACTION_FORMAT, compareDeclarations, extrasToJson, type AnchorBlock, type Declaration, type StepOpening } from './anchor.js';
import { SALT_BYTES, randomSalts, saltToHex, stepCommitment, type SaltSource } from './commit.js';
import { findSecrets } from './detectors.js';
import { RedactError } from './errors.js';
import type { Policy } from './policy.js';
import { NeedleSearch } from './needles.js';
import { REDACTABLE_FIELDS, redactStep, type Redaction } from './redact.js';

export interface PublishCoreOptions {
  policy: Policy;
  /** Where salts come from (default: 32 random bytes each). Fixed salts only for tests and vectors. */
  salts?: SaltSource;
  /** Ed25519 signing key: 32 seed bytes or a PKCS#8 PEM. */
  signingKey?: Uint8Array | string;
  exporter?: string;
}

export interface Publication {
  plan: ReceiptPlan;
  anchor: AnchorBlock;
  /** The original head (private: the public receipt shows it only when nothing was redacted). */
  originalHead: { seq: number; step_hash: string };
  /** The opening of every step commitment, by seq (private: each reveals an original step hash). */
  steps: StepOpening[];
  /** Every redaction in declaration order, with its salt and original value (private). */
  redactions: Redaction[];
  /** The published chain's stored lines (without newlines). */
  lines: string[];
  /** Per step, the content fields that were blobs in the original but are not in the published step. */
  unblobbed: Array<{ seq: number; fields: string[] }>;
}

/** Strings a path rule selected that are shorter than this are not searched for ("yes", "42" occur everywhere). */
export const MIN_SWEEP_LENGTH = 8;
/**
 * The sweep searches each matched string written with 0 to this many levels of JSON escaping (§5.5).
 * Every published text is canonical JSON, so level 1 is the string as a value; each further level is one
 * more JSON document quoted inside a string (a tool result holding an HTTP body that holds a JSON string
 * that a log line quotes is level 4). A string with nothing to escape has one form at every level, so
 * the cost is one needle per level only for strings holding a quote, a backslash or a control character.
 */
export const MAX_ESCAPE_DEPTH = 5;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function sourceInvalid(message: string): RedactError {
  return new RedactError('SOURCE_INVALID', message, { hint: 'run `stepchain verify` on the journal; only a journal that verifies is published' });
}

function isBlobRef(v: Json | undefined): v is { [BLOB_MARKER]: { digest: string; size: number } } {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && BLOB_MARKER in v;
}

/** Redacts and re-chains `source`, and plans the public receipt. Reads the journal; never writes it. */
export async function planPublication(source: ChainSource, options: PublishCoreOptions): Promise<Publication> {
  const { policy } = options;
  const source_ = options.salts ?? randomSalts();
  if (typeof source_ !== 'function') throw new RedactError('ARGUMENT_INVALID', 'salts must be a function returning 32-byte salts (randomSalts(), seededSalts(seed), fixedSalts([...]))');
  const salts: SaltSource = () => {
    let salt: unknown;
    try {
      salt = source_();
    } catch (e) {
      throw new RedactError('ARGUMENT_INVALID', `the salt source failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    if (!(salt instanceof Uint8Array) || salt.length !== SALT_BYTES) throw new RedactError('ARGUMENT_INVALID', `the salt source returned something other than ${SALT_BYTES} bytes`);
    return salt;
  };
  const head = await source.head();
  if (head === null) throw new RedactError('SOURCE_INVALID', 'the journal holds no step; there is nothing to publish');
  const genesis = source.genesis;
  let preexisting: string | null = null;
  const verifier = new ChainVerifier({
    genesis, expectHead: head.step_hash, maxProblems: 10,
    onLine: (l) => {
      if (l.markers.some((m) => m.names.includes(REDACTED_MARKER))) {
        preexisting ??= `step ${l.seq ?? '?'} already holds a redaction marker; publish from the original journal, not from a published copy`;
      }
    },
  });

  const lines: Array<{ bucket: string; seq: number; text: string }> = [];
  const openings: Array<{ seq: number; salt: Uint8Array; step_hash: string }> = [];
  /** The first seq with a redaction; every original step hash from it on depends on a redacted value. */
  let redactedFrom: number | null = null;
  const redactions: Redaction[] = [];
  const kept = new Map<string, Uint8Array>();
  const unblobbed: Array<{ seq: number; fields: string[] }> = [];
  const blobCache = new Map<string, Json>();
  let prev = genesisHash(genesis);
  let bucket: string | null = null;
  const envelope = envelopeCheck(policy);
  envelope(genesis as unknown as Json, 'the genesis', {});

  const loadBlob = async (ref: { digest: string; size: number }, seq: number, field: string): Promise<{ value: Json; bytes: Uint8Array }> => {
    const bytes = await source.blob(ref.digest);
    if (bytes === null) throw sourceInvalid(`step ${seq} references blob ${ref.digest} in ${field}, which the journal does not hold`);
    if (bytes.length !== ref.size || digestBytes(bytes) !== ref.digest) throw sourceInvalid(`blob ${ref.digest} (step ${seq}, ${field}) does not match its digest and size`);
    let value = blobCache.get(ref.digest);
    if (value === undefined) {
      try {
        value = JSON.parse(decoder.decode(bytes)) as Json;
      } catch {
        throw sourceInvalid(`blob ${ref.digest} is not JSON`);
      }
      blobCache.set(ref.digest, value);
    }
    return { value, bytes };
  };

  for await (const line of source.lines({ from: 0, to: head.seq })) {
    if (line.bucket !== bucket) verifier.beginFile(line.bucket);
    bucket = line.bucket;
    verifier.line(line.text, true);
    let record: StepRecord;
    try {
      record = JSON.parse(line.text) as StepRecord;
    } catch {
      throw sourceInvalid(`the line of step ${line.seq} is not JSON`);
    }
    envelope(record.step_id, `step ${line.seq}'s step_id`, { seq: line.seq, field: 'step_id' });
    envelope(record.ts, `step ${line.seq}'s ts`, { seq: line.seq, field: 'ts' });

    // Original values, blobs resolved.
    const originals: Record<string, Json> = {};
    const blobRefs = new Map<string, { digest: string; size: number; bytes: Uint8Array }>();
    for (const field of REDACTABLE_FIELDS) {
      const v = (record as unknown as Record<string, Json | undefined>)[field];
      if (v === undefined) continue;
      if (field !== 'meta' && isBlobRef(v)) {
        const ref = v[BLOB_MARKER];
        const { value, bytes } = await loadBlob(ref, line.seq, field);
        originals[field] = value;
        blobRefs.set(field, { ...ref, bytes });
      } else originals[field] = v;
    }
    const { fields, redactions: found } = redactStep(policy, line.seq, originals, salts);
    found.sort(compareDeclarations);
    for (const r of found) redactions.push(r); // one push per value: a spread of an unbounded array overflows the stack
    if (redactedFrom === null && found.length > 0) redactedFrom = line.seq;
    // Drawn after the step's value salts (§5.3), so seeded salts number the same in every implementation.
    if (redactedFrom !== null) openings.push({ seq: line.seq, salt: salts(), step_hash: record.step_hash });

    const next: Record<string, unknown> = { v: record.v, seq: record.seq, step_id: record.step_id, ts: record.ts, prev_hash: prev };
    for (const field of REDACTABLE_FIELDS) {
      if (!(field in originals)) continue;
      const ref = blobRefs.get(field);
      if (fields[field] === originals[field]) {
        // Unchanged: keep the field as stored (a blob reference stays one, and its blob is published).
        next[field] = (record as unknown as Record<string, Json>)[field];
        if (ref) kept.set(ref.digest, ref.bytes);
      } else {
        // Redacted (wholly: a marker; partly: the new value, inline so the verifier sees every marker).
        next[field] = fields[field];
        if (ref) {
          const last = unblobbed[unblobbed.length - 1];
          if (last && last.seq === line.seq) last.fields.push(field);
          else unblobbed.push({ seq: line.seq, fields: [field] });
        }
      }
    }
    let sealed: { record: StepRecord; line: string };
    try {
      sealed = sealRecord(next as unknown as UnsealedRecord);
    } catch (e) {
      throw sourceInvalid(`step ${line.seq} cannot be re-sealed: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (encoder.encode(sealed.line).length > MAX_LINE_BYTES) {
      throw new RedactError('LIMIT_EXCEEDED', `the redacted step ${line.seq} would be a line over ${MAX_LINE_BYTES} bytes (a partly redacted blob is stored inline)`, {
        location: { seq: line.seq }, hint: 'add a rule that redacts the whole field',
      });
    }
    if (redactedFrom === null && sealed.record.step_hash !== record.step_hash) {
      // Steps before the first redaction are published unchanged, so their hashes are public (§6.2).
      throw sourceInvalid(`step ${line.seq} holds no redaction but does not re-seal to its own step hash; its line has members this version does not know`);
    }
    prev = sealed.record.step_hash;
    lines.push({ bucket: line.bucket, seq: line.seq, text: sealed.line.slice(0, -1) });
  }
  const report = verifier.finish();
  if (!report.ok) {
    const p = report.problems[0]!;
    throw sourceInvalid(`the journal does not verify: ${p.code} at ${describeLocation(p.location)}: ${p.message}`);
  }
  if (preexisting) throw sourceInvalid(preexisting);
  if (lines.length !== head.seq + 1) throw sourceInvalid(`the journal yielded ${lines.length} steps; its head is seq ${head.seq}`);

  const anchor: AnchorBlock = {
    commitments: openings.map((o) => stepCommitment(o.salt, o.step_hash)),
    format: REDACTION_FORMAT,
    genesis_hash: genesisHash(genesis),
    length: head.seq + 1,
    policy_digest: policy.digest,
    redacted_from: redactedFrom ?? head.seq + 1,
  };
  const declarations: Declaration[] = redactions.map((r) => ({ path: r.path, rule: r.rule, seq: r.seq }));

  // The sweep: no string a rule matched may remain anywhere in what is published.
  sweep(redactions, [
    ...lines.map((l) => ({ text: l.text, where: `step ${l.seq}` })),
    ...[...kept].map(([digest, bytes]) => ({ text: decoder.decode(bytes), where: `blob ${digest}` })),
    { text: canonicalJson(genesis), where: 'the genesis' },
  ]);

  const plan = await planReceipt({
    genesis,
    lines: async function* () {
      yield* lines;
    },
    from: 0,
    to: head.seq,
    blob: async (d) => kept.get(d) ?? null,
    extra: extrasToJson({ anchor, redactions: declarations }),
    ...(options.signingKey === undefined ? {} : { signingKey: options.signingKey }),
    ...(options.exporter === undefined ? {} : { exporter: options.exporter }),
  });
  sweep(redactions, [{ text: decoder.decode(plan.manifestBytes), where: 'the manifest' }]);
  return {
    plan, anchor, redactions, lines: lines.map((l) => l.text), unblobbed,
    originalHead: { seq: head.seq, step_hash: head.step_hash },
    steps: openings.map((o) => ({ salt: saltToHex(o.salt), seq: o.seq, step_hash: o.step_hash })),
  };
}

/**
 * Envelope members (step_id, ts, the genesis) are never redacted, so a secret in one would be published
 * whatever the policy: every detector any rule of the policy names is run over their strings, and a
 * match refuses the publication (ENVELOPE_SECRET), naming the member but not the secret.
 */
function envelopeCheck(policy: Policy): (value: Json, what: string, location: { seq?: number; field?: string }) => void {
  const ruleOf = new Map<string, string>();
  for (const r of policy.rules) for (const d of r.detectors) if (!ruleOf.has(d)) ruleOf.set(d, r.id);
  const detectors = [...ruleOf.keys()];
  const check = (value: Json, what: string, location: { seq?: number; field?: string }, path: string): void => {
    if (typeof value === 'string') {
      const m = findSecrets(value, detectors)[0];
      if (m) {
        throw new RedactError('ENVELOPE_SECRET', `${what}${path} matches the ${m.detector} detector (rule ${JSON.stringify(ruleOf.get(m.detector))}); envelope members are never redacted, so publishing would reveal it`, {
          location: { ...location, ...(path ? { path } : {}) },
          hint: 'envelope members (step_id, ts, the genesis) are published as they are; if this is a false positive, drop the detector from the policy, otherwise the journal cannot be published',
        });
      }
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) check(v, what, location, `${path}/${String(k)}`);
    }
  };
  return (value, what, location) => {
    if (detectors.length > 0) check(value, what, location, '');
  };
}

/**
 * The forms of `s` the sweep looks for: `s` itself and `s` JSON-escaped 1 to MAX_ESCAPE_DEPTH times
 * (JSON.stringify's escaping is JCS's: `"`, `\\` and control characters). Stops early once escaping no
 * longer changes the string.
 */
export function escapedForms(s: string): string[] {
  const out = [s];
  let t = s;
  for (let n = 1; n <= MAX_ESCAPE_DEPTH; n++) {
    const next = JSON.stringify(t).slice(1, -1);
    if (next === t) break;
    out.push(next);
    t = next;
  }
  return out;
}

/**
 * Throws LEAK_DETECTED (without quoting the secret) if any matched string appears in any text, in any of
 * its escaped forms. Every text is canonical JSON, where a string value d is written as escape(d); so
 * finding escape^(n+1)(s) in the text is finding escape^n(s) in a decoded string: searching the raw text
 * for levels 0..MAX_ESCAPE_DEPTH searches the decoded strings for levels 0..MAX_ESCAPE_DEPTH − 1 too.
 * Linear in the bytes searched (needles.ts): searching each needle in each text was quadratic (5 s for
 * 2000 steps, measured), and slicing every window of every text to look it up was most of a publish.
 */
function sweep(redactions: readonly Redaction[], texts: ReadonlyArray<{ text: string; where: string }>): void {
  const origin = new Map<string, { rule: string; level: number }>();
  for (const r of redactions) {
    for (const s of r.matched) {
      // Detector matches are searched for whatever their length; leaves a path selected from 8 characters.
      if (s.length === 0 || (!r.detected && s.length < MIN_SWEEP_LENGTH)) continue;
      escapedForms(s).forEach((form, level) => {
        if (!origin.has(form)) origin.set(form, { rule: `rule "${r.rule}" (matched at seq ${r.seq}, ${r.path})`, level });
      });
    }
  }
  const search = new NeedleSearch(origin.keys());
  for (const { text, where } of texts) {
    const needle = search.find(text);
    if (needle !== null) {
      const o = origin.get(needle)!;
      const how = o.level === 0 ? 'as it is' : o.level === 1 ? 'as a JSON string' : `JSON-escaped ${o.level} times (quoted inside a string value)`;
      throw new RedactError('LEAK_DETECTED', `a string that ${o.rule} redacted still appears in ${where}, ${how}`, {
        hint: 'the policy selects that value in one place but not in another; widen the rule (fewer tools/seq limits, broader paths) and publish again',
      });
    }
  }
}

/** digest of a policy document, for callers that hold only the JSON. */
export function policyDigestOf(document: Json | JsonObject): string {
  return digestUtf8(canonicalJson(document));
}
