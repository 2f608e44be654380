/** The MCP journaling proxy (spec/MCP.md): every tool call a Model Context Protocol client makes, on the record. */
export { startProxy, outcomeOf, MCP_PROXY_ERRORS, type ProxyOptions, type ProxyExit, type RunningProxy } from './proxy.js';
export { commandApprover, listVerdict, type ToolPolicy, type ToolCallRequest, type Decision } from './policy.js';
export { SessionRecorder, sessionRunId, type SessionOptions } from './session.js';
