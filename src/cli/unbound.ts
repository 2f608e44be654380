/**
 * How the CLI shows text a published receipt does not bind to its head (spec/REDACTION.md §12.5 step 6):
 * the places the verifier's report lists (`unbound`, `unbound_count`), as lines for people. The report's
 * classification is the library's; this only renders it, for `verify` and `diff` alike.
 */
import { printablePointer } from '../redact/unbound.js';
import type { UnboundText } from '../verify.js';
import type { Output } from './output.js';

/** Places listed on a terminal; --json carries the report's list (up to 1000) and the count. */
const SHOWN = 20;

/** The unbound places of a report, or null when it lists none (an ordinary receipt, or a journal). */
export function unboundOf(report: unknown): { count: number; places: UnboundText[] } | null {
  const r = report as { unbound?: UnboundText[]; unbound_count?: number } | null;
  if (
    r === null ||
    typeof r !== 'object' ||
    !Array.isArray(r.unbound) ||
    typeof r.unbound_count !== 'number' ||
    r.unbound_count === 0
  )
    return null;
  return { count: r.unbound_count, places: r.unbound };
}

const WHY: Record<UnboundText['why'], string> = {
  view: 'redacted view: the text around its markers',
  'marker-text': 'the "text" of a redaction marker',
};

/** Lines saying which values are not bound to the head, with the first places; none when there are none. */
export function unboundLines(out: Output, report: unknown, subject = 'this receipt'): string[] {
  const u = unboundOf(report);
  if (u === null) return [];
  const lines = [
    `  ${out.style(['yellow', 'bold'], 'NOT BOUND')} ${subject} shows ${u.count} value${u.count === 1 ? '' : 's'} whose text is NOT bound to the head: anyone holding the receipt can rewrite ${u.count === 1 ? 'it' : 'them'} and it still verifies. Read ${u.count === 1 ? 'it' : 'them'} as the publisher's word, not as proven:`,
  ];
  for (const p of u.places.slice(0, SHOWN))
    lines.push(`      ${out.style('yellow', 'not bound')} seq ${p.seq} ${printablePointer(p.path)} (${WHY[p.why]})`);
  if (u.count > SHOWN)
    lines.push(
      `      … and ${u.count - SHOWN} more (--json lists ${u.places.length === u.count ? 'them all' : `the first ${u.places.length}`} in report.unbound)`,
    );
  return lines;
}
