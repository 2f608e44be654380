/**
 * `stepchain/langchain`: a LangChain.js callback handler that records model requests and tool calls as
 * stepchain runs (spec/LANGCHAIN.md). Needs the optional peer dependency `@langchain/core`; the core
 * entries (`stepchain`, `stepchain/verify`) never import it.
 */
export { StepchainCallbackHandler, type StepchainCallbackOptions } from './handler.js';
export { messageValue, type MessageValue } from './values.js';
export { resumeBaseMessages } from './resume.js';
