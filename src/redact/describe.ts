/**
 * What a published receipt proves and does not prove (REDACTION.md §7.1–§7.2, §12.7), as the sentences of
 * its report — among them, which text it shows without binding it to the head (§12.5 step 6). Pure.
 */
import type { PublishedReport } from './verify.js';
import { printablePointer } from './unbound.js';
import { COMMITTED_PUBLICATION_FORMAT_V3 } from './publication.js';

/** What a published receipt proves and does not prove, added to the receipt's own sentences (REDACTION.md §7). */
export function describePublication(r: PublishedReport): void {
  if (!r.ok) {
    r.proves = [];
    r.does_not_prove = [
      'Anything: the published receipt failed verification, so none of its contents can be relied on.',
    ];
    return;
  }
  if (r.publication?.format === COMMITTED_PUBLICATION_FORMAT_V3) {
    describeV3(r);
    return;
  }
  if (r.publication) {
    describeCommitted(r);
    return;
  }
  const a = r.anchor;
  if (!a) return;
  const k = a.redacted_from;
  const signed = r.signed_by ? 'signed ' : '';
  const steps = (from: number, to: number): string => (from === to ? `step ${from}` : `steps ${from}–${to}`);
  r.proves = [
    ...r.proves,
    `Every redaction marker in the chain is declared in the manifest, and every declared redaction (${r.redactions}) has its marker: nothing was dropped or left in silently.`,
    ...(k === a.length
      ? ['Nothing was redacted.']
      : k > 0
        ? [`${k === 1 ? 'Step 0 holds' : `Steps 0–${k - 1} hold`} no redaction; the first redaction is in step ${k}.`]
        : []),
    ...(r.signed_by
      ? [
          `The signer of the manifest vouches for the anchor: an original run of ${a.length} steps from genesis ${a.genesis_hash}, redacted by policy ${a.policy_digest}, ${k === a.length ? 'with nothing redacted' : `with salted commitments to the original hashes of ${steps(k, a.length - 1)}`}.`,
        ]
      : []),
  ];
  r.does_not_prove = [
    ...r.does_not_prove,
    ...(k < a.length
      ? [
          `The original head, or the original hashes of ${steps(k, a.length - 1)}: the anchor holds them only as salted commitments, so that no reader can test guesses of the redacted values against them. The publisher can open the head's commitment (stepchain disclose --hash-only) for someone who already holds the original head.`,
        ]
      : []),
    `That the original run is the one the anchor describes (${k > 0 ? `${steps(0, k - 1)} as published, ` : ''}${k < a.length ? 'the hashes its commitments hide' : 'this head'}): the anchor is the publisher's ${signed}claim. Compare it with a head pinned out of band, or with the original journal (compareAnchor in the library).`,
    'That the redacted steps carry the original content outside the markers: the published chain is a new chain from the first redaction on; only a disclosure (or the original journal) can show what a marker hides.',
    'That the policy removed every secret: it proves only that what was redacted is declared.',
    ...(r.unbound_count > 0
      ? [
          `That the text shown in ${plural(r.unbound_count, 'redaction marker')} (its "text": ${unboundPlaces(r)}) is the original text around the redacted value: it is the publisher's rendering, not bound to any head; only a marker's commitment binds the value, and a disclosure checks the text against it.`,
        ]
      : []),
  ];
}

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The first unbound places, for a sentence: "seq 1 /tool_call, seq 2 /input/note and 3 more". */
function unboundPlaces(r: PublishedReport): string {
  const shown = r.unbound.slice(0, 5).map((u) => `seq ${u.seq} ${printablePointer(u.path)}`);
  const more = r.unbound_count - shown.length;
  return more > 0
    ? `${shown.join(', ')} and ${more} more`
    : shown.length > 1
      ? `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]!}`
      : shown[0]!;
}

/** What a v2 publication proves (REDACTION.md §12.7). */
function describeCommitted(r: PublishedReport): void {
  r.proves = [
    ...r.proves,
    r.unbound_count === 0
      ? `The published chain is the original chain: every step hash, the head ${r.head ?? ''} among them, is the one the journal holds, recomputed here from the disclosed values and the digests of the withheld ones.`
      : `The published chain has the original step hashes: every step hash, the head ${r.head ?? ''} among them, is the one the journal holds, recomputed here from the disclosed values and the digests of the withheld slots and of the redacted views (a view's digest is bound, its text is not).`,
    // With views, no sentence may read as if every value shown were bound (issue 32): the views are named apart.
    r.unbound_count === 0
      ? 'Every disclosed value is the original value at its place: each is bound to its step hash by its slot salt.'
      : `Every slot published with its salt holds the original value at its place, bound to its step hash by that salt. This does not cover the ${plural(r.unbound_count, 'redacted view')}, whose text is not bound to the head.`,
    `Every redaction marker is declared in the manifest, and every declared redaction (${r.redactions}) has its marker: nothing was withheld or left in silently.`,
    'Nothing about a withheld value can be tested by guessing: its digest is salted with 128 secret bits that never leave the journal.',
  ];
  r.does_not_prove = [
    ...r.does_not_prove,
    'What a withheld slot holds, its type or its size, or whether a withheld meta was present at all; an opening from the journal holder reveals one slot.',
    r.unbound_count === 0
      ? 'That the text outside the markers of a redacted view (a slot with its digest in "digests") is the original: only an opening of the slot binds it.'
      : `That the text of the ${plural(r.unbound_count, 'redacted view')} (${unboundPlaces(r)}) is the original: it is NOT bound to the head — anyone holding this receipt can rewrite it and it still verifies. Only the slot's digest is bound; an opening of the slot from the journal binds its text.`,
    'That the policy removed every secret: it proves only that what was redacted is declared.',
  ];
}

/** What a v3 publication proves (REDACTION.md §13.8): everything it shows is bound; what it withholds is shown as withheld. */
function describeV3(r: PublishedReport): void {
  const unsalted = r.warnings.filter((w) => w.code === 'DIGEST_UNSALTED').length;
  r.proves = [
    ...r.proves,
    `The published chain is the original chain: every step hash, the head ${r.head ?? ''} among them, is the one the journal holds, recomputed here from the values shown and the digests of the withheld units.`,
    "Every value shown is the original value at its place: each member, element, string chunk and member name shown was recomputed here from its salt and is bound to its record's root, and so to the head. Nothing is shown that the head does not bind.",
    `Every withheld unit stands as a withheld marker where the original unit stood, and each is declared in the manifest (${r.redactions}): nothing was withheld or left in silently.`,
    ...(unsalted === 0
      ? [
          'Nothing about a withheld value can be tested by guessing: its digest is salted with 128 secret bits derived from a record seed that never leaves the journal.',
        ]
      : [
          "A withheld unit's own digest is salted with 128 secret bits derived from a record seed that never leaves the journal: that digest cannot be tested by guessing.",
        ]),
  ];
  // Erased values (REDACTION.md §13.12): a third state, neither shown nor withheld by the publisher.
  const erased = r.warnings.filter((w) => w.code === 'VALUE_ERASED').length;
  if (erased > 0) {
    r.proves.push(
      `${erased === 1 ? '1 value was' : `${erased} values were`} erased from the journal before it was published (each is reported VALUE_ERASED): shown as erased where it stood, neither a value nor withheld by the publisher, and each matches an erasure record of this chain (which record, when, why and by whom). Its digest stays in the chain; the value and its salt no longer exist anywhere.`,
    );
  }
  r.does_not_prove = [
    ...r.does_not_prove,
    "What a withheld unit holds, its type or its length; a withheld member's name and each declaration's rule are the publisher's word (its place, the object, is bound).",
    'That the policy removed every secret: it proves only that what was withheld is declared.',
    ...(unsalted === 0
      ? []
      : [
          `That the withheld or erased arguments of a presented call cannot be guessed: ${unsalted === 1 ? 'an approval record written before statement v2 shows' : `${unsalted} approval records written before statement v2 show`} an unsalted digest of a call not shown whole (DIGEST_UNSALTED), and candidates can be tried against it.`,
        ]),
  ];
}
