/**
 * The page's sentence for one request of a receipt's approval records (spec/APPROVALS.md §6): the same words as
 * `stepchain verify` prints (src/cli/verbs/approve-lines.ts) — who decided, pinned or self-named, and whether the
 * call ran. The list is built with the view's element helper, given by the caller.
 */
import type { ReceiptReport } from '../verify.js';

type Approvals = ReceiptReport['approvals'];
type Make = (
  tag: 'h3' | 'ul' | 'li' | 'span',
  attrs: Record<string, string>,
  ...children: (Node | string)[]
) => HTMLElement;

/** The verdict's "Approvals" heading and one line per request (none when the receipt holds no approval record). */
export function approvalsList(approvals: Approvals, h: Make): HTMLElement[] {
  if (approvals === undefined || approvals.length === 0) return [];
  const proves = (a: NonNullable<Approvals>[number]): string =>
    a.status === 'granted' && a.approver?.pinned === true ? 'proves' : 'not';
  return [
    h('h3', {}, 'Approvals'),
    h(
      'ul',
      { class: 'statements', id: 'approvals' },
      ...approvals.map((a) =>
        h(
          'li',
          { class: proves(a) },
          h('span', { class: `tag ${proves(a)}` }, a.status === 'granted' ? 'approved' : a.status),
          approvalSentence(a),
        ),
      ),
    ),
  ];
}

/** One request of a receipt's approval records, as a sentence: the call, who decided (pinned or not), and whether it ran. */
function approvalSentence(a: NonNullable<ReceiptReport['approvals']>[number]): string {
  const who =
    a.approver === null
      ? ''
      : a.approver.pinned
        ? ` by ${a.approver.name === null ? `key ${a.approver.keyid}` : JSON.stringify(a.approver.name)} (pinned)`
        : ` by key ${a.approver.keyid}${a.approver.name === null ? ' (unpinned)' : ` calling itself ${JSON.stringify(a.approver.name)} (unpinned, self-named)`}`;
  // Where the chain holds what could not be checked (APPROVAL_UNCHECKED), neither "executed" nor "never executed" is proven.
  const ran =
    (a as { unchecked?: true }).unchecked === true
      ? a.effect_seq === null
        ? ', no effect found, not proven (APPROVAL_UNCHECKED: some records could not be checked)'
        : `, an effect begun at seq ${a.effect_seq}, not checked against the call (APPROVAL_UNCHECKED)`
      : a.effect_seq === null
        ? a.status === 'granted'
          ? ', not executed'
          : ', never executed'
        : `, executed at seq ${a.effect_seq}`;
  return `${a.tool === null ? 'a call' : JSON.stringify(a.tool)} (request ${JSON.stringify(a.request)}, seq ${a.request_seq})${who}${a.decision_seq === null ? '' : ` at seq ${a.decision_seq}`}${ran}`;
}
