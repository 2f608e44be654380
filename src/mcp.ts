/**
 * `stepchain/mcp`: the MCP journaling proxy (spec/MCP.md) as a library, for a Node host that launches MCP
 * servers itself: `startProxy` (stdio: a server command, the client's streams), `startHttpProxy` (in front
 * of a Streamable HTTP server), and the pieces they share — the per-message `Boundary`, the
 * `SessionRecorder` that writes a session's run, the tool policy. Node only. It needs no MCP SDK: the proxy
 * forwards the bytes it reads and parses a copy only to decide what to record.
 */
export * from './mcp/index.js';
