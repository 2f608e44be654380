/**
 * The two profiles of a committed record kind (spec/FORMAT.md §12, REDACTION.md §12): from a base
 * profile, the private form a journal stores (with the writer-computed `salt`) and the public form a
 * publication writes (`salts` and optional `digests`), each with its member rules and its step hash by
 * commitments (commitments.ts). Pure: runs in a browser.
 */
import { canonicalValue } from '../canonical/value.js';
import { isObject } from '../canonical/json.js';
import { isWithheldMarker, privateStepHash, publicStepHash, sealCommitted } from './commitments.js';
import type { MemberRule, RecordProfile } from './profile.js';
import { SALT_HEX_DIGITS, SALT_TEXT, isSaltHex } from './salts.js';

const invalid = (message: string) => ({ message });
const saltRule: MemberRule = {
  name: 'salt',
  required: true,
  role: 'envelope',
  check: (text, start, end) => {
    SALT_TEXT.lastIndex = start;
    return end - start === SALT_HEX_DIGITS + 2 && SALT_TEXT.test(text)
      ? null
      : invalid('salt must be 32 lowercase hex digits (128 bits)');
  },
};

/** `salts` or `digests` of a public-form record: an object whose members are slots, each a salt or a digest. */
function slotMapRule(name: 'salts' | 'digests', slots: readonly string[], required: boolean): MemberRule {
  const valueOk =
    name === 'salts' ? isSaltHex : (v: unknown) => typeof v === 'string' && /^sha256:[0-9a-f]{64}$/.test(v);
  return {
    name,
    required,
    role: 'envelope',
    check: (text, start, end) => {
      const v = canonicalValue(text, start, end);
      if (!isObject(v)) return invalid(`${name} must be a JSON object`);
      for (const [k, x] of Object.entries(v)) {
        if (!slots.includes(k))
          return invalid(`${name} may name only the slots ${slots.join(', ')} (found ${JSON.stringify(k)})`);
        if (!valueOk(x))
          return invalid(`${name}.${k} must be ${name === 'salts' ? '32 lowercase hex digits' : 'a digest'}`);
      }
      if (name === 'digests' && Object.keys(v).length === 0)
        return invalid('digests, when present, names at least one slot');
      return null;
    },
  };
}

const byName = (a: MemberRule, b: MemberRule): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The private and public profiles of a committed record kind, from a base profile that says its members
 * and slots (`redactable`): the private form adds the writer-computed `salt`; the public form has `salts`
 * and optional `digests` instead. Both hash by commitments; only the private form is ever appended.
 */
export function commitProfiles(base: RecordProfile): { stored: RecordProfile; published: RecordProfile } {
  const withoutSalt = base.members.filter((m) => m.name !== 'salt' && m.name !== 'salts' && m.name !== 'digests');
  const storedMembers = [...withoutSalt, saltRule].sort(byName);
  const publishedMembers = [
    ...withoutSalt,
    slotMapRule('salts', base.redactable, true),
    slotMapRule('digests', base.redactable, false),
  ].sort(byName);
  const stored: RecordProfile = {
    ...base,
    members: storedMembers,
    memberNames: new Set(storedMembers.map((m) => m.name)),
    computed: [...new Set([...base.computed, 'salt'])],
    seal: (texts, e) => sealCommitted(stored, texts, e, e.salt),
    stepHashOf: (text, _span, spans) => privateStepHash(stored, text, spans),
  };
  const published: RecordProfile = {
    ...base,
    id: `${base.id}+public`,
    members: publishedMembers,
    memberNames: new Set(publishedMembers.map((m) => m.name)),
    computed: [...new Set([...base.computed, 'salts', 'digests'])],
    seal: () => {
      throw new TypeError(`${base.id}: a public-form record is written by the publisher, never appended`);
    },
    stepHashOf: (text, _span, spans) => publicStepHash(published, text, spans),
  };
  // A withheld slot is a marker, not its value: rules between members read it as unknown there.
  const relation = base.relationDefect;
  if (relation)
    (published as { relationDefect?: RecordProfile['relationDefect'] }).relationDefect = (value) =>
      relation((name) => (isWithheldMarker(value(name)) ? undefined : value(name)));
  return { stored, published };
}
