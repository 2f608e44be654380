/**
 * The verification page's view: inputs (file picker, drop zone, pins), progress, the verdict as
 * `stepchain verify` prints it (src/cli/verbs/receipt.ts and journal.ts printReport: the headline, every
 * problem with its code and location, then scope, proves and does-not-prove), the disclosure check as
 * `stepchain disclose --check` prints it, and a paginated step list with one step expanded. Everything
 * from a receipt is written as text nodes (textContent), never as markup. No framework: the page is small.
 */
import { describeLocation, type Problem } from '../chain/report.js';
import { firstAlteredStep, messageBesideCode } from '../chain/verdict.js';
import { notAReceipt } from '../receipt/describe.js';
import { type ReceiptReport } from '../receipt/verify.js';
import { printablePointer } from '../redact/unbound.js';
import { type UnboundText } from '../redact/verify.js';
import type { Verifier } from './client.js';
import { KEEP_CHARS, type DisclosureOutcome, type Outcome, type Progress, type StepDetail } from './engine.js';
import { MAX_KEY_FILE_BYTES, readPins, type PinError } from './pins.js';
import { approvalsList } from './approvals.js';

/** A signed note's limit, and a proof file's (spec/PROOFS.md §11): the page reads one byte past each. */
const MAX_NOTE_BYTES = 1024 * 1024;
const MAX_PROOF_BYTES = 4 * 1024 * 1024;
import {
  ERASED_KEY,
  WITHHELD_KEY,
  chunkListOf,
  erasedListOf,
  markerOf,
  withheldListOf,
  type Segment,
  type StepRow,
} from './summary.js';

/** The `format` of the CLI's --json documents (src/cli/output.ts), which the page's JSON view repeats. */
const CLI_JSON_FORMAT = 'stepchain-cli/v1';

/** Rows per page of the step list: the DOM holds at most this many rows, whatever the receipt's size. */
export const PAGE_ROWS = 50;

type Attrs = Record<string, string>;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | null)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) if (c !== null) node.append(c);
  return node;
}

/** Each file chosen in a multiple file input, its first `limit` + 1 bytes (a larger file fails its limit unread). */
async function smallFiles(input: HTMLInputElement, limit: number): Promise<{ name: string; bytes: Uint8Array }[]> {
  return Promise.all(
    Array.from(input.files ?? [], async (f) => ({
      name: f.name,
      bytes: new Uint8Array(await f.slice(0, limit + 1).arrayBuffer()),
    })),
  );
}

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page lacks #${id}`);
  return node as T;
}

const plural = (n: number, one: string, many = `${one}s`): string =>
  `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
const size = (bytes: number): string =>
  bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

interface State {
  verifier: Verifier | null;
  outcome: Outcome | null;
  receiptName: string;
  page: number;
  only: 'all' | 'flagged';
  open: number | null;
  busy: boolean;
}

export function mountPage(starting: Promise<Verifier>): void {
  const form = byId<HTMLFormElement>('form');
  const receiptInput = byId<HTMLInputElement>('receipt');
  const keyInput = byId<HTMLInputElement>('pubkey');
  const headInput = byId<HTMLInputElement>('head');
  const proofInput = byId<HTMLInputElement>('proof');
  const logKeyInput = byId<HTMLInputElement>('logkey');
  const checkpointInput = byId<HTMLInputElement>('checkpoint');
  const witnessesInput = byId<HTMLTextAreaElement>('witnesses');
  const quorumInput = byId<HTMLInputElement>('quorum');
  const consistencyInput = byId<HTMLInputElement>('consistency');
  const tsaCertInput = byId<HTMLInputElement>('tsacert');
  const cosignersInput = byId<HTMLInputElement>('cosigners');
  const thresholdInput = byId<HTMLInputElement>('threshold');
  const approversInput = byId<HTMLInputElement>('approvers');
  const pinFields = {
    key: [keyInput, 'pubkey-error'],
    head: [headInput, 'head-error'],
    logkey: [logKeyInput, 'logkey-error'],
    checkpoint: [checkpointInput, 'checkpoint-error'],
    witnesses: [witnessesInput, 'witnesses-error'],
    quorum: [quorumInput, 'quorum-error'],
    tsacert: [tsaCertInput, 'tsacert-error'],
    cosigners: [cosignersInput, 'cosigners-error'],
    threshold: [thresholdInput, 'threshold-error'],
    approvers: [approversInput, 'approvers-error'],
  } as const;
  const drop = byId('drop');
  const dropped = byId('dropped');
  const verifyButton = byId<HTMLButtonElement>('verify');
  const clearButton = byId<HTMLButtonElement>('clear');
  const progressBox = byId('progress-box');
  const progressBar = byId<HTMLProgressElement>('progress');
  const progressLabel = byId('progress-label');
  const verdict = byId('verdict');
  const details = byId('details');
  const steps = byId('steps');
  const rowsBody = byId('step-rows');
  const pageInfo = byId('page-info');
  const prev = byId<HTMLButtonElement>('prev');
  const next = byId<HTMLButtonElement>('next');
  const gotoInput = byId<HTMLInputElement>('goto');
  const gotoButton = byId<HTMLButtonElement>('goto-btn');
  const onlyFlagged = byId<HTMLInputElement>('only-flagged');
  const detail = byId('step-detail');
  const engine = byId('engine');
  byId('keep').textContent = `${Math.round(KEEP_CHARS / (1024 * 1024))} MiB`;

  const state: State = {
    verifier: null,
    outcome: null,
    receiptName: '',
    page: 0,
    only: 'all',
    open: null,
    busy: false,
  };
  document.body.dataset.state = 'starting';

  starting.then(
    (v) => {
      state.verifier = v;
      engine.textContent = v.mode === 'worker' ? 'verifying in a Web Worker (the page stays responsive)' : '';
      if (v.mode === 'main-thread') {
        engine.append(
          h(
            'span',
            { class: 'fallback' },
            `No Web Worker could start (${v.why ?? 'unknown reason'}): verifying on this page's thread, in slices; the page may respond slowly while it works.`,
          ),
        );
      }
      document.body.dataset.engine = v.mode;
      document.body.dataset.state = 'idle';
    },
    (e: unknown) => {
      engine.textContent = `the verifier could not start: ${e instanceof Error ? e.message : String(e)}`;
      document.body.dataset.state = 'broken';
    },
  );

  // A file dropped outside the drop zone would make the browser open it in place of this page.
  for (const type of ['dragover', 'drop'] as const) window.addEventListener(type, (e) => e.preventDefault());
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const files = e.dataTransfer ? [...e.dataTransfer.files] : [];
    const placed: string[] = [];
    for (const file of files) {
      const role = /\.(pub|pem)$/i.test(file.name) ? 'key' : /\.json$/i.test(file.name) ? 'proof' : 'receipt';
      const input = role === 'key' ? keyInput : role === 'proof' ? proofInput : receiptInput;
      const list = new DataTransfer();
      list.items.add(file);
      input.files = list.files;
      placed.push(`${role === 'key' ? 'public key' : role === 'proof' ? 'disclosure proof' : 'receipt'}: ${file.name}`);
    }
    dropped.textContent = placed.length ? `Dropped — ${placed.join('; ')}` : '';
  });
  receiptInput.addEventListener('change', () => {
    dropped.textContent = '';
  });
  form.addEventListener('reset', () => {
    dropped.textContent = '';
    clearFieldErrors();
    state.outcome = null;
    verdict.className = 'verdict';
    delete verdict.dataset.ok;
    delete verdict.dataset.verdict;
    verdict.replaceChildren(h('p', { class: 'placeholder' }, 'No receipt verified yet.'));
    details.replaceChildren();
    steps.hidden = true;
    detail.hidden = true;
    document.body.dataset.state = state.verifier ? 'idle' : document.body.dataset.state;
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void run();
  });

  function clearFieldErrors(): void {
    for (const [input, id] of Object.values(pinFields)) {
      input.removeAttribute('aria-invalid');
      byId(id).textContent = '';
    }
  }

  function showError(message: string): void {
    verdict.className = 'verdict invalid';
    delete verdict.dataset.ok;
    delete verdict.dataset.verdict;
    verdict.replaceChildren(h('p', { class: 'headline' }, `error: ${message}`));
    details.replaceChildren(h('p', {}, 'Nothing was verified. Correct the input and press Verify again.'));
    steps.hidden = true;
    document.body.dataset.state = 'error';
  }

  async function run(): Promise<void> {
    if (state.busy) return;
    clearFieldErrors();
    const receipt = receiptInput.files?.[0];
    if (!receipt) {
      showError('choose a receipt file first (.tar or .tar.gz)');
      receiptInput.focus();
      return;
    }
    if (!state.verifier) {
      showError('the verifier has not started yet; wait a moment and press Verify again');
      return;
    }
    const keyFile = keyInput.files?.[0];
    const checkpointFile = checkpointInput.files?.[0];
    const consistencyFile = consistencyInput.files?.[0];
    const pins = readPins({
      key: keyFile
        ? {
            name: keyFile.name,
            size: keyFile.size,
            bytes: new Uint8Array(await keyFile.slice(0, MAX_KEY_FILE_BYTES + 1).arrayBuffer()),
          }
        : null,
      head: headInput.value,
      logKey: logKeyInput.value,
      checkpoint: checkpointFile
        ? { name: checkpointFile.name, text: await checkpointFile.slice(0, MAX_NOTE_BYTES + 1).text() }
        : null,
      witnesses: witnessesInput.value,
      quorum: quorumInput.value,
      // One byte past the limits (spec/PROOFS.md §11.1): a larger file fails its limit without being read whole.
      consistency: consistencyFile
        ? {
            name: consistencyFile.name,
            bytes: new Uint8Array(await consistencyFile.slice(0, MAX_PROOF_BYTES + 1).arrayBuffer()),
          }
        : null,
      tsaCerts: await smallFiles(tsaCertInput, MAX_KEY_FILE_BYTES * 16),
      cosigners: await smallFiles(cosignersInput, MAX_KEY_FILE_BYTES),
      threshold: thresholdInput.value,
      approvers: await smallFiles(approversInput, MAX_KEY_FILE_BYTES),
    });
    if (!pins.ok) {
      for (const err of pins.errors) markField(err);
      showError(pins.errors.map((x) => x.message).join('; '));
      pinFields[pins.errors[0]!.field][0].focus();
      return;
    }
    const proofFile = proofInput.files?.[0];
    const proof = proofFile
      ? { name: proofFile.name, bytes: new Uint8Array(await proofFile.arrayBuffer()) }
      : undefined;
    state.busy = true;
    state.receiptName = receipt.name;
    verifyButton.disabled = true;
    clearButton.disabled = true;
    document.body.dataset.state = 'verifying';
    verdict.className = 'verdict';
    delete verdict.dataset.ok;
    delete verdict.dataset.verdict;
    verdict.replaceChildren(h('p', { class: 'placeholder' }, `Verifying ${receipt.name}…`));
    details.replaceChildren();
    steps.hidden = true;
    detail.hidden = true;
    showProgress({ phase: 'receipt', bytes: 0, total: receipt.size, steps: 0 });
    const progress = throttled(showProgress);
    try {
      const outcome = await state.verifier.verify(
        {
          receipt,
          name: receipt.name,
          ...(pins.publicKey ? { publicKey: pins.publicKey } : {}),
          ...(pins.expectHead ? { expectHead: pins.expectHead } : {}),
          ...(proof ? { proof } : {}),
          ...(pins.logKey ? { logKey: pins.logKey } : {}),
          ...(pins.checkpoint ? { checkpoint: pins.checkpoint } : {}),
          ...(pins.witnesses ? { witnesses: pins.witnesses, quorum: pins.quorum! } : {}),
          ...(pins.consistency ? { consistency: pins.consistency } : {}),
          ...(pins.tsaCerts ? { tsaCerts: pins.tsaCerts } : {}),
          ...(pins.cosigners ? { cosigners: pins.cosigners } : {}),
          ...(pins.threshold !== undefined ? { threshold: pins.threshold } : {}),
          ...(pins.approvers ? { approvers: pins.approvers } : {}),
        },
        progress.tick,
      );
      progress.stop();
      state.outcome = outcome;
      state.page = 0;
      state.only = 'all';
      state.open = null;
      onlyFlagged.checked = false;
      renderOutcome(outcome);
      document.body.dataset.lineHash = outcome.lineHash;
      document.body.dataset.entryHash = outcome.entryHash;
      if (outcome.listed > 0) await renderRows();
      document.body.dataset.state = 'done';
      // The verdict takes focus (keyboard users land on it; a phone shows it first, page.css), and is scrolled to.
      verdict.focus({ preventScroll: true });
      byId('verdict-h').scrollIntoView({ block: 'start' });
    } catch (e) {
      showError(`the verifier failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      progress.stop();
      state.busy = false;
      verifyButton.disabled = false;
      clearButton.disabled = false;
      progressBox.hidden = true;
    }
  }

  function markField(err: PinError): void {
    const [input, id] = pinFields[err.field];
    input.setAttribute('aria-invalid', 'true');
    byId(id).textContent = err.message;
  }

  function showProgress(p: Progress): void {
    progressBox.hidden = false;
    const what =
      p.phase === 'receipt'
        ? 'Verifying the receipt'
        : p.phase === 'disclosure'
          ? 'Checking the disclosure proof (reading the receipt again)'
          : 'Reading the step again from the file';
    progressBar.max = Math.max(1, p.total);
    progressBar.value = p.bytes;
    progressLabel.textContent = `${what}: ${size(p.bytes)} of ${size(p.total)}${p.steps ? `, ${plural(p.steps, 'step')}` : ''}`;
  }

  // ---- the verdict, as `stepchain verify` prints it -------------------------------------------------

  /**
   * The verdict box: the report's three verdicts (spec/RECEIPT.md §8.1) as the CLI's first line says them —
   * authenticated (green, with what held), intact but NOT authenticated (amber, with what to pin), invalid
   * (red, the first altered step named before the problems) — or "not a receipt" for bytes that are none.
   */
  function verdictBox(r: ReceiptReport, name: string): Node[] {
    const n = r.problems.length;
    const size = `${plural(r.steps, 'step')}${r.head ? `, head ${r.head} (seq ${r.head_seq})` : ', empty'}`;
    if (r.verdict === 'authenticated') {
      return [
        h('p', { class: 'headline', id: 'headline' }, `✔ authenticated receipt ${name}: ${size}`),
        h(
          'ul',
          { class: 'pinned', id: 'authenticated-by' },
          ...r.authenticated_by.map((s) => h('li', {}, h('span', { class: 'tag proves' }, 'pinned'), s)),
        ),
      ];
    }
    if (r.verdict === 'intact') {
      return [
        h('p', { class: 'headline', id: 'headline' }, `⚠ intact, NOT authenticated receipt ${name}: ${size}`),
        h('p', { class: 'to-pin', id: 'to-pin' }, `Not authenticated: ${r.to_pin ?? ''} (the fields of section 1).`),
      ];
    }
    if (notAReceipt(r)) {
      return [
        h('p', { class: 'headline', id: 'headline' }, `✘ this is not a receipt: ${name}`),
        h(
          'p',
          { id: 'not-a-receipt' },
          'Nothing in this file reads as a stepchain receipt (a .tar or .tar.gz from stepchain export or publish, starting with its manifest). Choose the receipt file itself.',
        ),
      ];
    }
    const parts: Node[] = [
      h(
        'p',
        { class: 'headline', id: 'headline' },
        `✘ INVALID receipt ${name}: ${n.toLocaleString('en')}${r.problems_truncated ? '+' : ''} problem${n === 1 ? '' : 's'}`,
      ),
    ];
    const altered = firstAlteredStep(r);
    if (altered) {
      const line = h(
        'p',
        { class: 'altered', id: 'altered' },
        `Altered: step ${altered.seq}${altered.field ? `, ${altered.field}` : ''} (${altered.code})`,
      );
      const button = h('button', { type: 'button', class: 'link' }, 'show this step');
      button.addEventListener('click', () => void goTo({ seq: altered.seq }));
      line.append(' ', button);
      parts.push(line);
    }
    return parts;
  }

  function renderOutcome(o: Outcome): void {
    const r = o.report;
    verdict.className = `verdict ${r.verdict}`;
    verdict.dataset.ok = String(r.ok);
    verdict.dataset.verdict = notAReceipt(r) ? 'not-a-receipt' : r.verdict;
    // Issue 32: a verdict over text that is not bound to the head is never all green (page.css).
    if (unboundCount(r) > 0) verdict.dataset.unbound = String(unboundCount(r));
    else delete verdict.dataset.unbound;
    verdict.replaceChildren(...verdictBox(r, state.receiptName));
    const n = r.problems.length;
    const parts: Node[] = [];
    if (n > 0) {
      parts.push(
        h('h3', {}, 'Problems'),
        h('ol', { class: 'problems', id: 'problems' }, ...r.problems.map(problemItem)),
      );
      if (r.problems_truncated)
        parts.push(h('p', {}, 'More problems were found than the verifier keeps (1000); the first ones are listed.'));
    }
    if (r.warnings.length > 0)
      parts.push(h('h3', {}, 'Warnings'), h('ol', { class: 'problems warning' }, ...r.warnings.map(problemItem)));
    if (r.ok) {
      parts.push(
        h(
          'p',
          { id: 'scope' },
          `scope: ${r.scope}${r.range ? ` (steps ${r.range.from}..${r.range.to})` : ''}; signed by: ${r.signed_by ?? 'nobody (unsigned)'}`,
        ),
      );
    }
    // Who approved or denied which tool call (spec/APPROVALS.md §6), as `verify` prints it.
    parts.push(...approvalsList(r.approvals, h));
    parts.push(
      h(
        'ul',
        { class: 'statements', id: 'statements' },
        ...r.proves.map((s) => h('li', { class: 'proves' }, h('span', { class: 'tag proves' }, 'proves'), s)),
        ...r.does_not_prove.map((s) => h('li', { class: 'not' }, h('span', { class: 'tag not' }, 'does not prove'), s)),
      ),
    );
    const unbound = unboundView(r);
    if (unbound) parts.unshift(unbound);
    parts.push(facts(o));
    if (o.disclosure) parts.push(disclosureView(o.disclosure));
    parts.push(jsonView(o));
    details.replaceChildren(...parts);
    steps.hidden = o.listed === 0;
    const keptNote = byId('kept-note');
    keptNote.hidden = o.kept === o.listed;
    keptNote.textContent =
      o.kept === o.listed
        ? ''
        : `The page keeps the text of the first ${plural(o.kept, 'step')} in memory (${byId('keep').textContent}); the other ${plural(o.listed - o.kept, 'step')} show without content here, and opening one reads the receipt again.`;
  }

  function problemItem(p: Problem): HTMLLIElement {
    const loc = describeLocation(p.location);
    const li = h(
      'li',
      { 'data-code': p.code },
      h('code', { class: 'code' }, p.code),
      loc ? h('span', { class: 'loc' }, loc) : null,
      h('p', { class: 'msg' }, messageBesideCode(p)),
    );
    const where =
      p.location.file !== undefined && p.location.line !== undefined
        ? { file: p.location.file, line: p.location.line }
        : p.location.seq !== undefined
          ? { seq: p.location.seq }
          : null;
    if (where && state.outcome && state.outcome.listed > 0) {
      const button = h('button', { type: 'button', class: 'link' }, 'show this step');
      button.addEventListener('click', () => void goTo(where));
      li.append(' ', button);
    }
    return li;
  }

  function facts(o: Outcome): HTMLElement {
    const r = o.report;
    const rows: [string, string][] = [];
    const add = (k: string, v: string | number | null | undefined): void => {
      if (v !== null && v !== undefined) rows.push([k, String(v)]);
    };
    add('format', r.format);
    add('compressed', r.compressed ? 'yes (gzip)' : 'no');
    add('journal', r.journal_id);
    add('created', r.genesis?.created_at);
    add('range', r.range ? `steps ${r.range.from}..${r.range.to}` : null);
    add('manifest digest', r.manifest_digest);
    add('signed by', r.signed_by ?? (r.manifest ? 'nobody (unsigned)' : null));
    add('archive entries', r.entries);
    add('blobs', r.blobs);
    if (o.published) {
      const p = r as ReceiptReport & {
        redactions?: number;
        anchor?: { length: number; redacted_from: number; policy_digest: string } | null;
      };
      add('published receipt', plural(p.redactions ?? 0, 'declared redaction'));
      if (p.anchor)
        add(
          'anchor',
          `original run of ${plural(p.anchor.length, 'step')}, first redaction at seq ${p.anchor.redacted_from}, policy ${p.anchor.policy_digest}`,
        );
    }
    add(
      'verified in',
      `${(o.ms / 1000).toFixed(2)} s (${state.verifier?.mode === 'worker' ? 'Web Worker' : 'page thread'}; line hashes: ${o.lineHash === 'wasm-simd-4' ? 'WebAssembly SIMD' : o.lineHash}; entry digests: ${o.entryHash})`,
    );
    const dl = h('dl', { class: 'facts', id: 'facts' });
    for (const [k, v] of rows) dl.append(h('dt', {}, k), h('dd', {}, v));
    return h('div', {}, h('h3', {}, 'Receipt'), dl);
  }

  function disclosureView(d: DisclosureOutcome): HTMLElement {
    const box = h('div', { id: 'disclosure', class: `verdict ${d.ok ? 'valid' : 'invalid'}`, 'data-ok': String(d.ok) });
    let headline: string;
    if (d.ok) {
      if (d.kind === 'step')
        headline = `✔ whole-step disclosure holds: step ${d.seq} of the original run is ${JSON.stringify(d.record)}`;
      else if (d.kind === 'hash')
        headline = `✔ hash disclosure holds: the anchor commits to ${d.step_hash} as the original hash of step ${d.seq}${d.head ? ' (the original head)' : ''}`;
      else headline = `✔ disclosure holds: seq ${d.seq}, ${d.path} (rule ${d.rule}) = ${JSON.stringify(d.value)}`;
    } else {
      headline = `✘ disclosure does NOT hold${d.seq !== null ? ` for seq ${d.seq}${d.kind === 'value' && d.path ? `, ${d.path}` : ''}` : ''}`;
    }
    box.append(h('p', { class: 'headline' }, headline));
    if (d.problems.length)
      box.append(
        h(
          'ol',
          { class: 'problems' },
          ...d.problems.map((p) =>
            h(
              'li',
              { 'data-code': p.code },
              h('code', { class: 'code' }, p.code),
              h('p', { class: 'msg' }, messageBesideCode(p)),
            ),
          ),
        ),
      );
    if (d.proves.length)
      box.append(
        h(
          'ul',
          { class: 'statements' },
          ...d.proves.map((s) => h('li', {}, h('span', { class: 'tag proves' }, 'proves'), s)),
        ),
      );
    return h('div', {}, h('h3', {}, 'Disclosure proof'), box);
  }

  function jsonView(o: Outcome): HTMLElement {
    const pre = h('pre', { class: 'json', id: 'report-json', tabindex: '0' });
    const box = h(
      'details',
      { id: 'json-details' },
      h('summary', {}, 'The report as JSON (as stepchain verify --json prints it)'),
      pre,
    );
    box.addEventListener('toggle', () => {
      if (box.open && pre.textContent === '') {
        pre.textContent = JSON.stringify(
          {
            format: CLI_JSON_FORMAT,
            command: 'verify',
            ok: o.report.ok,
            authenticated: o.report.authenticated,
            verdict: o.report.verdict,
            kind: 'receipt',
            file: state.receiptName,
            report: o.report,
          },
          null,
          2,
        );
      }
    });
    return box;
  }

  // ---- the step list ----------------------------------------------------------------------------------

  prev.addEventListener('click', () => {
    state.page--;
    void renderRows();
  });
  next.addEventListener('click', () => {
    state.page++;
    void renderRows();
  });
  onlyFlagged.addEventListener('change', () => {
    state.only = onlyFlagged.checked ? 'flagged' : 'all';
    state.page = 0;
    void renderRows();
  });
  const gotoSeq = (): void => {
    const seq = Number(gotoInput.value);
    if (gotoInput.value === '' || !Number.isSafeInteger(seq) || seq < 0) {
      gotoInput.setAttribute('aria-invalid', 'true');
      return;
    }
    gotoInput.removeAttribute('aria-invalid');
    void goTo({ seq });
  };
  gotoButton.addEventListener('click', gotoSeq);
  gotoInput.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      gotoSeq();
    }
  });

  async function goTo(where: { seq?: number; file?: string; line?: number }): Promise<void> {
    if (!state.verifier || !state.outcome) return;
    const index = await state.verifier.find(where);
    if (index < 0) {
      pageInfo.textContent = `No step ${where.seq !== undefined ? `with seq ${where.seq}` : `at ${where.file}:${where.line}`} is listed.`;
      return;
    }
    state.only = 'all';
    onlyFlagged.checked = false;
    state.page = Math.floor(index / PAGE_ROWS);
    await renderRows();
    await openStep(index);
  }

  async function renderRows(): Promise<void> {
    const o = state.outcome;
    if (!o || !state.verifier) return;
    const total = state.only === 'all' ? o.listed : o.flagged;
    const pages = Math.max(1, Math.ceil(total / PAGE_ROWS));
    state.page = Math.min(Math.max(0, state.page), pages - 1);
    const from = state.page * PAGE_ROWS;
    const rows = await state.verifier.rows(from, PAGE_ROWS, state.only);
    rowsBody.replaceChildren(...rows.map(rowView));
    pageInfo.textContent =
      total === 0
        ? 'No step has a problem of its own.'
        : `${state.only === 'flagged' ? 'Steps with problems' : 'Steps'} ${(from + 1).toLocaleString('en')}–${(from + rows.length).toLocaleString('en')} of ${total.toLocaleString('en')} (page ${(state.page + 1).toLocaleString('en')} of ${pages.toLocaleString('en')})`;
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  function rowView(row: StepRow): HTMLTableRowElement {
    const tr = h('tr', { 'data-index': String(row.index), ...(row.clean ? {} : { class: 'flagged' }) });
    if (row.index === state.open) tr.classList.add('open');
    const seq = h('td', { class: 'mono' }, row.seq === null ? '?' : String(row.seq));
    if (!row.clean) seq.append(h('span', { class: 'sr' }, ' (this line has problems)'), ' ⚠');
    tr.append(seq);
    if (!row.kept) {
      tr.append(
        h(
          'td',
          { colspan: '5', class: 'notkept' },
          'text not kept in memory — open the step to read it again from the file',
        ),
      );
    } else {
      const views = new Set(row.views);
      tr.append(
        h('td', { class: 'mono' }, row.ts ?? ''),
        segCell(row.model, views.has('model')),
        row.tool.length ? segCell(row.tool, views.has('tool_call')) : h('td', { class: 'none' }, '—'),
        segCell(row.prompt, views.has('prompt')),
        segCell(row.result, views.has('result')),
      );
    }
    const open = h(
      'button',
      {
        type: 'button',
        class: 'link',
        'aria-controls': 'step-detail',
        'aria-expanded': String(row.index === state.open),
        'aria-label': `Open step ${row.seq ?? `at position ${row.index + 1}`}`,
      },
      'open',
    );
    open.addEventListener('click', () => void openStep(row.index));
    tr.append(h('td', {}, open));
    return tr;
  }

  /** A cell of the step list; a redacted view's cell says, before its text, that the text is not bound. */
  function segCell(segments: Segment[], view = false): HTMLTableCellElement {
    const td = h(
      'td',
      view ? { class: 'unbound' } : {},
      ...(view ? [unboundBadge()] : []),
      ...segments.map(segmentNode),
    );
    td.title = td.textContent ?? '';
    return td;
  }

  async function openStep(index: number): Promise<void> {
    if (!state.verifier) return;
    state.open = index;
    for (const tr of rowsBody.querySelectorAll('tr')) {
      const on = tr.dataset.index === String(index);
      tr.classList.toggle('open', on);
      tr.querySelector('button')?.setAttribute('aria-expanded', String(on));
    }
    detail.hidden = false;
    detail.replaceChildren(h('p', { class: 'placeholder' }, 'Reading the step…'));
    let d: StepDetail;
    const progress = throttled(showProgress);
    try {
      d = await state.verifier.step(index, progress.tick);
    } catch (e) {
      detail.replaceChildren(
        h('p', { class: 'error-box' }, `This step cannot be shown: ${e instanceof Error ? e.message : String(e)}`),
      );
      return;
    } finally {
      progress.stop();
      progressBox.hidden = true;
    }
    renderDetail(d);
  }

  function renderDetail(d: StepDetail): void {
    const r = d.row;
    const title = h(
      'h3',
      { id: 'step-title', tabindex: '-1' },
      `Step ${r.seq ?? '(unreadable seq)'} — ${r.file ?? ''}:${r.line}`,
    );
    const close = h('button', { type: 'button', class: 'secondary' }, 'Close');
    close.addEventListener('click', () => {
      detail.hidden = true;
      const opened = rowsBody.querySelector<HTMLButtonElement>(`tr[data-index="${d.row.index}"] button`);
      state.open = null;
      opened?.setAttribute('aria-expanded', 'false');
      opened?.closest('tr')?.classList.remove('open');
      opened?.focus();
    });
    const parts: Node[] = [title];
    if (!r.clean)
      parts.push(
        h(
          'p',
          { class: 'error-box' },
          'This line has problems of its own: see the verdict above. Its content cannot be relied on.',
        ),
      );
    if (d.reread)
      parts.push(
        h(
          'p',
          { class: 'placeholder' },
          'Read again from the file: it was beyond what the page keeps in memory. The second reading gave the same report.',
        ),
      );
    let record: unknown = null;
    try {
      record = JSON.parse(d.text);
    } catch {
      record = d.text;
    }
    const blobs = new Map(d.blobs.map((b) => [b.digest, b.text]));
    if (r.views.length) {
      parts.push(
        h(
          'p',
          { class: 'unbound-note' },
          `${r.views.join(', ')} ${r.views.length === 1 ? 'is a redacted view' : 'are redacted views'}: the text shown is NOT bound to the head. Anyone holding the receipt can rewrite it and the receipt still verifies; only the field's digest is bound.`,
        ),
      );
    }
    parts.push(h('div', { class: 'tree mono', id: 'step-tree' }, jsonNode(record, 0, blobs, new Set(r.views))));
    if (d.blobs.length) {
      parts.push(
        h(
          'p',
          {},
          `${plural(d.blobs.length, 'field')} of this step ${d.blobs.length === 1 ? 'is' : 'are'} stored as a blob; ${d.blobs.every((b) => b.text !== null) ? 'shown in place above' : 'blobs the page did not keep are shown as references'}.`,
        ),
      );
    }
    parts.push(
      h('details', {}, h('summary', {}, 'The stored line, exactly as hashed'), h('pre', { class: 'json' }, d.text)),
    );
    parts.push(close);
    detail.replaceChildren(...parts);
    title.focus();
  }

  /** A value as indented JSON text, markers shown as markers and kept blobs in place. */
  function jsonNode(
    v: unknown,
    depth: number,
    blobs: Map<string, string | null>,
    views: ReadonlySet<string> = new Set(),
  ): Node {
    const frag = document.createDocumentFragment();
    const pad = (d: number): string => '  '.repeat(d);
    const m = markerOf(v);
    if (m) {
      if (m.kind === 'blob') {
        const text = blobs.get(m.digest) ?? null;
        frag.append(segmentNode(m));
        if (text !== null) {
          let value: unknown = text;
          try {
            value = JSON.parse(text);
          } catch {
            // shown as text
          }
          frag.append(' = ', jsonNode(value, depth, blobs));
        }
      } else frag.append(segmentNode(m));
      return frag;
    }
    const chunks = chunkListOf(v);
    if (chunks) {
      // A v3 string with withheld chunks: the shown chunks are proven text, the withheld ones badges in place.
      frag.append('"');
      for (const c of chunks) {
        const cm = markerOf(c);
        frag.append(cm ? segmentNode(cm) : typeof c === 'string' ? JSON.stringify(c).slice(1, -1) : '');
      }
      frag.append('"');
      return frag;
    }
    if (Array.isArray(v)) {
      if (v.length === 0) return document.createTextNode('[]');
      frag.append('[\n');
      v.forEach((x, i) => frag.append(pad(depth + 1), jsonNode(x, depth + 1, blobs), i < v.length - 1 ? ',\n' : '\n'));
      frag.append(`${pad(depth)}]`);
      return frag;
    }
    if (v !== null && typeof v === 'object') {
      const held = withheldListOf(v);
      const gone = erasedListOf(v);
      const keys = Object.keys(v).filter((k) => !(held && k === WITHHELD_KEY) && !(gone && k === ERASED_KEY));
      if (keys.length === 0 && !held && !gone) return document.createTextNode('{}');
      frag.append('{\n');
      // A v3 object's withheld members: one badge for them all (their names are withheld too).
      if (held)
        frag.append(
          pad(depth + 1),
          segmentNode({ kind: 'withheld', digest: held[0] ?? '', count: held.length }),
          keys.length > 0 || gone ? ',\n' : '\n',
        );
      // Its erased members (names and values deleted from the journal): one badge, a state of its own.
      if (gone)
        frag.append(
          pad(depth + 1),
          segmentNode({
            kind: 'erased',
            digest: gone[0]?.digest ?? '',
            erasure: gone[0]?.erasure ?? '',
            count: gone.length,
          }),
          keys.length > 0 ? ',\n' : '\n',
        );
      keys.forEach((k, i) => {
        const value = jsonNode((v as Record<string, unknown>)[k], depth + 1, blobs);
        // A redacted view's members (depth 0: the record's slots) are wrapped and badged as not bound to the head.
        const shown =
          depth === 0 && views.has(k) ? h('span', { class: 'unbound', 'data-slot': k }, unboundBadge(), value) : value;
        frag.append(
          pad(depth + 1),
          h('span', { class: 'k' }, JSON.stringify(k)),
          ': ',
          shown,
          i < keys.length - 1 ? ',\n' : '\n',
        );
      });
      frag.append(`${pad(depth)}}`);
      return frag;
    }
    return document.createTextNode(JSON.stringify(v) ?? String(v));
  }
}

/** The report's count of places not bound to the head (spec/REDACTION.md §12.5 step 6); 0 for an ordinary receipt. */
function unboundCount(r: ReceiptReport): number {
  const n = (r as ReceiptReport & { unbound_count?: unknown }).unbound_count;
  return typeof n === 'number' ? n : 0;
}

/** What `stepchain verify` prints as NOT BOUND (src/cli/unbound.ts), as a box above the statements; null when there is nothing unbound. */
function unboundView(r: ReceiptReport): HTMLElement | null {
  const count = unboundCount(r);
  if (count === 0) return null;
  const places = ((r as ReceiptReport & { unbound?: UnboundText[] }).unbound ?? []).slice(0, 20);
  const list = h(
    'ul',
    {},
    ...places.map((p) =>
      h(
        'li',
        {},
        `seq ${p.seq} ${printablePointer(p.path)} — ${p.why === 'view' ? 'redacted view: the text around its markers' : 'the "text" of a redaction marker'}`,
      ),
    ),
  );
  return h(
    'div',
    { class: 'unbound-box', id: 'unbound', 'data-count': String(count) },
    h('h3', {}, `Not bound to the head: ${plural(count, 'value')}`),
    h(
      'p',
      {},
      `This receipt shows ${plural(count, 'value')} whose text is NOT bound to the head: anyone holding the receipt can rewrite ${count === 1 ? 'it' : 'them'} and it still verifies. They are marked “not bound” in the steps below; read them as the publisher's word, not as verified content.`,
    ),
    list,
    ...(count > places.length
      ? [h('p', {}, `… and ${plural(count - places.length, 'more')} (the report as JSON lists up to 1,000).`)]
      : []),
  );
}

/** The badge before a value whose text is not bound to the head. */
function unboundBadge(): HTMLElement {
  const span = h('span', { class: 'unbound-tag' }, 'not bound');
  span.title =
    "A redacted view: the text is not bound to the head; only the field's digest is. Anyone holding the receipt could have written it.";
  return span;
}

/** A segment as a node: text, or a marker badge that says what it stands for. */
function segmentNode(s: Segment): Node {
  if (s.kind === 'text') return document.createTextNode(s.text);
  if (s.kind === 'redacted') {
    const label = `redacted · rule ${s.rule}${s.text !== null ? ` · ${JSON.stringify(s.text)} (text not bound)` : ''}`;
    const span = h('span', { class: 'redacted', 'data-rule': s.rule }, label);
    span.title = `Redacted by rule ${s.rule}; salted commitment ${s.commitment}. A disclosure proof can reveal the value.`;
    return span;
  }
  if (s.kind === 'erased') {
    const span = h('span', { class: 'redacted erased' }, s.count === 1 ? 'erased' : `${s.count} members erased`);
    span.title = `Erased from the journal by ${s.erasure} (neither shown nor withheld by the publisher): its digest ${s.digest} stays bound to the head; the value and its salt no longer exist.`;
    return span;
  }
  if (s.kind === 'withheld') {
    const span = h('span', { class: 'redacted withheld' }, s.count === 1 ? 'withheld' : `${s.count} members withheld`);
    span.title =
      s.count === 1
        ? `Withheld: its salted digest ${s.digest} is bound to the head; the value is not shown.`
        : `${s.count} members withheld (names and values); their salted digests are bound to the head.`;
    return span;
  }
  const span = h('span', { class: 'blobref' }, `blob ${s.digest.slice(0, 19)}… (${plural(s.size, 'byte')})`);
  span.title = `Stored as blob ${s.digest}`;
  return span;
}

/** Progress at most every 100 ms; nothing after stop(), so a late update cannot show a finished bar again. */
function throttled(fn: (p: Progress) => void): { tick: (p: Progress) => void; stop: () => void } {
  let latest: Progress | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  return {
    tick: (p) => {
      latest = p;
      if (timer !== null || stopped) return;
      timer = setTimeout(() => {
        timer = null;
        if (!stopped && latest) fn(latest);
      }, 100);
    },
    stop: () => {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
    },
  };
}
