/**
 * The pins an auditor gives both verifiers, and how each takes them: the CLI's `verify --json` arguments and
 * the page's inputs (each file named by the pins read from `dir`). One mapping for the tests that compare the
 * page's verdict with the CLI's (verdict-table.test.ts, attack-verdicts.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileSpec, Inputs } from './browser.js';

export interface Pins {
  pubkey?: string;
  head?: string;
  checkpoint?: string;
  logKey?: string;
  witnesses?: string[];
  /** Given as typed, '' included (the page's empty field); the CLI gets --quorum only when it is not ''. */
  quorum?: string;
  proof?: string;
}

/** `stepchain verify <file> --json` with the pins as its options. */
export function verifyArgs(file: string, p: Pins): string[] {
  return [
    'verify',
    file,
    '--json',
    ...(p.pubkey ? ['--pubkey', p.pubkey] : []),
    ...(p.head ? ['--head', p.head] : []),
    ...(p.checkpoint ? ['--checkpoint', p.checkpoint] : []),
    ...(p.logKey ? ['--log-key', p.logKey] : []),
    ...(p.witnesses ?? []).flatMap((w) => ['--witness', w]),
    ...(p.quorum !== undefined && p.quorum !== '' ? [`--quorum=${p.quorum}`] : []),
    ...(p.proof ? ['--proof', p.proof] : []),
  ];
}

/** The page's inputs for the receipt `file` with the pins, files read from `dir`. */
export function pageInputs(dir: string, file: string, p: Pins): Inputs {
  const spec = (name: string): FileSpec => ({ name, buffer: readFileSync(join(dir, name)) });
  return {
    receipt: spec(file),
    ...(p.pubkey ? { key: spec(p.pubkey) } : {}),
    ...(p.head ? { head: p.head } : {}),
    ...(p.checkpoint ? { checkpoint: spec(p.checkpoint) } : {}),
    ...(p.logKey ? { logKey: p.logKey } : {}),
    ...(p.witnesses ? { witnesses: p.witnesses } : {}),
    ...(p.quorum !== undefined ? { quorum: p.quorum } : {}),
    ...(p.proof ? { consistency: spec(p.proof) } : {}),
  };
}
