/**
 * Every verb, in the order `stepchain --help` lists them, each loaded only when it runs (cli.ts, LazyVerb):
 * a verb's module and what it imports are not read at all by a command that does not use them.
 */
import type { LazyVerb, Verb } from '../cli.js';

const lazy = (name: string, load: () => Promise<Verb>): LazyVerb => ({ name, load });

export const VERBS: readonly LazyVerb[] = [
  lazy('init', async () => (await import('./journal.js')).initVerb),
  lazy('append', async () => (await import('./append.js')).appendVerb),
  lazy('log', async () => (await import('./journal.js')).logVerb),
  lazy('show', async () => (await import('./journal.js')).showVerb),
  lazy('head', async () => (await import('./journal.js')).headVerb),
  lazy('verify', async () => (await import('./verify.js')).verifyVerb),
  lazy('export', async () => (await import('./receipt.js')).exportVerb),
  lazy('diff', async () => (await import('./diff.js')).diffVerb),
  lazy('fork', async () => (await import('./journal.js')).forkVerb),
  lazy('copy', async () => (await import('./store.js')).copyVerb),
  lazy('doctor', async () => (await import('./store.js')).doctorVerb),
  lazy('publish', async () => (await import('./publish.js')).publishVerb),
  lazy('erase', async () => (await import('./erase.js')).eraseVerb),
  lazy('disclose', async () => (await import('./publish.js')).discloseVerb),
  lazy('keygen', async () => (await import('./receipt.js')).keygenVerb),
  lazy('checkpoint', async () => (await import('./proofs.js')).checkpointVerb),
  lazy('prove', async () => (await import('./proofs.js')).proveVerb),
  lazy('witness', async () => (await import('./witness.js')).witnessVerb),
  lazy('timestamp', async () => (await import('./attest.js')).timestampVerb),
  lazy('cosign', async () => (await import('./attest.js')).cosignVerb),
  lazy('record-keeping', async () => (await import('./attest.js')).recordKeepingVerb),
  lazy('page', async () => (await import('./page.js')).pageVerb),
  lazy('effect', async () => (await import('./run.js')).effectVerb),
  lazy('approve', async () => (await import('./approve.js')).approveVerb),
  lazy('continuation', async () => (await import('./run.js')).continuationVerb),
  lazy('runs', async () => (await import('./runs.js')).runsVerb),
  lazy('prune', async () => (await import('./retention.js')).pruneVerb),
  lazy('mcp', async () => (await import('./mcp.js')).mcpVerb),
  lazy('collect', async () => (await import('./otel.js')).collectVerb),
  lazy('otel-export', async () => (await import('./otel.js')).otelExportVerb),
];
