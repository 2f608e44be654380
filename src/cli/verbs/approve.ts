/**
 * `stepchain approve`: an approver's decision on a tool call an agent presented (spec/APPROVALS.md), from
 * any language — the agent waits (Run.awaitApproval, or polling `approve --list --json`), a person signs
 * here with their key. Also lists the requests and where each stands. stepchain/v3 journals only.
 */
import { randomUUID } from 'node:crypto';
import { readKeyFile } from '../../receipt/node.js';
import type { ApprovalState } from '../../index.js';
import { Run } from '../../runtime.js';
import { canonicalJsonTrusted } from '../../canonical/jcs.js';
import { EXIT_OK, UsageError, type Verb } from '../cli.js';
import { withJournal } from '../location.js';
import type { Output } from '../output.js';
import { inline } from '../safe-text.js';

/** A request as the `--json` documents name it (snake_case, like the records). */
function requestJson(a: ApprovalState): Record<string, unknown> {
  return {
    request: a.id,
    seq: a.seq,
    step_hash: a.stepHash,
    tool: a.call.name,
    arguments: a.call.arguments,
    // What remains of a call some of whose values were erased (ERASURE.md §6.3): erased markers where they stood.
    ...(a.erased === true ? { erased: true } : {}),
    // Copied from the parent when the journal was forked (APPROVALS.md §4): decides nothing here, never pending.
    ...(a.forked === true ? { forked: true } : {}),
    // Only a request written before statement v2 carries the presented call's unsalted digest (APPROVALS.md §2.1).
    ...(a.digest === null ? {} : { digest: a.digest }),
    expires_at: a.expiresAt,
    status: a.status,
    decision_seq: a.decision_seq,
    decided_at: a.decided_at,
    approver: a.approver,
    reason: a.reason,
    effect: a.effect,
  };
}

function listRequests(out: Output, all: ApprovalState[], pendingOnly: boolean): number {
  // A request a fork copied from its parent is not for deciding here (APPROVAL_FORKED): not offered as pending.
  const shown = pendingOnly ? all.filter((a) => a.status === 'pending' && a.forked !== true) : all;
  if (out.json) {
    out.document('approve', { ok: true, requests: shown.map(requestJson) });
    return EXIT_OK;
  }
  if (shown.length === 0) out.say(pendingOnly ? 'no approval request is pending' : 'no approval requests in this run');
  for (const a of shown) {
    // Names from content are quoted and escaped; no key is pinned here, so a name is the approver's own claim.
    const who =
      a.approver === null
        ? ''
        : ` by key ${a.approver.keyid}${a.approver.name === null ? '' : ` calling itself ${inline(JSON.stringify(a.approver.name))} (unpinned, self-named)`}`;
    const expiry = a.expiresAt === null ? '' : ` expires ${a.expiresAt}`;
    const name = a.erased === true && a.call.name === '' ? '‹erased›' : inline(JSON.stringify(a.call.name));
    const erased =
      (a.erased === true ? '  (values erased: not compared with what runs)' : '') +
      (a.forked === true ? "  (the parent's, copied at the fork: authorises nothing here)" : '');
    out.print(`${inline(JSON.stringify(a.id))}  seq ${a.seq}  ${a.status}${who}${expiry}  ${name}${erased}`);
    // The whole call, never cut: what an approver signs binds exactly this (through the request's step hash).
    out.print(`    ${callText(a)}`);
  }
  return EXIT_OK;
}

/**
 * The call as presented, whole: the canonical JSON of {arguments, name} (APPROVALS.md §2), escaped for a terminal.
 * What was erased from it (ERASURE.md §6.3) stands as ‹erased› (a value, or the name) and ‹n erased› (an
 * object's erased members), as `stepchain log` shows it.
 */
function callText(a: ApprovalState): string {
  if (a.erased !== true) return inline(canonicalJsonTrusted({ arguments: a.call.arguments, name: a.call.name }));
  // A tag no content can hold by chance stands in for each erased place until the text is made. It begins with
  // the marker's own name, so the canonical text puts it where the marker sorts, whatever the random part.
  const tag = `${ERASED}:${randomUUID()}`;
  const mark = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(mark);
    if (v === null || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    const list = o[ERASED];
    if (list !== undefined && !Array.isArray(list) && Object.keys(o).length === 1) return `${tag}:value`;
    const kept = Object.keys(o)
      .filter((k) => k !== ERASED)
      .map((k) => [k, mark(o[k])] as const);
    return Object.fromEntries(Array.isArray(list) ? [...kept, [tag, list.length]] : kept);
  };
  const call = { arguments: mark(a.call.arguments), name: a.call.name === '' ? `${tag}:value` : a.call.name };
  return inline(canonicalJsonTrusted(call))
    .replaceAll(`"${tag}:value"`, '‹erased›')
    .replace(new RegExp(`"${tag.replaceAll('$', '\\$')}":(\\d+)`, 'g'), (_m, n: string) => `‹${n} erased›`);
}

/** The erased marker's member name (spec/ERASURE.md §2). */
const ERASED = '$stepchain:erased';

export const approveVerb: Verb = {
  name: 'approve',
  summary: 'approve or deny a tool call an agent presented, signed with your key; or list the requests',
  usage:
    '<journal> <request-id> --key FILE (--approve | --deny) [--reason TEXT] [--name NAME]  |  <journal> --list [--all]',
  description: [
    "Appends approval.granted or approval.denied for the request: the approver's Ed25519 key and its signature over a statement",
    'naming this journal, the request (its seq and step hash, which commits to exactly what was presented), the decision and its',
    "time (spec/APPROVALS.md §3). The agent's effect then names the request, and `verify` checks that what ran is what was",
    'approved, that nothing ran for a denied or expired request, and names the approver (pin them: verify --approver KEY).',
    '--list shows the requests still pending (--all: every request) with the call each presented. stepchain/v3 journals only',
    '(create them with `stepchain init --format v3`). A request already decided, expired or unknown is refused (exit 2).',
  ].join('\n'),
  options: {
    key: { type: 'string', arg: 'FILE', description: "the approver's Ed25519 private key (from keygen)" },
    approve: { type: 'boolean', description: 'grant the request' },
    deny: { type: 'boolean', description: 'deny the request' },
    reason: { type: 'string', arg: 'TEXT', description: 'why, for whoever audits the run (signed with the decision)' },
    name: {
      type: 'string',
      arg: 'NAME',
      description: 'the name you give yourself (shown unauthenticated until verify pins your key with --approver)',
    },
    list: { type: 'boolean', description: 'list the pending requests instead of deciding one' },
    all: { type: 'boolean', description: 'with --list: every request, decided or not' },
  },
  args: { min: 1, max: 2, names: ['journal', 'request-id'] },
  examples: [
    ['stepchain approve runs/today --list', 'the calls waiting for a decision'],
    ['stepchain approve runs/today 0f3c… --key alice.key --approve --reason "invoice checked"', 'grant one'],
  ],
  async run({ out, values, positionals }) {
    const path = positionals[0]!;
    if (values.list === true) {
      if (
        positionals.length > 1 ||
        values.approve !== undefined ||
        values.deny !== undefined ||
        values.key !== undefined
      )
        throw new UsageError('--list takes only the journal', 'approve');
      return withJournal(path, true, async (journal) =>
        listRequests(out, await Run.of(journal, { savedState: false }).approvals(), values.all !== true),
      );
    }
    if (values.all !== undefined) throw new UsageError('--all goes with --list', 'approve');
    const id = positionals[1];
    if (id === undefined)
      throw new UsageError('missing <request-id> (or --list to see the pending requests)', 'approve');
    if ((values.approve === true) === (values.deny === true))
      throw new UsageError('give exactly one of --approve or --deny', 'approve');
    if (values.key === undefined)
      throw new UsageError("--key FILE is required: the decision is signed with the approver's key", 'approve');
    const key = await readKeyFile(values.key as string);
    const decision = values.approve === true ? 'granted' : 'denied';
    return withJournal(path, false, async (journal) => {
      const run = Run.of(journal);
      const shown = (await run.approvals()).find((a) => a.id === id);
      const outcome = await run.decideApproval(id, decision, {
        key,
        ...(typeof values.name === 'string' ? { name: values.name } : {}),
        ...(typeof values.reason === 'string' ? { reason: values.reason } : {}),
      });
      // What the signature covers (the request's step hash commits to this call), said once it is decided: a request
      // refused (malformed, decided, expired) prints nothing of a call that was never decided.
      if (shown !== undefined && !out.json)
        out.say(
          `${decision === 'granted' ? 'granting' : 'denying'} request ${inline(JSON.stringify(id))} (seq ${shown.seq}, step hash ${shown.stepHash}), the call:\n    ${callText(shown)}`,
        );
      await run.saveState();
      if (out.json)
        out.document('approve', {
          ok: true,
          request: id,
          decision,
          seq: outcome.seq,
          approver: outcome.approver,
          reason: outcome.reason,
          ...(shown === undefined
            ? {}
            : { tool: shown.call.name, arguments: shown.call.arguments, request_hash: shown.stepHash }),
        });
      else
        out.say(
          `request ${inline(id)} ${decision} (seq ${outcome.seq}), signed by key ${outcome.approver?.keyid ?? '?'}`,
        );
      return EXIT_OK;
    });
  },
};
