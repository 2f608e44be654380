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
import type { Json } from '../canonical/json.js';
import type { ChainSource } from '../chain/source.js';
import type { KeyInput } from '../receipt/keys.js';
import { genesisHash } from '../record/formats.js';
import { planReceipt, type ReceiptPlan } from '../receipt/writer.js';
import { REDACTION_FORMAT, extrasToJson, type AnchorBlock, type Declaration, type StepOpening } from './anchor.js';
import { SALT_BYTES, randomSalts, saltToHex, stepCommitment, type SaltSource } from './commit.js';
import { findSecrets } from './detectors.js';
import { RedactError } from './errors.js';
import type { Policy } from './policy.js';
import { NeedleSearch } from './needles.js';
import { Rechain, type EnvelopeCheck } from './rechain.js';
import type { Redaction } from './redact.js';

export interface PublishCoreOptions {
  policy: Policy;
  /** Where salts come from (default: 32 random bytes each). Fixed salts only for tests and vectors. */
  salts?: SaltSource;
  /** Ed25519 signing key: 32 seed bytes or a PKCS#8 PEM. */
  sign?: KeyInput;
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
  unblobbed: { seq: number; fields: string[] }[];
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

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Redacts and re-chains `source`, and plans the public receipt. Reads the journal; never writes it. */
export async function planPublication(source: ChainSource, options: PublishCoreOptions): Promise<Publication> {
  const { policy } = options;
  const salts = checkedSalts(options.salts ?? randomSalts());
  const head = await source.head();
  if (head === null) throw new RedactError('SOURCE_INVALID', 'the journal holds no step; there is nothing to publish');
  const genesis = source.genesis;
  const envelope = envelopeCheck(policy);
  envelope(genesis as unknown as Json, 'the genesis', {});
  const walk = new Rechain(source, policy, salts, envelope, head.step_hash);
  for await (const line of source.lines({ from: 0, to: head.seq })) await walk.step(line);
  walk.finish(head.seq);

  const anchor: AnchorBlock = {
    commitments: walk.openings.map((o) => stepCommitment(o.salt, o.step_hash)),
    format: REDACTION_FORMAT,
    genesis_hash: genesisHash(genesis),
    length: head.seq + 1,
    policy_digest: policy.digest,
    redacted_from: walk.redactedFrom ?? head.seq + 1,
  };
  const { lines, kept, redactions } = walk;
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
    ...(options.sign === undefined ? {} : { sign: options.sign }),
    ...(options.exporter === undefined ? {} : { exporter: options.exporter }),
  });
  sweep(redactions, [{ text: decoder.decode(plan.manifestBytes), where: 'the manifest' }]);
  return {
    plan,
    anchor,
    redactions,
    lines: lines.map((l) => l.text),
    unblobbed: walk.unblobbed,
    originalHead: { seq: head.seq, step_hash: head.step_hash },
    steps: walk.openings.map((o) => ({ salt: saltToHex(o.salt), seq: o.seq, step_hash: o.step_hash })),
  };
}

/** The caller's salt source, wrapped so that a failing or misbehaving one is ARGUMENT_INVALID. */
export function checkedSalts(source: SaltSource): SaltSource {
  if (typeof source !== 'function')
    throw new RedactError(
      'ARGUMENT_INVALID',
      'salts must be a function returning 32-byte salts (randomSalts(), seededSalts(seed), fixedSalts([...]))',
    );
  return () => {
    let salt: unknown;
    try {
      salt = source();
    } catch (e) {
      throw new RedactError(
        'ARGUMENT_INVALID',
        `the salt source failed: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    }
    if (!(salt instanceof Uint8Array) || salt.length !== SALT_BYTES)
      throw new RedactError('ARGUMENT_INVALID', `the salt source returned something other than ${SALT_BYTES} bytes`);
    return salt;
  };
}

/**
 * Envelope members (step_id, ts, the genesis) are never redacted, so a secret in one would be published
 * whatever the policy: every detector any rule of the policy names is run over their strings, and a
 * match refuses the publication (ENVELOPE_SECRET), naming the member but not the secret.
 */
export function envelopeCheck(policy: Policy): EnvelopeCheck {
  const ruleOf = new Map<string, string>();
  for (const r of policy.rules) for (const d of r.detectors) if (!ruleOf.has(d)) ruleOf.set(d, r.id);
  const detectors = [...ruleOf.keys()];
  const check = (value: Json, what: string, location: { seq?: number; field?: string }, path: string): void => {
    if (typeof value === 'string') {
      const m = findSecrets(value, detectors)[0];
      if (m) {
        throw new RedactError(
          'ENVELOPE_SECRET',
          `${what}${path} matches the ${m.detector} detector (rule ${JSON.stringify(ruleOf.get(m.detector))}); envelope members are never redacted, so publishing would reveal it`,
          {
            location: { ...location, ...(path ? { path } : {}) },
            hint: 'envelope members (step_id, ts, the genesis) are published as they are; if this is a false positive, drop the detector from the policy, otherwise the journal cannot be published',
          },
        );
      }
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value))
        check(v, what, location, `${path}/${String(k)}`);
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
export function sweep(redactions: readonly Redaction[], texts: readonly { text: string; where: string }[]): void {
  const origin = new Map<string, { rule: string; level: number }>();
  for (const r of redactions) {
    for (const s of r.matched) {
      // Detector matches are searched for whatever their length; leaves a path selected from 8 characters.
      if (s.length === 0 || (!r.detected && s.length < MIN_SWEEP_LENGTH)) continue;
      escapedForms(s).forEach((form, level) => {
        if (!origin.has(form))
          origin.set(form, { rule: `rule "${r.rule}" (matched at seq ${r.seq}, ${r.path})`, level });
      });
    }
  }
  const search = new NeedleSearch(origin.keys());
  for (const { text, where } of texts) {
    const needle = search.find(text);
    if (needle !== null) {
      const o = origin.get(needle)!;
      const how =
        o.level === 0
          ? 'as it is'
          : o.level === 1
            ? 'as a JSON string'
            : `JSON-escaped ${o.level} times (quoted inside a string value)`;
      throw new RedactError('LEAK_DETECTED', `a string that ${o.rule} redacted still appears in ${where}, ${how}`, {
        hint: 'the policy selects that value in one place but not in another; widen the rule (fewer tools/seq limits, broader paths) and publish again',
      });
    }
  }
}
