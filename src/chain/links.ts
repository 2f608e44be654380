/**
 * The sequential part of the chain verifier (spec/FORMAT.md §6.3 steps 6–10 and the head): duplicates,
 * sequence, segment names, links. It sees each line's facts (line.ts) in chain order and keeps O(1) state:
 * the last readable seq, the unreadable lines since, and the last step's hash.
 */
import type { LineFacts, LineProblem } from './line.js';

export interface LinkStart {
  seq: number;
  /** The genesis hash or a partial range's starting prev_hash; null when unknown (an invalid genesis). */
  hash: string | null;
  /** Whether the chain starts at a genesis (a first link that breaks is then GENESIS_MISMATCH). */
  fromGenesis: boolean;
}

/** The outcome of most links: no problem, not a repeat. */
const CLEAN = Object.freeze({ problems: Object.freeze([]), duplicate: false });

export class LinkChecker {
  /** seq of the last line whose seq was readable; start.seq - 1 before any. */
  private lastSeq: number;
  /** Complete lines since then whose seq could not be read: each may have been a step or an intruder. */
  private slack = 0;
  /** stored step_hash of the previous complete line; null when it is unknown. */
  private lastHash: string | null;
  private lastLineHash: string | null = null;
  private lastLineSeq: number | null = null;

  constructor(private readonly start: LinkStart) {
    this.lastSeq = start.seq - 1;
    this.lastHash = start.hash;
  }

  /** A complete line whose members cannot be read (FORMAT §6.3 steps 2–3): the next link is not checked. */
  unreadable(): void {
    this.slack++;
    this.lastHash = null;
    this.lastLineHash = null;
    this.lastLineSeq = null;
  }

  /**
   * Checks a readable line against the lines before it and records it. `first` says whether it is the
   * chain's first complete line; `declaredFirstSeq` is the seq its segment's name declares when it is the
   * segment's first line (FORMAT §6.3 step 8). Returns its problems, and whether it repeats the previous
   * line (DUPLICATE_STEP): such a line is skipped, and the next line links to the original.
   */
  link(
    facts: LineFacts,
    first: boolean,
    declaredFirstSeq: number | null,
  ): { problems: readonly LineProblem[]; duplicate: boolean } {
    const { seq, prevHash, stepHash } = facts;
    let problems: LineProblem[] | null = null;
    const report = (code: LineProblem['code'], message: string, field: string): void =>
      void (problems ??= []).push({ code, message, location: seq === null ? { field } : { seq, field } });
    const expectedSeq = this.lastSeq + 1;
    const latestSeq = expectedSeq + this.slack;
    if (
      seq !== null &&
      seq < expectedSeq &&
      stepHash !== null &&
      stepHash === this.lastLineHash &&
      seq === this.lastLineSeq
    ) {
      report('DUPLICATE_STEP', `step ${seq} appears again (the same step_hash as the previous line)`, 'seq');
      return { problems: problems!, duplicate: true };
    }
    if (seq !== null && seq > latestSeq) {
      const expected = latestSeq === expectedSeq ? `${expectedSeq}` : `${expectedSeq}–${latestSeq}`;
      report(
        'SEQ_GAP',
        latestSeq === seq - 1
          ? `expected seq ${expected}, found ${seq}: step ${seq - 1} is missing`
          : `expected seq ${expected}, found ${seq}: steps ${latestSeq}–${seq - 1} are missing`,
        'seq',
      );
    } else if (seq !== null && seq < expectedSeq) {
      report(
        'SEQ_OUT_OF_ORDER',
        `expected seq ${expectedSeq}, found ${seq}: steps are out of order or repeated`,
        'seq',
      );
    }
    if (declaredFirstSeq !== null && seq !== null && seq !== declaredFirstSeq) {
      report('BUCKET_MISNAMED', `bucket is named for seq ${declaredFirstSeq} but its first step is seq ${seq}`, 'seq');
    }
    if (prevHash !== null && this.lastHash !== null && prevHash !== this.lastHash) {
      if (first && this.start.fromGenesis) {
        report(
          'GENESIS_MISMATCH',
          `the first step's prev_hash ${prevHash} is not the genesis hash ${this.lastHash}: the chain belongs to another journal or its genesis was altered`,
          'prev_hash',
        );
      } else if (first) {
        report(
          'LINK_BROKEN',
          `the first step's prev_hash ${prevHash} is not the range's starting hash ${this.lastHash}`,
          'prev_hash',
        );
      } else {
        report(
          'LINK_BROKEN',
          `prev_hash ${prevHash} is not the previous step's step_hash ${this.lastHash}: a step before this one was removed, inserted, reordered or altered`,
          'prev_hash',
        );
      }
    }
    if (seq === null) this.slack++;
    else {
      this.lastSeq = seq;
      this.slack = 0;
    }
    this.lastHash = stepHash;
    this.lastLineHash = stepHash;
    this.lastLineSeq = seq;
    return problems === null ? CLEAN : { problems, duplicate: false };
  }

  /** The head: the last complete line's step_hash and seq, each null when unknown. */
  head(): { hash: string | null; seq: number | null } {
    return { hash: this.lastLineHash, seq: this.lastLineHash === null ? null : this.lastLineSeq };
  }
}
