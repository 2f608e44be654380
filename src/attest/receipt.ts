/**
 * A receipt's independent time and co-signatures (spec/TIME.md §6, §7): the manifest members `timestamps`
 * (RFC 3161 tokens over heads in the range) and `cosignatures` (DSSE envelopes over ranges), checked as
 * hooks of verifyReceipt — the members when the manifest is read, the step hashes they name as the chain is
 * read (`onLine`), and everything else at the end (`finish`, asynchronous: WebCrypto checks the TSA's
 * signature). Every byte is hostile: nothing here throws on input. Pure; runs in a browser.
 */
import type { Problem } from '../chain/report.js';
import type { VerifiedLine } from '../chain/verifier.js';
import { digestBytes, isDigest } from '../canonical/sha256.js';
import { genesisHash } from '../record/formats.js';
import { base64Decode } from '../receipt/base64.js';
import { verifyReceipt, type ByteInput, type ReceiptReport, type VerifyReceiptOptions } from '../receipt/verify.js';
import {
  envelopeDefect,
  parseStatement,
  timestampSubject,
  type CosignEnvelope,
  type CosignStatement,
} from './statements.js';
import { describeAttestations } from './receipt-verdict.js';
import type { TsaCertificate } from './tsp.js';

export const TIMESTAMPS_MEMBER = 'timestamps';
export const COSIGNATURES_MEMBER = 'cosignatures';

export type AttestProblemCode =
  | 'TIMESTAMP_INVALID'
  | 'TIMESTAMP_MISMATCH'
  | 'TIMESTAMP_SIGNER'
  | 'TIMESTAMP_CERT_EXPIRED'
  | 'TIMESTAMP_MISSING'
  | 'COSIGNATURE_INVALID'
  | 'COSIGNATURE_MISMATCH'
  | 'COSIGN_QUORUM';

/** One carried token: a head of the range and the DER token (base64) over its subject. */
export interface TimestampEntry {
  seq: number;
  step_hash: string;
  token: string;
}

export interface Cosigner {
  /** Raw 32-byte Ed25519 public key. */
  key: Uint8Array;
  /** What the verdict calls it (a file name, a person); the key id when absent. */
  name?: string;
}

export interface AttestOptions {
  /** Pinned TSA certificates (parseTsaCertificate): every carried token must verify against one of them. */
  tsa?: TsaCertificate[];
  /** Pinned co-signers: the keys whose signatures count. */
  cosigners?: Cosigner[];
  /** How many of the pinned co-signers must have signed (default: all of them). */
  threshold?: number;
}

export interface AttestReport {
  timestamps: {
    seq: number;
    step_hash: string;
    checked: boolean;
    gen_time: string | null;
    tsa: string | null;
    serial: string | null;
  }[];
  cosignatures: {
    keyid: string;
    name: string | null;
    from: number;
    to: number;
    pinned: boolean;
    verified: boolean;
  }[];
  threshold: number | null;
  /** Pinned co-signers whose verified signature covers some of the range. */
  cosigned_by: string[];
}

export type AttestedReport<R> = R & { attest?: AttestReport };

/** A key id (RECEIPT.md §5): the digest of the raw 32-byte public key. */
const keyIdOf = (key: Uint8Array): string => digestBytes(key);

/** Why a `timestamps` member is malformed, or null (spec/TIME.md §6). */
export function timestampsDefect(v: unknown): string | null {
  if (!Array.isArray(v) || v.length < 1 || v.length > 16) return 'timestamps must be a list of 1 to 16 entries';
  for (const [i, t] of (v as unknown[]).entries()) {
    if (typeof t !== 'object' || t === null || Object.keys(t).sort().join(',') !== 'seq,step_hash,token')
      return `timestamps[${i}] must have exactly the members seq, step_hash and token`;
    const e = t as Record<string, unknown>;
    if (typeof e.seq !== 'number' || !Number.isSafeInteger(e.seq) || e.seq < 0)
      return `timestamps[${i}].seq is not a seq`;
    if (!isDigest(e.step_hash)) return `timestamps[${i}].step_hash is not "sha256:" and 64 lowercase hex digits`;
    if (typeof e.token !== 'string' || e.token.length > 65536 || base64Decode(e.token) === null)
      return `timestamps[${i}].token is not canonical base64 of at most 48 KiB`;
  }
  return null;
}

/** Why a `cosignatures` member is malformed, or null. */
export function cosignaturesDefect(v: unknown): string | null {
  if (!Array.isArray(v) || v.length < 1 || v.length > 64) return 'cosignatures must be a list of 1 to 64 envelopes';
  for (const [i, e] of v.entries()) {
    const why =
      envelopeDefect(e) ??
      (parseStatement(e as CosignEnvelope).ok
        ? null
        : (parseStatement(e as CosignEnvelope) as { reason: string }).reason);
    if (why) return `cosignatures[${i}]: ${why}`;
  }
  return null;
}

/** Hooks for verifyReceipt: pass `extensions` and `onLine`, then await `finish` on its report. */
export function receiptAttestHooks(options: AttestOptions = {}): {
  extensions: Record<string, (value: unknown) => string | null>;
  onLine: (line: VerifiedLine) => void;
  finish: <R extends ReceiptReport>(report: R) => Promise<AttestedReport<R>>;
} {
  const checks = new AttestChecks(options ?? {});
  return {
    extensions: {
      [TIMESTAMPS_MEMBER]: (v) => checks.timestampsMember(v),
      [COSIGNATURES_MEMBER]: (v) => checks.cosignaturesMember(v),
    },
    onLine: (line) => checks.line(line),
    finish: (report) => checks.finish(report),
  };
}

class AttestChecks {
  private timestamps: TimestampEntry[] = [];
  private envelopes: CosignEnvelope[] = [];
  /** The step hash at each seq a member names (and at seq − 1 of a statement's from), as the chain verified them. */
  private readonly wanted = new Map<number, string | null>();

  constructor(private readonly options: AttestOptions) {}

  timestampsMember(v: unknown): string | null {
    const why = timestampsDefect(v);
    if (!why) for (const t of (this.timestamps = v as TimestampEntry[])) this.wanted.set(t.seq, null);
    return why;
  }

  cosignaturesMember(v: unknown): string | null {
    const why = cosignaturesDefect(v);
    if (why) return why;
    this.envelopes = v as CosignEnvelope[];
    for (const e of this.envelopes) {
      const s = (parseStatement(e) as { statement: CosignStatement }).statement;
      this.wanted.set(s.to, null);
      if (s.from > 0) this.wanted.set(s.from - 1, null);
    }
    return null;
  }

  line(l: VerifiedLine): void {
    if (l.clean && l.seq !== null && l.step_hash !== null && this.wanted.has(l.seq))
      this.wanted.set(l.seq, l.step_hash);
  }

  async finish<R extends ReceiptReport>(report: R): Promise<AttestedReport<R>> {
    const tsa = this.options.tsa ?? [];
    const cosigners = this.options.cosigners ?? [];
    if (this.timestamps.length === 0 && this.envelopes.length === 0 && tsa.length === 0 && cosigners.length === 0)
      return report;
    const out = report as AttestedReport<R>;
    const attest: AttestReport = { timestamps: [], cosignatures: [], threshold: null, cosigned_by: [] };
    out.attest = attest;
    const problems: Problem[] = [];
    const add = (code: AttestProblemCode, message: string, path: string): void =>
      void problems.push({ code, message: `${code}: ${message}`, location: { path } });
    // A manifest that did not parse (or a receipt cut short) has nothing to bind to: the receipt's own problems say why.
    if (report.manifest && report.range) {
      try {
        await this.checkTimestamps(report, tsa, attest, add);
        await this.checkCosignatures(report, cosigners, attest, add);
      } catch (e) {
        add(
          'TIMESTAMP_INVALID',
          `the attestations could not be checked: ${e instanceof Error ? e.message : String(e)}`,
          '',
        );
      }
    }
    if (problems.length > 0) {
      report.problems.push(...problems);
      report.ok = false;
      report.proves = [];
      report.authenticated_by = [];
    } else if (report.ok) describeAttestations(report, attest, cosigners);
    return out;
  }

  private async checkTimestamps(
    report: ReceiptReport,
    tsa: TsaCertificate[],
    attest: AttestReport,
    add: (c: AttestProblemCode, m: string, p: string) => void,
  ): Promise<void> {
    const g = genesisHash(report.manifest!.genesis);
    const { from, to } = report.range!;
    if (tsa.length > 0 && this.timestamps.length === 0)
      add(
        'TIMESTAMP_MISSING',
        'a TSA certificate was pinned but the receipt carries no time-stamp token',
        `/${TIMESTAMPS_MEMBER}`,
      );
    for (const [i, t] of this.timestamps.entries()) {
      const at = `/${TIMESTAMPS_MEMBER}/${i}`;
      const row = {
        seq: t.seq,
        step_hash: t.step_hash,
        checked: false,
        gen_time: null as string | null,
        tsa: null as string | null,
        serial: null as string | null,
      };
      attest.timestamps.push(row);
      const chain = this.wanted.get(t.seq);
      if (t.seq < from || t.seq > to || chain !== t.step_hash) {
        add(
          'TIMESTAMP_MISMATCH',
          t.seq < from || t.seq > to
            ? `the token is over seq ${t.seq}, outside this receipt's steps ${from}..${to}`
            : `the token is over step_hash ${t.step_hash} at seq ${t.seq}, but the chain's step ${t.seq} is ${chain ?? 'unverified'}`,
          at,
        );
        continue;
      }
      if (tsa.length === 0) continue;
      // The ASN.1 reader loads only when a token is to be checked: a receipt verified without a TSA pin never reads it.
      const { checkToken } = await import('./tsp.js');
      const subject = timestampSubject(g, t.seq, t.step_hash);
      const token = base64Decode(t.token)!;
      let first: Awaited<ReturnType<typeof import('./tsp.js').checkToken>> | null = null;
      for (const cert of tsa) {
        const c = await checkToken(token, subject, cert);
        if (c.ok) {
          first = c;
          break;
        }
        first ??= c;
      }
      if (first?.ok)
        Object.assign(row, {
          checked: true,
          gen_time: first.facts.gen_time,
          tsa: first.facts.tsa,
          serial: first.facts.serial,
        });
      else if (first) add(first.code, first.reason, at);
    }
  }

  private async checkCosignatures(
    report: ReceiptReport,
    cosigners: Cosigner[],
    attest: AttestReport,
    add: (c: AttestProblemCode, m: string, p: string) => void,
  ): Promise<void> {
    // Ed25519 loads only when there are signatures to check against pinned keys.
    const { cosignatureHolds } =
      this.envelopes.length > 0 && cosigners.length > 0 ? await import('./sign.js') : { cosignatureHolds: () => false };
    const g = genesisHash(report.manifest!.genesis);
    const { from, to, prev_hash } = report.range!;
    const pinned = new Map(cosigners.map((c) => [keyIdOf(c.key), c]));
    const signed = new Set<string>();
    for (const [i, e] of this.envelopes.entries()) {
      const at = `/${COSIGNATURES_MEMBER}/${i}`;
      const s = (parseStatement(e) as { statement: CosignStatement }).statement;
      // Bound to this receipt: the same journal, an end inside the range with the chain's hash there, and
      // a start whose prev_hash the receipt can check (the range's own, or a step's inside it).
      const before = s.from === from ? prev_hash : s.from > from ? this.wanted.get(s.from - 1) : undefined;
      const why =
        s.genesis_hash !== g
          ? `the statement is of another journal (genesis ${s.genesis_hash})`
          : s.to < from || s.to > to
            ? `the statement covers steps ${s.from}..${s.to}, which end outside this receipt's steps ${from}..${to}`
            : this.wanted.get(s.to) !== s.step_hash
              ? `the statement names step_hash ${s.step_hash} at seq ${s.to}, but the chain's step ${s.to} is ${this.wanted.get(s.to) ?? 'unverified'}`
              : before !== undefined && before !== s.prev_hash
                ? `the statement names prev_hash ${s.prev_hash} before seq ${s.from}, but the chain has ${before ?? 'an unverified step'}`
                : null;
      if (why) {
        add('COSIGNATURE_MISMATCH', why, at);
        continue;
      }
      for (const sig of e.signatures) {
        const p = pinned.get(sig.keyid);
        const holds = p !== undefined && cosignatureHolds(e, sig.sig, p.key);
        attest.cosignatures.push({
          keyid: sig.keyid,
          name: p?.name ?? null,
          from: s.from,
          to: s.to,
          pinned: p !== undefined,
          verified: holds,
        });
        if (p !== undefined && !holds)
          add(
            'COSIGNATURE_INVALID',
            `the signature of pinned co-signer ${p.name ?? sig.keyid} does not verify over the statement for steps ${s.from}..${s.to}: it was altered, or another key made it`,
            `${at}/signatures`,
          );
        else if (holds) signed.add(sig.keyid);
      }
    }
    if (cosigners.length === 0) return;
    const t = this.options.threshold ?? cosigners.length;
    if (!Number.isInteger(t) || t < 1 || t > pinned.size) {
      add(
        'COSIGN_QUORUM',
        `the threshold ${String(t)} is not a whole number from 1 to the ${pinned.size} distinct co-signers pinned`,
        `/${COSIGNATURES_MEMBER}`,
      );
      return;
    }
    attest.threshold = t;
    attest.cosigned_by = [...pinned.keys()].filter((k) => signed.has(k));
    if (signed.size < t) {
      add(
        'COSIGN_QUORUM',
        `${signed.size} of the ${pinned.size} pinned co-signers signed a statement over this receipt's steps; the policy needs ${t}`,
        `/${COSIGNATURES_MEMBER}`,
      );
    }
  }
}

/**
 * verifyReceipt with these checks added to any other hooks the caller passes: extensions merged, both
 * observers called, the caller's finish first, then these. Never throws.
 */
export async function verifyAttestedReceipt<R extends ReceiptReport = ReceiptReport>(
  input: ByteInput,
  attest: AttestOptions = {},
  options: VerifyReceiptOptions<R> = {},
): Promise<AttestedReport<R>> {
  const hooks = receiptAttestHooks(attest);
  const base = options ?? {};
  const report = await verifyReceipt<R>(input, {
    ...base,
    extensions: { ...(base.extensions ?? {}), ...hooks.extensions },
    onLine: (line) => {
      base.onLine?.(line);
      hooks.onLine(line);
    },
  });
  return hooks.finish(report);
}
