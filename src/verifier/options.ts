/**
 * The pins of the one options object checked before they are used (issue 39): a pin a caller got wrong is a
 * problem naming the option and what to pass, never a complaint about the receipt (a malformed `approvers`
 * entry once read as ARCHIVE_INVALID, a co-signer given as `{publicKey}` as TIMESTAMP_INVALID). The CLI
 * (`--approver`, `--cosigner`) and the page build these from key files and refuse the same defects there,
 * by file. Pure.
 */
import type { PinnedApprover } from '../approval/ledger.js';
import type { Cosigner } from '../attest/receipt.js';

/** The problem codes of a malformed pin in the options (the receipt is still read, without that pin). */
export type OptionProblemCode = 'APPROVERS_INVALID' | 'COSIGNERS_INVALID' | 'REQUIRE_INVALID';

/** The requirements `require` knows (verifier/index.ts ReceiptRequirements). */
export const REQUIREMENTS: readonly string[] = ['authenticated', 'published', 'proven', 'timestamped', 'cosigned'];

/**
 * The members of `require` that name no requirement: a misspelt one (`timestamp`, `signed`) would otherwise turn
 * a gate into a no-op, so each is a problem naming it and the members there are (as a policy's unknown member is).
 */
function requireDefects(v: unknown): string[] {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return [];
  // Only a plain object's own data members are read: a Map, a class instance or a getter would be read as
  // "no requirements" (or as one thing here and another when applied), so each is refused.
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null)
    return [
      'require is not a plain object (a Map or a class instance holds no members the verifier reads): pass {authenticated: true, …}',
    ];
  if (Object.values(Object.getOwnPropertyDescriptors(v)).some((d) => !('value' in d)))
    return ['require has a member with a getter: pass a plain object whose members are values'];
  return Object.keys(v)
    .filter((k) => !REQUIREMENTS.includes(k))
    .slice(0, 10)
    .map(
      (k) =>
        `require names ${JSON.stringify(k)}, which is no requirement: the requirements are ${REQUIREMENTS.join(', ')} (a misspelt one would hold the receipt to nothing)`,
    );
}

export interface OptionProblem {
  code: OptionProblemCode;
  message: string;
}

const isKey = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32;

/** Why one `{key, name?}` entry is not a pin, or null. */
function pinDefect(v: unknown): string | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'is not an object { key, name? }';
  const o = v as Record<string, unknown>;
  if (!('key' in o))
    return `has no "key" (members: ${Object.keys(o).slice(0, 5).join(', ') || 'none'}); pass { key: <32-byte Ed25519 public key as a Uint8Array>, name? } (decodePublicKey turns base64 or PEM into one)`;
  if (!isKey(o.key))
    return 'has a "key" that is not the 32 raw bytes of an Ed25519 public key (a Uint8Array; decodePublicKey turns base64 or PEM into one)';
  if (o.name !== undefined && typeof o.name !== 'string') return 'has a "name" that is not a string';
  return null;
}

/** The defects of a list of pins, by option name: each entry, and a key given twice. */
function listDefects(option: 'approvers' | 'cosigners', v: unknown): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) return [`${option} is not an array of { key, name? }`];
  const out: string[] = [];
  const seen = new Set<string>();
  v.forEach((entry, i) => {
    const why = pinDefect(entry);
    if (why !== null) {
      out.push(`${option}[${i}] ${why}`);
      return;
    }
    const hex = Array.from((entry as { key: Uint8Array }).key, (b) => b.toString(16).padStart(2, '0')).join('');
    if (seen.has(hex)) out.push(`${option}[${i}] is a key given twice; each ${option.slice(0, -1)} counts once`);
    seen.add(hex);
  });
  return out;
}

/** Checks the pinned approvers and co-signers, and the names in `require`; returns the usable ones and a problem for each defect. */
export function checkPins(options: { approvers?: unknown; cosigners?: unknown; require?: unknown }): {
  approvers: readonly PinnedApprover[] | undefined;
  cosigners: Cosigner[] | undefined;
  problems: OptionProblem[];
} {
  const problems: OptionProblem[] = [];
  const a = listDefects('approvers', options.approvers);
  const c = listDefects('cosigners', options.cosigners);
  for (const message of a) problems.push({ code: 'APPROVERS_INVALID', message });
  for (const message of c) problems.push({ code: 'COSIGNERS_INVALID', message });
  for (const message of requireDefects(options.require)) problems.push({ code: 'REQUIRE_INVALID', message });
  return {
    approvers: a.length === 0 ? (options.approvers as readonly PinnedApprover[] | undefined) : undefined,
    cosigners: c.length === 0 ? (options.cosigners as Cosigner[] | undefined) : undefined,
    problems,
  };
}
