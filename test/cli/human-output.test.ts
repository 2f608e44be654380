/**
 * Golden human output of every verb (issue 37), valid and invalid input: the exit code and what reaches
 * stdout and stderr, with ids, times, hashes and the temporary directory as placeholders (output-fixtures.ts).
 * A change of any printed line fails here; update the golden text on purpose, and the README's console
 * blocks with it (GOLDEN_PRINT=1 prints each case's output as compared). The journals are built from plain
 * content (PLAIN); the cases run in order, since later ones read what earlier ones wrote (a receipt, a
 * publication, a key, a checkpoint).
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { asRun, cliServer } from '../helpers/cli-batch.js';
import { tempDir } from '../helpers/tmp.js';
import { buildJournals, cli, PLAIN, placeholders } from './output-fixtures.js';

const dir = tempDir('stepchain-golden-');
const at = (name: string) => join(dir, name);

interface Golden {
  code: number;
  stdout: string;
  stderr: string;
}

/** Placeholders for what output-fixtures leaves: base64 keys and roots, byte counts. */
function normalise(text: string): string {
  return placeholders(text, dir)
    .replace(/\+[0-9a-f]{8}\+[A-Za-z0-9+/]{43}[A-Za-z0-9+/=]/g, '+<keyhash>+<key>')
    .replace(/(?<=root )[A-Za-z0-9+/]{43}=/g, '<root>')
    .replace(/\(\d+ bytes/g, '(<n> bytes')
    .replace(/of this name and key \([0-9a-f]{8}\)/g, 'of this name and key (<keyhash>)')
    .replace(/the stepchain \d+\.\d+\.\d+\S*/g, 'the stepchain <version>');
}

const logKey = (): string => /--log-key\): (\S+)/.exec(raw.get('checkpoint')!.stderr)![1]!;

/** Each case: its name, its arguments (evaluated when it runs), and its golden output. */
const CASES: Array<[name: string, args: () => string[], golden: Golden]> = [];
const ran = new Map<string, Golden>();
/** The same, before placeholders (a key a later case passes on). */
const raw = new Map<string, Golden>();

function golden(name: string, args: () => string[], code: number, stderr: string, stdout = ''): void {
  CASES.push([name, args, { code, stdout, stderr }]);
}

// ── init, append ──────────────────────────────────────────────────────────────────────────────────────
golden(
  'init',
  () => ['init', at('new')],
  0,
  `created journal <dir>/new (journal_id <uuid>)
`,
);
golden(
  'init --run',
  () => ['init', at('new-run'), '--agent', 'billing', '--label', 'env=prod'],
  0,
  `created run journal <dir>/new-run (journal_id new-run)
`,
);
golden(
  'init: a journal that exists',
  () => ['init', at('new')],
  2,
  `error: JOURNAL_EXISTS: journal "new" already exists under <dir> (open it, or choose another id) [<dir>/new]
`,
);
golden(
  'append',
  () => ['append', at('new'), '--file', at('step.json')],
  0,
  ``,
  `0 sha256:<hash>
`,
);
golden(
  'append: invalid JSON names file, line and column',
  () => ['append', at('new'), '--file', at('bad.json')],
  2,
  `error: INPUT_INVALID: <dir>/bad.json:2:11 is not valid JSON: unexpected character "}" (at /model)
`,
);

// ── log ─────────────────────────────────────────────────────────────────────────────────────────────────
golden(
  'log v1',
  () => ['log', at('v1')],
  0,
  `✔ chain verified: 2 steps, head sha256:<hash>
`,
  `   0 <hash12>  <time>  weather  weather
       prompt: Weather in Paris?
       call:   {"arguments":{"q":"Weather in Paris?"},"name":"weather"}
       result: {"text":"Weather in Paris?"}
   1 <hash12>  <time>  gpt-4o  —
       prompt: 1 message, the last from user; last user message: Weather in Paris?
       result: "Weather in Paris?"
`,
);
golden(
  'log v2 step journal',
  () => ['log', at('v2')],
  0,
  `run <uuid>, created <time>
✔ chain verified: 1 step, head sha256:<hash>
`,
  `   0 <hash12>  <time>  weather  —
       prompt: Weather in Paris?
       result: {"ok":true,"tool":"weather"}
`,
);
golden(
  'log run journal',
  () => ['log', at('run')],
  0,
  `run run (agent Weather in Paris?, env=Weather in Paris?), created <time>
✔ chain verified: 6 steps, head sha256:<hash>
⚠ 1 tool effect started with no recorded outcome (marked PENDING below): the tool may or may not have run
`,
  `   0 <hash12>  <time>  run.started  input "Weather in Paris?"
   1 <hash12>  <time>  model.started  mock/weather  prompt: 1 message, the last from user; last user message: Weather in Paris?
   2 <hash12>  <time>  model.completed  mock/weather  → "Weather in Paris?"; tool call: weather({"city":"Weather in Paris?"})
   3 <hash12>  <time>  tool.started  weather({"city":"Weather in Paris?"})  key weather
   4 <hash12>  <time>  tool.failed  weather  error Timeout: Weather in Paris?
   5 <hash12>  <time>  tool.started  weather({"city":"Weather in Paris?"})  key weather-2  PENDING — outcome unknown
`,
);
golden(
  'log LangGraph thread',
  () => ['log', at('thread')],
  0,
  `✔ chain verified: 2 steps, head sha256:<hash>
`,
  `   0 <hash12>  <time>  langgraph.checkpoint  thread Weather in Paris?: checkpoint 1f0c-01, input step -1; channels messages
   1 <hash12>  <time>  langgraph.writes  thread Weather in Paris?: writes to messages by task agent, for checkpoint 1f0c-01
`,
);
golden(
  'log --from past the head',
  () => ['log', at('v1'), '--from', '9'],
  0,
  `✔ chain verified: 2 steps, head sha256:<hash>
`,
);
golden(
  'log a tampered journal',
  () => ['log', at('tampered')],
  1,
  `✘ INVALID <dir>/tampered: 1 problem
  altered  step 1, step_hash (HASH_MISMATCH)
  HASH_MISMATCH 0000000000000000.jsonl:2, seq 1, step_hash
      stored step_hash sha256:<hash> does not match the record's content (sha256:<hash>): a covered field was altered after hashing, or step_hash itself was edited
The chain does NOT hold: the steps below cannot be trusted.
`,
  `   0 <hash12>  <time>  weather  weather
       prompt: Weather in Paris?
       call:   {"arguments":{"q":"Weather in Paris?"},"name":"weather"}
       result: {"text":"Weather in Paris?"}
   1 <hash12>  <time>  gpt-4o  —
       prompt: 1 message, the last from user; last user message: Weather in Paris?
       result: "Weather in Lyon?"
`,
);
golden(
  'log: no such journal',
  () => ['log', at('missing')],
  2,
  `error: JOURNAL_NOT_FOUND: no journal "missing" under <dir> (create it first, or check the id with list()) [<dir>/missing/journal.json]
`,
);

// ── show, head ──────────────────────────────────────────────────────────────────────────────────────────
golden(
  'show v1',
  () => ['show', at('v1'), '0'],
  0,
  ``,
  `{
  "input": {
    "q": "Weather in Paris?"
  },
  "model": "weather",
  "prev_hash": "sha256:<hash>",
  "prompt": "Weather in Paris?",
  "result": {
    "text": "Weather in Paris?"
  },
  "seq": 0,
  "step_hash": "sha256:<hash>",
  "step_id": "<uuid>",
  "tool_call": {
    "arguments": {
      "q": "Weather in Paris?"
    },
    "name": "weather"
  },
  "ts": "<time>",
  "v": 1
}
`,
);
golden(
  'show a run record',
  () => ['show', at('run'), '4'],
  0,
  ``,
  `{
  "error": {
    "message": "Weather in Paris?",
    "name": "Timeout"
  },
  "input": null,
  "kind": "tool.failed",
  "model": null,
  "prev_hash": "sha256:<hash>",
  "prompt": null,
  "ref": "<uuid>",
  "result": null,
  "root": "sha256:<hash>",
  "seed": "<hex64>",
  "seq": 4,
  "step_hash": "sha256:<hash>",
  "step_id": "<uuid>",
  "tool_call": {
    "arguments": {
      "city": "Weather in Paris?"
    },
    "call_id": "c1",
    "idempotency_key": "weather",
    "name": "weather",
    "summary": "Weather in Paris?"
  },
  "ts": "<time>",
  "v": 3
}
`,
);
golden(
  'show past the head',
  () => ['show', at('v1'), '7'],
  2,
  `error: USAGE: no step 7: the journal's last step is seq 1
Run \`stepchain show --help\` for usage.
`,
);
golden(
  'head',
  () => ['head', at('v1')],
  0,
  ``,
  `1 sha256:<hash>
`,
);
golden(
  'head of a run journal just created',
  () => ['head', at('new-run')],
  0,
  ``,
  `0 sha256:<hash>
`,
);

// ── verify, export ──────────────────────────────────────────────────────────────────────────────────────
golden(
  'verify v1',
  () => ['verify', at('v1')],
  0,
  `⚠ intact, NOT authenticated journal <dir>/v1: 2 steps, head sha256:<hash> (seq 1); nothing ties it to anyone (pin --head, or --checkpoint with --log-key)
  not authenticated: nothing ties this journal to anyone: pin a head obtained independently, or an earlier checkpoint with the log key (and witness policy) that signed it
`,
);
golden(
  'verify a run journal',
  () => ['verify', at('run')],
  0,
  `⚠ intact, NOT authenticated journal <dir>/run: 6 steps, head sha256:<hash> (seq 5); nothing ties it to anyone (pin --head, or --checkpoint with --log-key)
  run run (agent Weather in Paris?, env=Weather in Paris?), created <time>
  note     EFFECT_PENDING at seq 5: effect <uuid> (weather, started at seq 5, key weather-2) has no outcome: whether it happened is unknown
  not authenticated: nothing ties this journal to anyone: pin a head obtained independently, or an earlier checkpoint with the log key (and witness policy) that signed it
`,
);
golden(
  'verify a tampered journal',
  () => ['verify', at('tampered')],
  1,
  `✘ INVALID journal <dir>/tampered: 1 problem
  altered  step 1, step_hash (HASH_MISMATCH)
  HASH_MISMATCH 0000000000000000.jsonl:2, seq 1, step_hash
      stored step_hash sha256:<hash> does not match the record's content (sha256:<hash>): a covered field was altered after hashing, or step_hash itself was edited
`,
);
golden(
  'verify: wrong --head',
  () => ['verify', at('v1'), '--head', `sha256:${'0'.repeat(64)}`],
  1,
  `✘ INVALID journal <dir>/v1: 1 problem
  altered  step 1, step_hash (HEAD_MISMATCH)
  HEAD_MISMATCH 0000000000000000.jsonl:2, seq 1, step_hash
      expected head sha256:<hash>, found sha256:<hash>: the chain was truncated, extended or replaced
`,
);
golden(
  'keygen',
  () => ['keygen', '-o', at('alice.key')],
  0,
  `wrote <dir>/alice.key (private, mode 0600) and <dir>/alice.key.pub
key id sha256:<hash>
`,
);
golden(
  'export',
  () => ['export', at('v1'), '-o', at('v1.tar.gz'), '--sign', at('alice.key')],
  0,
  `wrote <dir>/v1.tar.gz (<n> bytes, gzip): steps 0..1, head sha256:<hash>
  manifest sha256:<hash>; signed by sha256:<hash>
`,
);
golden(
  'verify a receipt with its key',
  () => ['verify', at('v1.tar.gz'), '--pubkey', at('alice.key.pub')],
  0,
  `✔ authenticated receipt <dir>/v1.tar.gz: 2 steps, head sha256:<hash> (seq 1)
  pinned   the manifest is signed with the Ed25519 key you pinned (sha256:<hash>)
  scope: complete (steps 0..1); signed by: sha256:<hash>
  proves   Steps 0–1 of journal <uuid> (created <time>) form an unbroken hash chain from its genesis to head sha256:<hash>.
  proves   Every chain file and blob in the archive matches the digest, size and step count the manifest records, and the archive holds nothing else.
  proves   The manifest, and through its digests everything else, was signed with the Ed25519 key sha256:<hash> (the key you pinned).
  does not prove That the journal has no steps after seq 1: a receipt cannot rule out later steps; pin a head obtained independently to fix the end.
  does not prove That the recorded content and timestamps are true: the chain shows the steps were not altered after they were hashed, not that the agent or its clock told the truth.
`,
);
golden(
  'verify a receipt unpinned',
  () => ['verify', at('v1.tar.gz')],
  0,
  `⚠ intact, NOT authenticated receipt <dir>/v1.tar.gz: 2 steps, head sha256:<hash> (seq 1); nothing ties it to anyone (pin --pubkey, --head, or --log-key)
  scope: complete (steps 0..1); signed by: sha256:<hash>
  proves   Steps 0–1 of journal <uuid> (created <time>) form an unbroken hash chain from its genesis to head sha256:<hash>.
  proves   Every chain file and blob in the archive matches the digest, size and step count the manifest records, and the archive holds nothing else.
  proves   The manifest, and through its digests everything else, was signed with the Ed25519 key sha256:<hash>.
  does not prove That the journal has no steps after seq 1: a receipt cannot rule out later steps; pin a head obtained independently to fix the end.
  does not prove That key sha256:<hash> belongs to whom you think: no key was pinned; compare the key id with one you trust.
  does not prove That the recorded content and timestamps are true: the chain shows the steps were not altered after they were hashed, not that the agent or its clock told the truth.
  not authenticated: nothing ties this receipt to anyone: pin the signer's public key, a head obtained independently, or the log key (with the witness policy) that signed its checkpoint
`,
);

// ── diff ────────────────────────────────────────────────────────────────────────────────────────────────
golden(
  'diff: the same run',
  () => ['diff', at('v1'), at('v1.tar.gz')],
  0,
  `same: 2 steps match
`,
);
golden(
  'diff: the first divergence',
  () => ['diff', at('v1'), at('v1-changed')],
  1,
  `diverged at step 1: result "Weather in Paris?" → "Weather in Paris?!"
`,
);
golden(
  'diff --all',
  () => ['diff', at('v1'), at('v1-changed'), '--all'],
  1,
  `diverged at step 1: result "Weather in Paris?" → "Weather in Paris?!"
`,
  `compared 2 steps of a and 2 steps of b (fields: input, model, prompt, tool_call, result, meta)
step 1 changed:
  result "Weather in Paris?" → "Weather in Paris?!"
`,
);
golden(
  'diff --explain',
  () => ['diff', at('run'), at('run-changed'), '--all', '--explain'],
  1,
  `diverged at step 1: prompt[0].content "Weather in Paris?" → "Weather in Paris? please"; 1 more divergent step
`,
  `compared 6 steps of a and 6 steps of b (fields: kind, ref, input, model, prompt, tool_call, result, error, meta; ignoring /ref, /meta/duration_ms, /meta/latency_ms, /meta/time_to_first_token_ms, /meta/started_at, /meta/ended_at, /meta/timestamp, /result/response/timestamp, /result/response/id, /result/responseId)
step 1 changed:
  prompt[0].content "Weather in Paris?" → "Weather in Paris? please"
step 2 changed:
  prompt[0].content "Weather in Paris?" → "Weather in Paris? please"
seq 1↔1 model.started: request change (your code) at /prompt/0/content
seq 2↔2 model.completed: request change (your code) at /prompt/0/content
`,
);
golden(
  'diff: no such run',
  () => ['diff', at('v1'), at('missing')],
  2,
  `error: INPUT_UNREADABLE: cannot read <dir>/missing: no such file or directory
`,
);

// ── fork, copy, doctor ──────────────────────────────────────────────────────────────────────────────────
golden(
  'fork',
  () => ['fork', at('v1'), '--from-step', '0', at('v1-fork')],
  0,
  `forked <dir>/v1 at step 0 into <dir>/v1-fork (head sha256:<hash>)
`,
);
golden(
  'copy',
  () => ['copy', at('v1'), at('copies')],
  0,
  `created <dir>/copies: 2 steps copied, 0 already there; head sha256:<hash> (seq 1)
`,
);
golden(
  'doctor',
  () => ['doctor', at('v1')],
  0,
  `✔ healthy <dir>
  backend     file
  reachable   yes
  schema      directory: version stepchain-journal/v1; this stepchain speaks stepchain-journal/v1
  writable    yes
  journal     v1: head seq 1 sha256:<hash>
`,
);

// ── publish, disclose ───────────────────────────────────────────────────────────────────────────────────
golden(
  'publish without --opt-in',
  () => ['publish', at('v2'), '--policy', at('policy.json'), '-o', at('pub.tar.gz')],
  2,
  `error: USAGE: publishing shares a redacted copy of the journal; pass --opt-in to confirm (nothing was written)
Run \`stepchain publish --help\` for usage.
`,
);
golden(
  'publish v2',
  () => [
    'publish',
    at('v2'),
    '--policy',
    at('policy.json'),
    '--opt-in',
    '-o',
    at('pub.tar.gz'),
    '--secrets-out',
    at('secrets.json'),
  ],
  0,
  `wrote <dir>/pub.tar.gz (<n> bytes, gzip): 1 step, 2 redactions
  published against the original head sha256:<hash> (seq 0): verify it with --head; withheld values are salted digests only
  1 field is published as redacted views: verifiers show their text as NOT bound to the head (only the digest is); a path rule that withholds the whole field avoids that
  policy sha256:<hash>
  manifest sha256:<hash>; unsigned
  secrets in <dir>/secrets.json (mode 0600): keep it private; it can disclose every redacted value
`,
);
golden(
  'verify the publication against the original head',
  () => ['verify', at('pub.tar.gz'), '--head', headOf('v2')],
  0,
  `✔ authenticated receipt <dir>/pub.tar.gz: 1 step, head sha256:<hash> (seq 0)
  pinned   the chain ends at the head you pinned (sha256:<hash>)
  scope: complete (steps 0..0); signed by: nobody (unsigned)
  NOT BOUND this receipt shows 1 value whose text is NOT bound to the head: anyone holding the receipt can rewrite it and it still verifies. Read it as the publisher's word, not as proven:
      not bound seq 0 /input (redacted view: the text around its markers)
  proves   Step 0 of journal <uuid> (created <time>) forms an unbroken hash chain from its genesis to head sha256:<hash>.
  proves   Every chain file and blob in the archive matches the digest, size and step count the manifest records, and the archive holds nothing else.
  proves   The receipt ends at the head you pinned (sha256:<hash>).
  proves   The steps belong to run <uuid>: the run's identity is in the genesis, which every step hash depends on.
  proves   The published chain has the original step hashes: every step hash, the head sha256:<hash> among them, is the one the journal holds, recomputed here from the disclosed values and the digests of the withheld slots and of the redacted views (a view's digest is bound, its text is not).
  proves   Every slot published with its salt holds the original value at its place, bound to its step hash by that salt. This does not cover the 1 redacted view, whose text is not bound to the head.
  proves   Every redaction marker is declared in the manifest, and every declared redaction (2) has its marker: nothing was withheld or left in silently.
  proves   Nothing about a withheld value can be tested by guessing: its digest is salted with 128 secret bits that never leave the journal.
  does not prove Anything about steps after seq 0, if the journal continued past the head you pinned.
  does not prove Who produced the receipt: it is unsigned, so anyone holding the journal, or inventing one, could have made it.
  does not prove That the recorded content and timestamps are true: the chain shows the steps were not altered after they were hashed, not that the agent or its clock told the truth.
  does not prove What a withheld slot holds, its type or its size, or whether a withheld meta was present at all; an opening from the journal holder reveals one slot.
  does not prove That the text of the 1 redacted view (seq 0 /input) is the original: it is NOT bound to the head — anyone holding this receipt can rewrite it and it still verifies. Only the slot's digest is bound; an opening of the slot from the journal binds its text.
  does not prove That the policy removed every secret: it proves only that what was redacted is declared.
`,
);
golden(
  'disclose --hash-only on a v2 publication: why there is nothing to open',
  () => ['disclose', at('pub.tar.gz'), '--secrets', at('secrets.json'), '--hash-only'],
  2,
  `error: NOT_REDACTED: <dir>/pub.tar.gz is published against its original head (a stepchain/v2 journal, spec/REDACTION.md §12): its head sha256:<hash> (seq 0) is the original head, so there is no anchor commitment for a hash disclosure to open (whoever holds the original head checks it with \`stepchain verify <dir>/pub.tar.gz --head sha256:<hash>\`; hash disclosures (§8.5) are for stepchain/v1 publications, and a withheld value of this receipt opens from the journal (§12.6))
`,
);
golden(
  'disclose a value of the v2 publication',
  () => [
    'disclose',
    at('pub.tar.gz'),
    '--secrets',
    at('secrets.json'),
    '--seq',
    '0',
    '--path',
    '/input/api_key',
    '-o',
    at('key.proof'),
  ],
  0,
  `wrote <dir>/key.proof: a proof of the value at seq 0, /input/api_key (rule keys); it reveals that value to whoever receives it
`,
);
golden(
  'disclose --check',
  () => ['disclose', at('pub.tar.gz'), '--check', at('key.proof')],
  0,
  `✔ disclosure holds: seq 0, /input/api_key (rule keys) = "sk-live-0123456789abcdef"
  proves The value redacted at seq 0, /input/api_key (rule "keys") of the published receipt sha256:<hash> is the disclosed value: it matches the marker's salted SHA-256 commitment.
  proves The marker stands in a redacted view, which is NOT bound to the original head: anyone holding the receipt could have written the marker, so this ties the value to this receipt only. An opening of the slot (stepchain-opening/v1) binds it to the head.
`,
);
golden(
  'publish v1',
  () => [
    'publish',
    at('v1-changed'),
    '--policy',
    at('policy-v1.json'),
    '--opt-in',
    '-o',
    at('pub1.tar.gz'),
    '--secrets-out',
    at('secrets1.json'),
  ],
  0,
  `wrote <dir>/pub1.tar.gz (<n> bytes, gzip): 2 steps, 1 redaction
  original head sha256:<hash> (seq 1): in the public receipt only as a salted commitment; step 0 published unchanged
  policy sha256:<hash>
  manifest sha256:<hash>; unsigned
  secrets in <dir>/secrets1.json (mode 0600): keep it private; it can disclose every redacted value
`,
);
golden(
  'disclose --hash-only on a v1 publication',
  () => ['disclose', at('pub1.tar.gz'), '--secrets', at('secrets1.json'), '--hash-only', '-o', at('head.proof')],
  0,
  `wrote <dir>/head.proof: the original hash of step 1 with its salt; its holder can test guesses of values redacted up to that step
`,
);
golden(
  'disclose --check a hash disclosure',
  () => ['disclose', at('pub1.tar.gz'), '--check', at('head.proof')],
  0,
  `✔ hash disclosure holds: the anchor commits to sha256:<hash> as the original hash of step 1 (the original head)
  proves The anchor of the published receipt sha256:<hash> commits to sha256:<hash> as the original hash of step 1, the original head (the publisher's unsigned claim): compare it with a head obtained independently.
`,
);
golden(
  'disclose --check a proof of another receipt',
  () => ['disclose', at('pub1.tar.gz'), '--check', at('key.proof')],
  1,
  `✘ disclosure does NOT hold for seq 0, /input/api_key
  MANIFEST_MISMATCH the proof is for the receipt with manifest sha256:<hash>; this receipt's manifest is sha256:<hash>
`,
);

// ── checkpoint, prove, witness, page ────────────────────────────────────────────────────────────────────
golden(
  'checkpoint',
  () => ['checkpoint', at('v1'), '--sign', at('alice.key'), '--authority', 'log.example', '-o', at('v1.checkpoint')],
  0,
  `wrote <dir>/v1.checkpoint: log.example/v1/<hex64> at size 2, root <root>
  log key (pin it with --log-key): log.example/v1/<hex64>+<keyhash>+<key>
`,
);
golden(
  'prove',
  () => ['prove', at('v1'), '--checkpoint', at('v1.checkpoint'), '--from', '0', '--to', '1', '-o', at('v1.proof')],
  0,
  `wrote <dir>/v1.proof: inclusion proof, 0 hashes
`,
);
golden(
  'verify --proof',
  () => ['verify', '--proof', at('v1.proof'), '--log-key', logKey()],
  0,
  `✔ authenticated proof <dir>/v1.proof: steps 0..1 are in log.example/v1/<hex64> at size 2
`,
);
golden(
  'verify --proof without --log-key',
  () => ['verify', '--proof', at('v1.proof')],
  2,
  `error: USAGE: --proof needs --log-key: a proof file is checked against the log key you trust
Run \`stepchain verify --help\` for usage.
`,
);
golden(
  'verify --checkpoint: the journal extends it',
  () => ['verify', at('v1'), '--checkpoint', at('v1.checkpoint'), '--log-key', logKey()],
  0,
  `✔ authenticated journal <dir>/v1: 2 steps, head sha256:<hash> (seq 1)
  pinned   steps 0..1 have the root of the earlier checkpoint you pinned (log.example/v1/<hex64>, size 2), signed by the log key you pinned
  proves   it extends the checkpoint of size 2 (<dir>/v1.checkpoint)
`,
);
golden(
  'witness keygen',
  () => ['keygen', '-o', at('w1.key')],
  0,
  `wrote <dir>/w1.key (private, mode 0600) and <dir>/w1.key.pub
key id sha256:<hash>
`,
);
golden(
  'witness: cosign the first checkpoint of an origin',
  () => [
    'witness',
    at('v1.checkpoint'),
    '--key',
    at('w1.key'),
    '--name',
    'witness.example/w1',
    '--state',
    at('w1-state'),
    '--log-key',
    logKey(),
    '-o',
    at('v1.cosigned'),
  ],
  0,
  `cosigned log.example/v1/<hex64> at size 2 (first checkpoint seen for this origin)
`,
);
golden(
  'witness: a log key whose id does not match its key',
  () => [
    'witness',
    at('v1.checkpoint'),
    '--key',
    at('w1.key'),
    '--name',
    'witness.example/w1',
    '--state',
    at('w1-state'),
    '--log-key',
    logKey().replace(/\+[0-9a-f]{8}\+/, '+00000000+'),
  ],
  2,
  `error: USAGE: --log-key: KEY_INVALID: the key id 00000000 is not the id of this name and key (<keyhash>)
Run \`stepchain witness --help\` for usage.
`,
);
golden(
  'witness: its verifier key',
  () => ['witness', '--key', at('alice.key'), '--name', 'witness.example/w1'],
  0,
  ``,
  `witness.example/w1+<keyhash>+<key>
`,
);
golden(
  'page',
  () => ['page', '-o', at('verify.html')],
  0,
  `wrote <dir>/verify.html (<n> bytes): the stepchain <version> offline verification page
  sha256 <hex64>
  open it in a browser (it works from disk and makes no network request) and drop a receipt on it
`,
);

// ── effect, continuation, runs ──────────────────────────────────────────────────────────────────────────
golden(
  'effect begin',
  () => [
    'effect',
    'begin',
    at('new-run'),
    '--tool',
    'send_email',
    '--args',
    '{"to":"a@b.example"}',
    '--idempotency-key',
    'mail-1',
    '--id',
    'e1',
  ],
  0,
  ``,
  `e1
`,
);
golden(
  'effect list: one pending',
  () => ['effect', 'list', at('new-run')],
  0,
  `1 effect started with no recorded outcome: the tool may or may not have run. Check with its provider (idempotency key) before running it again.
`,
  `   1  e1  send_email  PENDING — outcome unknown  key mail-1
      args: {"to":"a@b.example"}
`,
);
golden(
  'continuation with a pending effect',
  () => ['continuation', at('new-run')],
  0,
  `the run's head is seq 1; records after 0 are in flight or wait for a tool's outcome
pending effect e1 (send_email, seq 1): outcome unknown
`,
  `0
`,
);
golden(
  'effect end',
  () => ['effect', 'end', at('new-run'), 'e1', '--result', '{"sent":true}'],
  0,
  `effect e1 completed (seq 2)
`,
);
golden(
  'effect end twice',
  () => ['effect', 'end', at('new-run'), 'e1', '--result', '{"sent":true}'],
  2,
  `error: EFFECT_ALREADY_ENDED: tool effect "e1" of run new-run already has its outcome (completed at seq 2) (an outcome is recorded once; read it with run.effects())
`,
);
golden(
  'effect list of a run journal',
  () => ['effect', 'list', at('run')],
  0,
  `1 effect started with no recorded outcome: the tool may or may not have run. Check with its provider (idempotency key) before running it again.
`,
  `   3  <uuid>  weather  failed  key weather  <n> ms
      args: {"city":"Weather in Paris?"}
      summary: Weather in Paris?
      error: Timeout: Weather in Paris?
   5  <uuid>  weather  PENDING — outcome unknown  key weather-2
      args: {"city":"Weather in Paris?"}
`,
);
golden(
  'effect list on a v1 journal',
  () => ['effect', 'list', at('v1')],
  2,
  `error: NOT_A_RUN: journal "v1" is a stepchain/v1 journal, not a run (stepchain/v2 or stepchain/v3) (create run journals with startRun (or stepchain init --run))
`,
);
golden(
  'runs',
  () => ['runs', dir],
  0,
  ``,
  `<time>  v2  running
<time>  run  interrupted, 1 pending  agent Weather in Paris?, env=Weather in Paris?
<time>  run-changed  interrupted, 1 pending  agent Weather in Paris?, env=Weather in Paris?
<time>  new  running
<time>  new-run  running  agent billing, env=prod
`,
);
golden(
  'runs --agent nobody',
  () => ['runs', dir, '--agent', 'nobody'],
  0,
  `no matching runs
`,
);

// ── usage ───────────────────────────────────────────────────────────────────────────────────────────────
golden(
  'a mistyped command',
  () => ['lgo', at('v1')],
  2,
  `error: USAGE: unknown command "lgo"; did you mean "log"? (see stepchain --help)
Run \`stepchain --help\` for usage.
`,
);
golden(
  'a mistyped option',
  () => ['log', at('v1'), '--form', '1'],
  2,
  `error: USAGE: Unknown option '--form'; did you mean --from?
Run \`stepchain log --help\` for usage.
`,
);

function headOf(journal: string): string {
  return ran.get(`head of ${journal}`)?.stdout.trim().split(' ')[1] ?? 'sha256:?';
}

describe('golden human output of every verb', () => {
  // The cases run in one process of the built CLI (test/helpers/cli-batch.ts cliServer: each call runs the
  // built entry afresh, stdout and stderr pipes captured byte for byte); the fork and head below, and the
  // other CLI test files, start it for real.
  const server = cliServer();
  beforeAll(async () => {
    await buildJournals(dir, PLAIN);
    writeFileSync(
      at('step.json'),
      JSON.stringify({ input: { q: 'hi' }, model: 'gpt-4o', prompt: 'Say hi', tool_call: null, result: 'hi' }),
    );
    writeFileSync(at('bad.json'), '{"input": 1,\n "model": }\n');
    writeFileSync(
      at('policy-v1.json'),
      JSON.stringify({ rules: [{ id: 'answers', paths: ['/result'], seq: { from: 1 } }] }),
    );
    // A copy of v1 with one byte of a step changed: its chain no longer holds.
    await cli(['fork', at('v1'), '--from-step', '1', at('tampered')], dir);
    const buckets = join(at('tampered'), 'buckets');
    for (const f of readdirSync(buckets)) {
      const p = join(buckets, f);
      writeFileSync(p, readFileSync(p, 'utf8').replace('"result":"Weather in Paris?"', '"result":"Weather in Lyon?"'));
    }
    const head = await cli(['head', at('v2')], dir);
    ran.set('head of v2', { code: head.code, stdout: head.stdout, stderr: head.stderr });
    for (const [name, args] of CASES) {
      const r = asRun(await server.run({ args: args(), cwd: dir }));
      raw.set(name, r);
      ran.set(name, { code: r.code, stdout: normalise(r.stdout), stderr: normalise(r.stderr) });
    }
  }, 900_000);

  test.each(CASES.map(([name, , g]) => [name, g] as const))('%s', (name, g) => {
    const got = ran.get(name)!;
    if (process.env.GOLDEN_PRINT) console.log(`@@@ ${name}\n${JSON.stringify(got)}`);
    expect(got).toEqual(g);
  });
});

/**
 * The verdict `log` prints on a valid chain (issue 37: it used to follow "✔ chain verified" with "The chain
 * does NOT hold" on every journal without pending effects, and exit 0).
 */
describe('log on a valid chain says it holds, and only that', () => {
  test.each(['log v1', 'log v2 step journal', 'log run journal', 'log LangGraph thread'])('%s', (name) => {
    const r = ran.get(name)!;
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^✔ chain verified: \d+ steps?, head sha256:<hash>$/m);
    expect(r.stderr).not.toMatch(/NOT hold|INVALID|cannot be trusted/);
  });

  test("a run journal's records: provider/model, one line each, a failed tool's error, no null lines", () => {
    const r = ran.get('log run journal')!;
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(6);
    expect(r.stdout).toContain('model.started  mock/weather  prompt:');
    expect(r.stdout).toContain('tool.failed  weather  error Timeout: Weather in Paris?');
    expect(r.stdout).not.toMatch(/null|modelId|\{"provider"/);
  });
});

/**
 * `npm pack` builds first (prepack), so the package always holds the CLI and the library (its file list:
 * test/docs/links.test.ts, which reads it once for every check of the package).
 */
describe('the package', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));

  test('prepack runs the build', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.prepack).toBe('npm run build');
  });
});
