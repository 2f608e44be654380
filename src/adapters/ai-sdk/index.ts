/**
 * `stepchain/ai-sdk`: record Vercel AI SDK (`ai` 6) runs into a stepchain run — a language-model middleware
 * for every model call, streaming included, and a tool-set wrapper for every tool execution (docs/ai-sdk.md
 * "Recording the Vercel AI SDK"; the records: spec/FORMAT.md, the agent runtime). Imports only the public
 * stepchain API; `ai` is an optional peer dependency, needed only by whoever imports this entry.
 */
export { stepchainMiddleware } from './middleware.js';
export { recordTools, type RecordToolsOptions } from './tools.js';
export { resumeMessages } from './resume.js';
export { replayModel, replayTools, type ReplayModelOptions } from './replay.js';
export type { AdapterRun } from './run.js';
