/** What the CLI needs to read the pins of spec/TIME.md, in one module: the TSA certificate parser and key ids. */
export { parseTsaCertificate } from './tsp.js';
export { keyIdOf } from '../receipt/keys.js';
