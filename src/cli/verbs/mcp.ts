/**
 * `stepchain mcp <journal or store> -- <server command…>`: the MCP journaling proxy (spec/MCP.md) on the
 * command line. Standard input and output are the client's; standard error carries the proxy's notes and
 * the server's own. The proxy exits with the server's exit status.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { FileStore } from '../../store/index.js';
import type { FsyncMode, KeyInput, Store } from '../../index.js';
import { backendOf } from '../../store/scheme.js';
import { commandApprover, startHttpProxy, startProxy, type ToolPolicy } from '../../mcp.js';
import { formatNamed, NEW_RUN_FORMAT, shortName, type RunFormat } from '../../record/formats.js';
import { intArg } from '../args.js';
import { approverPins } from './approve-lines.js';
import { UsageError, type Context, type Verb } from '../cli.js';
import { labelsOf } from '../identity.js';
import { locate } from '../location.js';

interface Where {
  store: Store;
  runId: string | undefined;
  display: string;
  /** A run's location in this store, as stepchain approve takes it (file stores). */
  locate?: (runId: string) => string;
  close(): Promise<void>;
}

/** An approver key file: a PKCS#8 PEM text, else its bytes (a 32-byte Ed25519 seed). */
function readApproverKey(file: string): KeyInput {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new UsageError(
      `--approver-key ${JSON.stringify(file)} cannot be read: ${e instanceof Error ? e.message : String(e)}`,
      'mcp',
    );
  }
  const text = bytes.toString('utf8');
  return text.trimStart().startsWith('-----BEGIN') ? { pem: text } : new Uint8Array(bytes);
}

/**
 * A path that does not exist: a new run journal there. A directory that is not a journal: a store, one run per
 * session. A sqlite: or postgres:// location: its ?journal=, or one run per session in it.
 */
async function sessionLocation(text: string, fsync: FsyncMode, manySessions: boolean): Promise<Where> {
  // A database location (sqlite:, postgres://) names its journal with ?journal= or is a store; an unknown
  // scheme is SCHEME_UNKNOWN here as everywhere (never a relative directory).
  if (backendOf(text) !== 'file') {
    const at = await locate(text, { journalOptional: true });
    return { store: at.store, runId: at.id, display: at.display, close: () => at.close() };
  }
  const full = resolve(text);
  // An HTTP proxy serves many sessions, each a run of its own: there a new path becomes a store.
  if (!existsSync(full) && manySessions) mkdirSync(full, { recursive: true });
  if (!existsSync(full))
    return {
      store: new FileStore(dirname(full), { fsync }),
      runId: basename(full),
      display: full,
      locate: (id) => join(dirname(full), id),
      close: async () => {},
    };
  if (!statSync(full).isDirectory())
    throw new UsageError(
      `${full} is a file; name a path that does not exist (a new run journal) or a store directory`,
      'mcp',
    );
  if (existsSync(join(full, 'journal.json'))) {
    throw new UsageError(
      `${full} is a journal already; each session is a run of its own: name a path that does not exist, or the directory holding your journals (a store)`,
      'mcp',
    );
  }
  return {
    store: new FileStore(full, { fsync }),
    runId: undefined,
    display: full,
    locate: (id) => join(full, id),
    close: async () => {},
  };
}

const list = (v: unknown): string[] | undefined =>
  v === undefined
    ? undefined
    : (v as string[])
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter((s) => s !== '');

/**
 * The tool policy the options ask for: allowed and denied tools, the --approve-with command and the
 * tools it approves, and (v3 runs only: the caller has checked) the approvers pinned, the key that signs
 * the command's verdict and how long a call waits for approval.
 */
async function toolPolicyOf(values: Context['values']): Promise<ToolPolicy> {
  const policy: ToolPolicy = {};
  const allow = list(values.allow);
  const deny = list(values.deny);
  if (allow !== undefined) policy.allow = allow;
  if (deny !== undefined) policy.deny = deny;
  if (typeof values['approve-with'] === 'string') policy.approve = commandApprover(values['approve-with']);
  const approveTools = list(values['approve-tools']);
  if (approveTools !== undefined) policy.approveTools = approveTools;
  if (typeof values['approver-key'] === 'string') {
    if (policy.approve === undefined)
      throw new UsageError(
        '--approver-key signs the verdict of the --approve-with command: give the command too',
        'mcp',
      );
    policy.approverKey = {
      key: readApproverKey(values['approver-key']),
      ...(typeof values['approver-name'] === 'string' ? { name: values['approver-name'] } : {}),
    };
  }
  const approverFiles = (values.approver as string[] | undefined) ?? [];
  if (approverFiles.length > 0) {
    const { keyIdOf } = await import('../../receipt/keys.js');
    policy.approvers = new Set((await approverPins(approverFiles)).map((p) => keyIdOf(p.key)));
  }
  if (values['approval-timeout'] !== undefined)
    policy.approvalTimeoutMs = intArg(values['approval-timeout'], '--approval-timeout', 'mcp') * 1000;
  return policy;
}

/** mcp --upstream: the proxy in front of a remote server, listening at 127.0.0.1 until a signal ends it. */
async function serveUpstream(
  upstream: string,
  port: Context['values'][string],
  withCommand: boolean,
  common: Omit<Parameters<typeof startHttpProxy>[0], 'upstream' | 'port'>,
  where: Where,
  log: (line: string) => void,
): Promise<number> {
  if (withCommand) throw new UsageError('give a server command (after --) or --upstream URL, not both', 'mcp');
  try {
    new URL(upstream);
  } catch {
    throw new UsageError(`--upstream ${JSON.stringify(upstream)} is not a URL`, 'mcp');
  }
  const proxy = await startHttpProxy({
    ...common,
    upstream,
    ...(port !== undefined ? { port: intArg(port, '--port', 'mcp') } : {}),
  });
  log(`listening: give the client ${proxy.url}`);
  await new Promise<void>((resolve) => {
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(s, () => resolve());
  });
  await proxy.close();
  await where.close();
  return 0;
}

export const mcpVerb: Verb = {
  name: 'mcp',
  summary: 'run an MCP server behind a proxy that records every tool call in a run journal',
  usage:
    '<journal or store> [--label k=v]… [--allow tool]… [--deny tool]… [--approve-with cmd] [--format v2|v3] [--fsync mode] (-- <server command…> | --upstream URL [--port N])',
  description: [
    'An MCP client launches this in place of its server (stdio). The proxy launches the server, forwards every message both',
    'ways byte for byte, and records each tools/call as a tool effect (spec/MCP.md): its intent durable before the call is',
    'forwarded, then its result; isError results and JSON-RPC errors as failures. A call whose outcome never arrives stays',
    'a pending effect. A path that does not exist becomes a run journal; an existing directory of journals (or a sqlite: or Postgres',
    'location without ?journal=) gets one run per session, named on standard error. A call whose intent cannot be recorded,',
    'or that the policy refuses, is answered with a JSON-RPC error and never reaches the server.',
    'With --upstream URL instead of a command: the same in front of a Streamable HTTP server, listening on 127.0.0.1',
    '(--port, default a free one) until SIGINT or SIGTERM; the URL to give the client is printed on standard error.',
    'With --format v3, a call that needs approval (--approve-tools, or every call with --approve-with) is recorded as an',
    "approval request and waits for an approver's signed decision (stepchain approve, from any process); only a grant lets it",
    'through, its effect naming the request (spec/MCP.md §5.1). Pin who may approve with --approver KEY.pub.',
  ].join('\n'),
  options: {
    label: {
      type: 'string',
      arg: 'k=v',
      multiple: true,
      description: 'a label on the run (repeatable); mcp.client, mcp.server… are set from the session',
    },
    agent: { type: 'string', arg: 'A', description: "the run's agent (default: the client's name from initialize)" },
    conversation: { type: 'string', arg: 'C', description: 'the conversation the run belongs to' },
    allow: {
      type: 'string',
      arg: 'tool',
      multiple: true,
      description: 'only these tools may be called (repeatable, or comma-separated)',
    },
    deny: {
      type: 'string',
      arg: 'tool',
      multiple: true,
      description: 'these tools may never be called (repeatable, or comma-separated)',
    },
    'approve-with': {
      type: 'string',
      arg: 'cmd',
      description: 'a shell command run per call with the call as JSON on stdin: exit 0 approves, anything else denies',
    },
    'approve-tools': {
      type: 'string',
      arg: 'tool',
      multiple: true,
      description:
        "only these tools' calls need an approval (repeatable, or comma-separated); with --format v3 and no --approve-with, an approver decides with stepchain approve",
    },
    'approver-key': {
      type: 'string',
      arg: 'FILE',
      description:
        "with --format v3 and --approve-with: the Ed25519 key (PKCS#8 PEM, or a 32-byte seed) that signs the command's verdict",
    },
    approver: {
      type: 'string',
      arg: 'KEY',
      multiple: true,
      description:
        "with --format v3: an approver's public key file (keyfile.pub); repeat for each. Only their grants (and --approver-key's) let a call through",
    },
    'approver-name': { type: 'string', arg: 'NAME', description: "the name recorded with --approver-key's signatures" },
    'approval-timeout': {
      type: 'string',
      arg: 'S',
      description:
        "with --format v3: how long a call waits for its decision, in seconds (its request's expiry; default 300)",
    },
    format: {
      type: 'string',
      arg: 'v2|v3',
      description:
        "the run journal's format (default v3, which records approvals as approval records, spec/MCP.md §5.1; or v2)",
    },
    fsync: {
      type: 'string',
      arg: 'always|batch|none',
      description:
        'when a journal directory is synced to disk (default always: an intent is on disk before its call is forwarded)',
    },
    upstream: {
      type: 'string',
      arg: 'URL',
      description: 'proxy a Streamable HTTP MCP server at URL instead of launching a command',
    },
    port: {
      type: 'string',
      arg: 'N',
      description: 'with --upstream: the port to listen on at 127.0.0.1 (default: a free port)',
    },
    'blob-threshold': {
      type: 'string',
      arg: 'N',
      description:
        'store a record field of N canonical bytes or more (a large result, an image) as a blob (default 64 KiB)',
    },
  },
  args: { min: 1, max: 10_000, names: ['journal or store', 'server command'] },
  examples: [
    [
      'stepchain mcp runs/session-1 -- npx -y @modelcontextprotocol/server-filesystem ~/notes',
      'record one session in a new run journal',
    ],
    [
      'stepchain mcp runs/ --label user=alice --deny delete_file -- node server.js',
      'one run per session in the store runs/, a tool denied',
    ],
    [
      'stepchain mcp runs/ --upstream https://mcp.example.com/mcp --port 8931',
      'a remote server, reached at http://127.0.0.1:8931/mcp',
    ],
    [
      'stepchain mcp runs/ --format v3 --approve-tools send_email --approver alice.key.pub -- node server.js',
      "send_email waits for alice's signed approval",
    ],
  ],
  async run({ values, positionals }) {
    const fsync = (values.fsync ?? 'always') as FsyncMode;
    if (fsync !== 'always' && fsync !== 'batch' && fsync !== 'none')
      throw new UsageError(`--fsync must be always, batch or none (got ${JSON.stringify(values.fsync)})`, 'mcp');
    const labels = labelsOf(values.label, 'mcp');
    const formatArg = values.format ?? shortName(NEW_RUN_FORMAT);
    const chosen = formatNamed(formatArg);
    if (!chosen?.capabilities.runRecords)
      throw new UsageError(`--format must be v2 or v3 (got ${JSON.stringify(formatArg)})`, 'mcp');
    const where = await sessionLocation(positionals[0]!, fsync, typeof values.upstream === 'string');
    const v3Only = (['approve-tools', 'approver', 'approver-key', 'approver-name', 'approval-timeout'] as const).filter(
      (o) => values[o] !== undefined,
    );
    if (!chosen.capabilities.approvals && v3Only.length > 0) {
      throw new UsageError(
        `--${v3Only[0]} needs approval records, which need --format v3 (on a v2 run an approval is the --approve-with command's exit status, recorded as tool.updated)`,
        'mcp',
      );
    }
    const policy = await toolPolicyOf(values);
    const log = (line: string): void => {
      process.stderr.write(`stepchain mcp: ${line.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '?')}\n`);
    };
    if (where.runId === undefined) log(`recording into the store ${where.display}, one run per session`);
    const common = {
      store: where.store,
      ...(where.runId === undefined ? {} : { runId: where.runId }),
      ...(labels === undefined ? {} : { labels }),
      ...(typeof values.agent === 'string' ? { agent: values.agent } : {}),
      ...(typeof values.conversation === 'string' ? { conversationId: values.conversation } : {}),
      ...(values['blob-threshold'] !== undefined
        ? { blobThreshold: intArg(values['blob-threshold'], '--blob-threshold', 'mcp') }
        : {}),
      format: chosen.format as RunFormat,
      policy,
      log,
      ...(where.locate === undefined ? {} : { locate: where.locate }),
    };
    if (typeof values.upstream === 'string')
      return serveUpstream(values.upstream, values.port, positionals.length > 1, common, where, log);
    if (positionals.length < 2)
      throw new UsageError(
        'missing the server command: stepchain mcp <journal or store> -- <command…> (or --upstream URL)',
        'mcp',
      );
    const proxy = startProxy({
      ...common,
      command: positionals[1]!,
      args: positionals.slice(2),
      input: process.stdin,
      output: process.stdout,
    });
    const pass = (signal: NodeJS.Signals) => () => proxy.kill(signal);
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, pass(s));
    const exit = await proxy.done;
    await where.close();
    // The client reads our stdin to its end only if we stop reading it; a proxy whose server is gone exits.
    process.stdin.destroy();
    if (exit.error !== undefined) return 127;
    // As a shell reports a child killed by a signal: 128 + its number.
    return exit.code ?? 128 + (exit.signal === null ? 0 : (constants.signals[exit.signal] ?? 0));
  },
};
