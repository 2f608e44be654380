/**
 * The verdict's lines about approval records (spec/APPROVALS.md §6): who approved or denied what, and
 * which effect ran for it. Used by `verify` for journals and receipts; separate from approve.ts so that
 * verify loads neither the runtime nor the key reader.
 */
import type { ApprovalEntry, PinnedApprover } from '../../runtime.js';
import { UsageError } from '../cli.js';
import type { Output } from '../output.js';
import { inline } from '../safe-text.js';

/**
 * One line per request: its decision, by whom (pinned, or as the key names itself: unpinned, self-named), and
 * its effect. Names from content are quoted (JSON strings, escaped), so a tool or request named like a verdict
 * cannot pass for one; where the chain holds what could not be checked (APPROVAL_UNCHECKED), the line says the
 * effect is not proven either way.
 */
export function approvalLines(out: Output, approvals: readonly ApprovalEntry[] | undefined): string[] {
  if (approvals === undefined) return [];
  return approvals.map((a) => {
    const tool = a.tool === null ? 'a call' : quoted(a.tool);
    const who =
      a.approver === null
        ? ''
        : a.approver.pinned
          ? ` by ${a.approver.name === null ? `key ${a.approver.keyid}` : quoted(a.approver.name)} (pinned)`
          : ` by key ${a.approver.keyid}${a.approver.name === null ? '' : ` calling itself ${quoted(a.approver.name)} (unpinned, self-named)`}${a.approver.name === null ? ' (unpinned)' : ''}`;
    const effect =
      a.unchecked === true
        ? a.effect_seq === null
          ? ', no effect found, not proven (APPROVAL_UNCHECKED: some records could not be checked)'
          : `, an effect begun at seq ${a.effect_seq}, not checked against the call (APPROVAL_UNCHECKED)`
        : a.effect_seq === null
          ? a.status === 'granted'
            ? ', not executed'
            : ', never executed'
          : `, executed at seq ${a.effect_seq}`;
    const word = a.status === 'granted' ? 'approved' : a.status === 'denied' ? 'denied' : a.status;
    const style =
      a.unchecked === true
        ? 'yellow'
        : a.status === 'granted' && a.approver?.pinned === true
          ? 'green'
          : a.status === 'denied'
            ? 'red'
            : 'yellow';
    return `  ${out.style(style, word.padEnd(8))} ${tool} (request ${quoted(a.request)}, seq ${a.request_seq})${who}${a.decision_seq === null ? '' : ` at seq ${a.decision_seq}`}${effect}`;
  });
}

/** A name from content, as a JSON string with every unsafe character escaped (src/cli/safe-text.ts). */
function quoted(name: string): string {
  return inline(JSON.stringify(name));
}

/** The --approver public key files, each read and checked (unusable: exit 2); the file name is the verdict's name. */
export async function approverPins(files: readonly string[]): Promise<PinnedApprover[]> {
  if (files.length === 0) return [];
  const [{ readPublicKeyFile }, { keyIdOf }, { basename }] = await Promise.all([
    import('../../receipt/node.js'),
    import('../../receipt/keys.js'),
    import('node:path'),
  ]);
  const pins: PinnedApprover[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    const key = await readPublicKeyFile(file);
    if (seen.has(keyIdOf(key))) throw new UsageError(`--approver ${file}: the same key is given twice`, 'verify');
    seen.add(keyIdOf(key));
    pins.push({
      key,
      name: basename(file)
        .replace(/\.pub$/, '')
        .replace(/\.key$/, ''),
    });
  }
  return pins;
}
