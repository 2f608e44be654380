/** The MCP journaling proxy (spec/MCP.md): every tool call a Model Context Protocol client makes, on the record. */
export { startProxy, type ProxyOptions, type ProxyExit, type RunningProxy } from './proxy.js';
export { Boundary, outcomeOf, MCP_PROXY_ERRORS, type Admission, type Refusal } from './boundary.js';
export { commandApprover, listVerdict, type ToolPolicy, type ToolCallRequest, type Decision } from './policy.js';
export { SessionRecorder, sessionRunId, type SessionOptions } from './session.js';
export { startHttpProxy, type HttpProxyOptions, type RunningHttpProxy } from './http.js';
