/**
 * Verifying a published receipt (spec/REDACTION.md §7): the ordinary receipt verifier, extended through
 * its hooks with the `anchor` and `redactions` manifest members (a shape violation is MANIFEST_INVALID),
 * and checks in both directions — every redaction marker in the chain is declared (REDACTION_UNDECLARED),
 * every declaration has its marker (REDACTION_MISSING) — plus the anchor's consistency with the rest of
 * the manifest (ANCHOR_INVALID). Problems come in §7's order: the receipt's, then REDACTION_UNDECLARED in
 * archive order, then ANCHOR_INVALID, then REDACTION_MISSING in declaration order.
 *
 * Pure — no Node-only imports — so it runs in a browser; never throws on the receipt's bytes.
 */
import { scanCanonical } from '../canonical/scan.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { REDACTABLE_MEMBERS, formatOf, genesisHash } from '../record/formats.js';
import { REDACTED_MARKER, isRedactedBody } from '../record/markers.js';
import { isObject } from '../canonical/json.js';
import { ProblemList } from '../chain/problems.js';
import type { ProblemLocation } from '../chain/report.js';
import type { VerifiedLine } from '../chain/verifier.js';
import { MANIFEST_NAME, type ReceiptManifest } from '../receipt/manifest.js';
import type { ReceiptReading } from '../receipt/problems.js';
import {
  verifyReceipt,
  type ByteInput,
  type ReceiptProblemCode,
  type ReceiptReport,
  type VerifyReceiptOptions,
} from '../receipt/verify.js';
import { anchorDefect, redactionsDefect, type AnchorBlock, type Declaration } from './anchor.js';
import { COMMITTED_PUBLICATION_FORMAT_V3, publicationDefect, type PublicationBlock } from './publication.js';
import { V3PublicationChecks, isV3PublicLine, v3DeclarationsDefect } from './v3-verify.js';
import type { PublicPartFile } from '../record/v3/public-part.js';
import { viewSlots } from './unbound.js';
import { describePublication } from './describe.js';

export interface MarkerValue {
  commitment: string;
  rule: string;
  text?: string;
}

/** The problems of a published receipt (spec/REDACTION.md §6): a receipt's, and its declarations' and anchor's. */
export type PublishedProblemCode =
  | ReceiptProblemCode
  | 'REDACTION_UNDECLARED'
  | 'REDACTION_MISSING'
  | 'ANCHOR_INVALID'
  | 'SALT_PUBLISHED'
  | 'VIEW_INVALID'
  | 'ROOT_MISMATCH'
  | 'SECRETS_INVALID'
  | 'SECRET_PUBLISHED'
  | 'MARKER_INVALID';

/**
 * Text a published receipt shows that nothing binds to the head (REDACTION.md §7.2, §12.7): a redacted view
 * of a v2 publication (`why: "view"`, the whole slot: the text around its markers is the publisher's word, only
 * the slot's digest is bound) or the `text` of a redaction marker (`why: "marker-text"`: informative, only the
 * marker's commitment binds the value). Every surface shows such text as not bound to the head.
 */
export interface UnboundText {
  seq: number;
  /** The top-level member (the slot) holding it. */
  field: string;
  /** JSON Pointer to the view (`/<slot>`) or to the marker whose `text` it is. */
  path: string;
  why: 'view' | 'marker-text';
}

export interface PublishedReport extends ReceiptReport<PublishedProblemCode> {
  /** The anchor block, once the manifest was read and it had a valid one (a re-anchored publication, §6). */
  anchor: AnchorBlock | null;
  /** The publication block of a v2 receipt published against its original head (§12), else null. */
  publication: PublicationBlock | null;
  /** Number of declared redactions. */
  redactions: number;
  /** The marker at `locate` (when asked for and found). */
  located: MarkerValue | null;
  /** The published step's stored line at `locate.seq` (when asked for with `step: true`). */
  located_line: string | null;
  /** Where the receipt shows text not bound to the head, in archive order (at most MAX_UNBOUND_LISTED; see unbound_count). */
  unbound: UnboundText[];
  /** How many such places there are in all. */
  unbound_count: number;
}

/**
 * The receipt verifier's hooks this module uses: extension members, a view of every verified chain line
 * and blob (spec/RECEIPT.md §4.3; the observers are additive options of verifyReceipt), and `finish`,
 * which adds the declaration and anchor problems — so whoever passes these options gets the whole
 * verification, publication checks included (issue 14 item 6: `diff` passed the observers without it).
 */
export type ReceiptHooks = Required<
  Pick<
    VerifyReceiptOptions<ReceiptReport<ReceiptProblemCode> | PublishedReport>,
    'extensions' | 'onLine' | 'onBlob' | 'onPublicPart' | 'finish'
  >
>;

export interface VerifyPublishedOptions extends Omit<VerifyReceiptOptions, keyof ReceiptHooks> {
  /** Also return the marker standing at this step and path (and with `step: true`, the step's whole line). */
  locate?: Locate;
}

export interface Locate {
  seq: number;
  path?: string;
  step?: boolean;
}

const key = (seq: number, path: string): string => `${seq} ${path}`;
/** Declaration and anchor problems kept at most (beyond it the report says problems_truncated). */
const MAX_EXTRA_PROBLEMS = 1000;
/** Unbound places listed at most (unbound_count counts them all). */
export const MAX_UNBOUND_LISTED = 1000;

/**
 * The receipt-verifier options that teach it published receipts, with the state they collect. Exposed so
 * callers that drive `verifyReceipt` themselves (the CLI's `verify` and `diff`, the page) accept published
 * receipts too: `options.finish` is `finishIfPublished`, so a published receipt gets its declaration and
 * anchor checks and an ordinary one is unchanged. One set of hooks serves one verification.
 */
export interface PublishedReceiptHooks {
  options: ReceiptHooks;
  /**
   * `reading` is what verifyReceipt hands its `finish`: whether a fatal problem stopped the reading. Without
   * it, any problem of a code that can stop reading counts as having stopped it.
   */
  finish(report: ReceiptReport<ReceiptProblemCode> | PublishedReport, reading?: ReceiptReading): PublishedReport;
  /** `finish` when the manifest has an anchor or declarations; the receipt report unchanged otherwise. */
  finishIfPublished(
    report: ReceiptReport<ReceiptProblemCode> | PublishedReport,
    reading?: ReceiptReading,
  ): ReceiptReport<ReceiptProblemCode> | PublishedReport;
}

export function publishedReceiptHooks(locate?: Locate): PublishedReceiptHooks {
  const checks = new PublicationChecks(locate);
  const finish = (
    receipt: ReceiptReport<ReceiptProblemCode> | PublishedReport,
    reading?: ReceiptReading,
  ): PublishedReport => checks.finish(receipt, reading);
  const finishIfPublished = (
    receipt: ReceiptReport<ReceiptProblemCode> | PublishedReport,
    reading?: ReceiptReading,
  ): ReceiptReport<ReceiptProblemCode> | PublishedReport => {
    const m = receipt.manifest;
    // A chain holding redaction markers or redacted views is a publication whatever its manifest says:
    // journals refuse reserved member names and never write digests, so only a publisher writes them.
    return m && ('anchor' in m || 'redactions' in m || 'publication' in m || checks.publishedContent)
      ? finish(receipt, reading)
      : receipt;
  };
  const options: ReceiptHooks = {
    extensions: {
      anchor: (v) => checks.anchorMember(v),
      redactions: (v) => checks.redactionsMember(v),
      publication: (v) => checks.publicationMember(v),
    },
    onLine: (line) => checks.line(line),
    onBlob: (digest, text) => checks.blob(digest, text),
    onPublicPart: (address, file) => checks.publicPart(address, file),
    finish: finishIfPublished,
  };
  return { options, finish, finishIfPublished };
}

/** What the publication checks collect while the receipt is read (REDACTION.md §7), and the checks at the end. */
class PublicationChecks {
  private anchor: AnchorBlock | null = null;
  private publication: PublicationBlock | null = null;
  private declared: Map<string, { d: Declaration; seen: boolean }> | null = null;
  private readonly extra = new ProblemList<PublishedProblemCode>(MAX_EXTRA_PROBLEMS);
  private located: MarkerValue | null = null;
  private locatedLine: string | null = null;
  private readonly unbound: UnboundText[] = [];
  private unboundCount = 0;
  /** A chain line held a valid redaction marker or a redacted view (a publisher's output, never a journal's). */
  publishedContent = false;
  /** Reports already finished: finishing one again returns it unchanged (no doubled problems). */
  private readonly finished = new WeakSet<object>();
  /** The deep tier of every v3 public-form line and its declarations (REDACTION.md §13.6). */
  private readonly v3 = new V3PublicationChecks();

  constructor(private readonly locate: Locate | undefined) {}

  /** The `anchor` manifest member (§6.2): a shape violation is MANIFEST_INVALID. */
  anchorMember(v: unknown): string | null {
    const why = anchorDefect(v);
    if (!why) this.anchor = v as AnchorBlock;
    return why;
  }

  /** The `publication` manifest member (§12.4). */
  publicationMember(v: unknown): string | null {
    const why = publicationDefect(v);
    if (!why) this.publication = v as PublicationBlock;
    return why;
  }

  /** The `redactions` manifest member (§6.3). */
  redactionsMember(v: unknown): string | null {
    if (this.publication?.format === COMMITTED_PUBLICATION_FORMAT_V3) {
      const defect = v3DeclarationsDefect(v);
      if (!defect) this.declared = this.v3.declare(v as Declaration[]);
      return defect;
    }
    const why = redactionsDefect(v);
    if (!why) this.declared = new Map((v as Declaration[]).map((d) => [key(d.seq, d.path), { d, seen: false }]));
    return why;
  }

  /** A published v3 receipt's public part file whose address checked: its markers against the declarations (§13.10). */
  publicPart(address: string, file: PublicPartFile): void {
    this.publishedContent = true;
    this.v3.part(address, file, this.extra);
  }

  /** Every redaction marker in a verified line must be declared, with the rule it names (§7 step 2). */
  line(line: VerifiedLine): void {
    if (line.seq === null) return;
    if (this.locate?.step && line.seq === this.locate.seq) this.locatedLine = line.text;
    // A v3 public-form record is checked deep whatever the manifest says: its fast tier takes `bind` as
    // given, so without this check nothing would bind what it shows (a publication stripped of its members).
    if (isV3PublicLine(line.text) && this.v3.line(line, this.extra)) {
      this.publishedContent = true;
      return;
    }
    if (this.publication) this.publicForm(line);
    const views = this.views(line);
    const marked = new Set<string>();
    for (const m of line.markers) {
      if (m.names.length !== 1 || m.names[0] !== REDACTED_MARKER) continue;
      const value = markerValue(line.text.slice(m.start, m.end), m.path);
      if (value === null) continue; // an invalid marker: the chain verifier reports MARKER_INVALID
      this.publishedContent = true;
      if (line.seq === this.locate?.seq && m.path === this.locate.path) this.located = value;
      const loc: ProblemLocation = {
        ...(line.file ? { file: line.file } : {}),
        line: line.line,
        seq: line.seq,
        path: m.path,
      };
      const slot = m.path.split('/')[1]!;
      // A view's value is never a whole marker (viewSlots leaves those out), so a marker in its slot is inside it.
      const inView = views?.has(slot);
      if (inView) marked.add(slot);
      else if (value.text !== undefined) {
        if (this.publication && m.path === `/${slot}`) {
          this.extra.add(
            'VIEW_INVALID',
            `the withheld ${slot} of seq ${line.seq} carries text beside its digest; a withheld slot's marker is exactly {"commitment","rule"}, and no digest binds that text`,
            { ...loc, field: slot },
          );
        }
        this.addUnbound({ seq: line.seq, field: slot, path: m.path, why: 'marker-text' });
      }
      const entry = this.declared?.get(key(line.seq, m.path));
      if (!entry) {
        this.extra.add(
          'REDACTION_UNDECLARED',
          `a redaction marker (rule ${JSON.stringify(value.rule)}) stands at seq ${line.seq}, ${m.path}, but the manifest's redactions list does not declare it${inView ? `; it is the marker of the redacted view ${slot}, whose text nothing binds to the head` : ''}`,
          inView ? { ...loc, field: slot } : loc,
        );
      } else {
        entry.seen = true;
        if (entry.d.rule !== value.rule)
          this.extra.add(
            'REDACTION_UNDECLARED',
            `the marker at seq ${line.seq}, ${m.path} names rule ${JSON.stringify(value.rule)}; the declaration names ${JSON.stringify(entry.d.rule)}`,
            loc,
          );
      }
    }
    if (views === null) return;
    for (const slot of views) {
      this.addUnbound({ seq: line.seq, field: slot, path: `/${slot}`, why: 'view' });
      if (!marked.has(slot)) {
        this.extra.add(
          'VIEW_INVALID',
          `${slot} of seq ${line.seq} is a redacted view (its digest in "digests") with no redaction marker inside: a view shows a value with markers in it, and nothing binds its text to the head`,
          {
            ...(line.file ? { file: line.file } : {}),
            line: line.line,
            seq: line.seq,
            field: slot,
            path: `/${slot}`,
          },
        );
      }
    }
  }

  /**
   * The slots of a public-form line that are redacted views (a digest in `digests`, a value present), or null
   * when it has none. Cheap for every other line: canonical JSON sorts members, and no record member sorts
   * before "digests", so a line holds a top-level `digests` only when it begins with it — unless its first
   * member sorts before (an unknown member, already UNKNOWN_FIELD), when the whole line is searched. (A
   * search of every line cost about 1.4 µs per 1.2 KB line, a tenth of verifying it; this test, about 20 ns.)
   */
  private views(line: VerifiedLine): Set<string> | null {
    const t = line.text;
    const first = t.charCodeAt(2); // the first member name's first character ('d' is 100)
    if (first > 100 || (!t.startsWith('{"digests":{') && !(t.slice(2, 9) < 'digests' && t.includes('"digests":{'))))
      return null;
    let record: unknown;
    try {
      record = JSON.parse(t);
    } catch {
      return null; // cannot happen for a line with a seq: it scanned as canonical JSON
    }
    if (isObject(record) && isObject(record.digests)) this.publishedContent = true;
    const slots = viewSlots(record);
    return slots.length > 0 ? new Set(slots) : null;
  }

  private addUnbound(u: UnboundText): void {
    this.unboundCount++;
    if (this.unbound.length < MAX_UNBOUND_LISTED) this.unbound.push(u);
  }

  /** A v2 publication carries public records only: a record salt in one would open every slot (§12.5 step 2). */
  private publicForm(line: VerifiedLine): void {
    // A top-level "salt" member is written `"salt":"` in canonical text; a line without that sequence anywhere
    // has none, and needs no second scan (one scan per line costs about a quarter of verifying it).
    if (!line.text.includes('"salt":"')) return;
    const members = scanCanonical(line.text, { maxDepth: MAX_RECORD_DEPTH }).members;
    if (members === null || members.has('salts') || !members.has('salt')) return;
    this.extra.add(
      'SALT_PUBLISHED',
      `step ${line.seq} is a stored record with its record salt, from which every slot salt follows: a publication carries public records only (salts per disclosed slot)`,
      {
        ...(line.file ? { file: line.file } : {}),
        line: line.line,
        seq: line.seq!,
        field: 'salt',
      },
    );
  }

  /** A published receipt keeps every marker in its chain lines, where it is declared: none in a blob. */
  blob(digest: string, text: string): void {
    const scan = scanCanonical(text, { maxDepth: MAX_RECORD_DEPTH, members: false });
    if (scan.markers.length > 0) {
      this.extra.add(
        'REDACTION_UNDECLARED',
        `blob ${digest} holds a marker at ${scan.markers[0]!.path || 'its root'}; a published receipt keeps every marker in the chain lines, where it is declared`,
        { file: `blobs/${digest.slice(7)}`, path: scan.markers[0]!.path },
      );
    }
  }

  /** §7 step 3, then the verdict and what the published receipt proves. */
  finish(receipt: ReceiptReport<ReceiptProblemCode> | PublishedReport, reading?: ReceiptReading): PublishedReport {
    if (this.finished.has(receipt)) return receipt as PublishedReport;
    const r: PublishedReport = {
      ...receipt,
      problems: receipt.problems.slice(),
      anchor: null,
      publication: null,
      redactions: 0,
      located: null,
      located_line: null,
      unbound: this.unbound.slice(),
      unbound_count: this.unboundCount,
    };
    const stopped = reading ? reading.stopped : receipt.problems.some((p) => STOPPING.has(p.code));
    // The manifest is only there when both members passed their shape checks (or are absent).
    if (receipt.manifest) this.checkManifest(receipt, receipt.manifest, r, stopped);
    for (const p of this.extra.items) r.problems.push(p); // bounded by MAX_EXTRA_PROBLEMS, but a spread would not be
    if (this.extra.truncated) r.problems_truncated = true;
    r.located = this.located;
    r.located_line = this.locatedLine;
    r.ok = receipt.ok && this.extra.items.length === 0 && !this.extra.truncated;
    describePublication(r);
    this.finished.add(r);
    return r;
  }

  /** The anchor against the rest of the manifest, and every declaration against a marker (§7 step 3, in this order). */
  private checkManifest(
    receipt: ReceiptReport<ReceiptProblemCode> | PublishedReport,
    m: ReceiptManifest,
    r: PublishedReport,
    stopped: boolean,
  ): void {
    const { anchor: a, declared: decl } = this;
    const add = (code: PublishedProblemCode, message: string, path: string): void =>
      this.extra.add(code, message, { file: MANIFEST_NAME, path });
    if (this.publication) {
      this.checkPublication(m, r, add);
      if (a)
        add(
          'ANCHOR_INVALID',
          'a receipt published against its original head (publication) has no anchor block',
          '/anchor',
        );
    } else if (a === null) {
      add(
        'ANCHOR_INVALID',
        this.publishedContent && decl === null
          ? 'the chain holds redaction markers or redacted views (digests), which only a publisher writes, but the manifest has no publication or anchor block: a publication stripped of its declarations'
          : 'the manifest has no anchor block: this is not a published (redacted) receipt',
        '/anchor',
      );
    }
    if (decl === null && !this.publication)
      add(
        'ANCHOR_INVALID',
        'the manifest has no redactions list: this is not a published (redacted) receipt',
        '/redactions',
      );
    if (a && !this.publication) {
      if (m.range.from !== 0)
        add(
          'ANCHOR_INVALID',
          `a published receipt covers the whole chain from seq 0; this one starts at ${m.range.from}`,
          '/range/from',
        );
      if (a.genesis_hash !== genesisHash(m.genesis))
        add(
          'ANCHOR_INVALID',
          `anchor.genesis_hash ${a.genesis_hash} is not the hash of the manifest's genesis (${genesisHash(m.genesis)})`,
          '/anchor/genesis_hash',
        );
      if (a.length !== m.head.seq + 1)
        add(
          'ANCHOR_INVALID',
          `anchor.length ${a.length} differs from the published chain's ${m.head.seq + 1} steps`,
          '/anchor/length',
        );
      if (decl) {
        const first = decl.size > 0 ? decl.values().next().value!.d.seq : a.length;
        if (a.redacted_from !== first)
          add(
            'ANCHOR_INVALID',
            `anchor.redacted_from is ${a.redacted_from}, but the first redaction is declared at ${decl.size > 0 ? `seq ${first}` : 'no seq (there is none), so it must be anchor.length'}`,
            '/anchor/redacted_from',
          );
      }
      r.anchor = a;
    }
    this.checkDeclarations(receipt, m, r, stopped);
  }

  /** A v2 publication (§12.5 step 3): declarations present, a journal format with a public form. */
  private checkPublication(
    m: ReceiptManifest,
    r: PublishedReport,
    add: (code: PublishedProblemCode, message: string, path: string) => void,
  ): void {
    if (this.declared === null)
      add(
        'ANCHOR_INVALID',
        'the manifest has no redactions list: this is not a published (redacted) receipt',
        '/redactions',
      );
    const scheme = formatOf(m.genesis).capabilities.publication;
    if (scheme === 'reanchored')
      add(
        'ANCHOR_INVALID',
        `a ${String(m.genesis.format)} chain hashes raw values, so it cannot be published against its own head; publish it re-anchored (anchor block)`,
        '/publication',
      );
    else if ((scheme === 'tree') !== (this.publication!.format === COMMITTED_PUBLICATION_FORMAT_V3)) {
      add(
        'ANCHOR_INVALID',
        `a ${String(m.genesis.format)} journal is not published as ${this.publication!.format}: stepchain/v3 journals are published as ${COMMITTED_PUBLICATION_FORMAT_V3}, stepchain/v2 journals as stepchain-redaction/v3`,
        '/publication/format',
      );
    }
    r.publication = this.publication;
  }

  /** Every declaration against a marker (§7 step 4), once every line was read. */
  private checkDeclarations(
    receipt: ReceiptReport<ReceiptProblemCode> | PublishedReport,
    m: ReceiptManifest,
    r: PublishedReport,
    stopped: boolean,
  ): void {
    const decl = this.declared;
    if (!decl) return;
    r.redactions = decl.size;
    // Declarations are checked against markers only when every line was read.
    const complete = receipt.steps === m.head.seq - m.range.from + 1 && !stopped;
    if (!complete) return;
    for (const { d, seen } of decl.values()) {
      if (seen) continue;
      const part = (d as { part?: string }).part;
      if (part !== undefined)
        this.extra.add(
          'REDACTION_MISSING',
          `the manifest declares a redaction in part ${part}, ${d.path} (rule ${JSON.stringify(d.rule)}), but no marker stands there (or the part's entry did not check)`,
          { file: MANIFEST_NAME, path: d.path },
        );
      else
        this.extra.add(
          'REDACTION_MISSING',
          `the manifest declares a redaction at seq ${d.seq}, ${d.path} (rule ${JSON.stringify(d.rule)}), but no marker stands there`,
          { file: MANIFEST_NAME, seq: d.seq, path: d.path },
        );
    }
  }
}

/**
 * The body of a valid redaction marker (FORMAT.md §3.5: exactly its shape, standing inside a content field or
 * meta), or null. Only a valid marker is declared or undeclared (§7 step 2): any other is the chain
 * verifier's MARKER_INVALID alone, and leaves the declaration at its place without its marker.
 */
function markerValue(text: string, path: string): MarkerValue | null {
  // The text is a marker object the canonical scan has just delimited, so it parses.
  const body = (JSON.parse(text) as Record<string, unknown>)[REDACTED_MARKER];
  return REDACTABLE_MEMBERS.has(path.split('/')[1]!) && isRedactedBody(body) ? body : null;
}

/**
 * Codes of the problems that can stop reading, so that unread markers are not "missing": the test for a
 * caller that finishes a report without the receipt verifier's `reading` (ENTRY_UNEXPECTED stops in RECEIPT
 * §7 step 6 but not in step 7, so this test is the cautious one).
 */
const STOPPING = new Set<string>([
  'ARCHIVE_INVALID',
  'ARCHIVE_UNSAFE',
  'ARCHIVE_LIMIT',
  'ENTRY_UNEXPECTED',
  'MANIFEST_INVALID',
  'SIGNATURE_INVALID',
]);

/** Verifies a published receipt: the receipt, the anchor, and the declarations in both directions. Never throws. */
export async function verifyPublishedReceipt(
  input: ByteInput,
  options: VerifyPublishedOptions = {},
): Promise<PublishedReport> {
  // Options may come from hostile callers (a verifier page's query string): anything not an object is none.
  const { locate, ...rest } =
    options !== null && typeof options === 'object' && !Array.isArray(options)
      ? options
      : ({} as VerifyPublishedOptions);
  const hooks = publishedReceiptHooks(locate);
  // finish, not finishIfPublished: here an ordinary receipt is not a published one (ANCHOR_INVALID).
  return (await verifyReceipt(input, { ...rest, ...hooks.options, finish: hooks.finish })) as PublishedReport; // eslint-disable-line @typescript-eslint/no-unnecessary-type-assertion -- the finish hook makes it a PublishedReport; the generic cannot say so
}
