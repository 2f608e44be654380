/** Every verb, in the order `stepchain --help` lists them. */
import type { Verb } from '../cli.js';
import { diffVerb } from './diff.js';
import { appendVerb, forkVerb, headVerb, initVerb, logVerb, showVerb } from './journal.js';
import { discloseVerb, publishVerb } from './publish.js';
import { pageVerb } from './page.js';
import { exportVerb, keygenVerb, verifyVerb } from './receipt.js';
import { copyVerb, doctorVerb } from './store.js';
import { checkpointVerb, proveVerb } from './proofs.js';
import { witnessVerb } from './witness.js';

export const VERBS: readonly Verb[] = [
  initVerb, appendVerb, logVerb, showVerb, headVerb, verifyVerb, exportVerb, diffVerb, forkVerb, copyVerb, doctorVerb, publishVerb, discloseVerb, keygenVerb,
  checkpointVerb, proveVerb, witnessVerb, pageVerb,
];
