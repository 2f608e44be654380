/**
 * Loads the agent verbs' bundle (`append`, `effect`: agent-main.ts) with V8's code cache (issue 45, CLI
 * start-up). An agent runs these once per step or per tool call, and compiling the same 420 KiB of code at
 * every start is a large part of what such a process does beyond bare Node. Node 20 caches no compiled
 * code for ES modules (`module.enableCompileCache()` is Node 22), but `vm.Script` takes V8's cached data: so
 * scripts/build-cli.mjs builds these verbs as one CommonJS file, dist/cli/agent/main.cjs, runs it once on a
 * scratch journal and keeps what V8 compiled, functions compiled on first call included, beside it
 * (main.cjs.cache). Measured (bench/cli-startup.mjs): about 10% less CPU per start than the same bundle as
 * an ES module.
 *
 * V8 uses the cache only for the same source, V8 version and flags; otherwise it says so
 * (`cachedDataRejected`) and compiles the source as if there were none, so a missing, stale or foreign
 * cache costs its read and nothing else. With --debug the bundle is loaded by Node's own `require`, whose
 * stack traces follow the source map to src/ (a vm.Script's do not).
 */
import type { Script } from 'node:vm';

// Node's modules asked for at run time (Node >= 20.16; package.json's engines ask for 20.19), not imported:
// an ES module's `import … from 'node:fs'` builds a module facade that reads every export of node:fs,
// its lazy ReadStream and WriteStream among them, which loads the whole streams machinery (measured: these
// five imports cost a bare ES module 2% more CPU than these five lines).
const { readFileSync } = process.getBuiltinModule('node:fs');
const { createRequire } = process.getBuiltinModule('node:module');
const { dirname } = process.getBuiltinModule('node:path');
const { fileURLToPath } = process.getBuiltinModule('node:url');
const vm = process.getBuiltinModule('node:vm');

export interface AgentModule {
  runAgent(argv: readonly string[], io?: ReturnType<AgentModule['descriptorOutputs']>): Promise<number>;
  /** stdout and stderr on other descriptors (scripts/agent-cache.mjs: the null device's). */
  descriptorOutputs(out?: number, err?: number): { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream };
}

export const AGENT_BUNDLE = fileURLToPath(new URL('./agent/main.cjs', import.meta.url));
export const AGENT_CACHE = `${AGENT_BUNDLE}.cache`;

export interface LoadedAgent {
  module: AgentModule;
  /** Whether V8 took the code cache: false when there was none, or it did not fit (then the source was compiled). */
  cached: boolean;
  /** The compiled script, for producing a cache (scripts/build-cli.mjs). */
  script: Script | null;
}

export function loadAgent(options: { debug?: boolean } = {}): LoadedAgent {
  const require = createRequire(AGENT_BUNDLE);
  if (options.debug) return { module: require(AGENT_BUNDLE) as AgentModule, cached: false, script: null };
  // The bundle is ASCII and a little over 1 MB (scripts/build-cli.mjs): read as latin1, Node hands it to V8 as
  // an external one-byte string, outside V8's heap.
  const source = readFileSync(AGENT_BUNDLE, 'latin1');
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(AGENT_CACHE);
  } catch {
    cachedData = undefined;
  }
  // The file holds CommonJS's wrapper itself (scripts/build-cli.mjs, AGENT_WRAP): compiled as it is read, the
  // script's value is the wrapper function, with no second copy of the source made by wrapping it here.
  const script = new vm.Script(source, {
    filename: AGENT_BUNDLE,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: { exports: object },
    filename: string,
    dir: string,
  ) => void;
  const module = { exports: {} };
  wrapper.call(module.exports, module.exports, require, module, AGENT_BUNDLE, dirname(AGENT_BUNDLE));
  return {
    module: module.exports as AgentModule,
    cached: cachedData !== undefined && !script.cachedDataRejected,
    script,
  };
}
