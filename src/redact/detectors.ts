/**
 * Built-in secret detectors (spec/REDACTION.md §4). Each finds spans of a string: [start, end) in UTF-16
 * code units. They are deliberately a little greedy — a false positive costs a redacted word, a false
 * negative publishes a secret.
 *
 * Cost: every pattern starts at a fixed literal (`sk-`, `AKIA`, `Bearer`, `eyJ`, `-----BEGIN`) and the
 * e-mail detector is a hand-written scan outward from each `@`, so a hostile tool result cannot make the
 * publisher backtrack for minutes (test/redact/detectors.test.ts times 1 MiB adversarial strings).
 */

export interface Detector {
  readonly id: string;
  readonly description: string;
  /** The spans it finds in `s`, in increasing order, non-overlapping. */
  find(s: string): [number, number][];
}

function regexDetector(id: string, description: string, prefilter: (s: string) => boolean, re: RegExp): Detector {
  return {
    id,
    description,
    find(s) {
      if (!prefilter(s)) return [];
      const out: [number, number][] = [];
      for (const m of s.matchAll(re)) out.push([m.index, m.index + m[0].length]);
      return out;
    },
  };
}

/** The source text of each regex detector, as the spec lists it. */
export const DETECTOR_PATTERNS = {
  'api-key': String.raw`(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}|(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}|(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}|(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}|(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}`,
  'aws-access-key': String.raw`(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])`,
  'bearer-token': String.raw`(?<![A-Za-z0-9])[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+[A-Za-z0-9._~+/-]{8,}=*`,
  jwt: String.raw`(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`,
  'private-key': String.raw`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`,
} as const;

const LOCAL = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]/;
const DOMAIN = /[A-Za-z0-9.-]/;

/** local@domain with a dotted domain whose last label is 2+ letters; a linear scan outward from each '@'. */
function findEmails(s: string): [number, number][] {
  const out: [number, number][] = [];
  let from = 0;
  let floor = 0; // never extend left over a previous match
  for (;;) {
    const at = s.indexOf('@', from);
    if (at < 0) return out;
    from = at + 1;
    let start = at;
    while (start > floor && LOCAL.test(s[start - 1]!)) start--;
    while (start < at && s[start] === '.') start++;
    if (start === at) continue;
    let end = at + 1;
    while (end < s.length && DOMAIN.test(s[end]!)) end++;
    while (end > at + 1 && (s[end - 1] === '.' || s[end - 1] === '-')) end--;
    const domain = s.slice(at + 1, end);
    const labels = domain.split('.');
    if (labels.length < 2 || labels.some((l) => l.length === 0) || !/^[A-Za-z]{2,}$/.test(labels[labels.length - 1]!))
      continue;
    out.push([start, end]);
    floor = end;
    from = end;
  }
}

const has =
  (...needles: string[]) =>
  (s: string): boolean =>
    needles.some((n) => s.includes(n));

export const DETECTORS: ReadonlyMap<string, Detector> = new Map(
  [
    regexDetector(
      'api-key',
      'API keys: OpenAI sk-…/sk-proj-…, Anthropic sk-ant-…, GitHub ghp_…/github_pat_…, Slack xox?-…, Google AIza…',
      has('sk-', 'gh', 'github_pat_', 'xox', 'AIza'),
      new RegExp(DETECTOR_PATTERNS['api-key'], 'g'),
    ),
    regexDetector(
      'aws-access-key',
      'AWS access key ids: AKIA or ASIA and 16 upper-case letters or digits',
      has('AKIA', 'ASIA'),
      new RegExp(DETECTOR_PATTERNS['aws-access-key'], 'g'),
    ),
    regexDetector(
      'bearer-token',
      'HTTP bearer credentials: "Bearer <token>" (any case), scheme and token',
      (s) => /[Bb][Ee][Aa][Rr][Ee][Rr]/.test(s),
      new RegExp(DETECTOR_PATTERNS['bearer-token'], 'g'),
    ),
    regexDetector(
      'jwt',
      'JSON Web Tokens: three base64url segments, the header starting eyJ',
      has('eyJ'),
      new RegExp(DETECTOR_PATTERNS.jwt, 'g'),
    ),
    regexDetector(
      'private-key',
      'PEM private keys: from -----BEGIN … PRIVATE KEY----- to its END line (or the end of the string)',
      has('PRIVATE KEY-----'),
      new RegExp(DETECTOR_PATTERNS['private-key'], 'g'),
    ),
    { id: 'email', description: 'e-mail addresses: local@domain.tld', find: findEmails } satisfies Detector,
  ].map((d) => [d.id, d] as const),
);

export const DETECTOR_IDS: readonly string[] = [...DETECTORS.keys()];

/** The placeholder that stands for a redacted substring in a marker's `text` (spec/REDACTION.md §5). */
export function placeholder(detectorId: string): string {
  return `[REDACTED:${detectorId}]`;
}

/** A match: its span, and which detector found it. */
export interface Match {
  start: number;
  end: number;
  detector: string;
}

/**
 * Every span the detectors find in `s`, merged: overlapping or touching spans become one, named by the
 * detector whose span starts first (the earlier detector in `ids` on a tie).
 */
export function findSecrets(s: string, ids: readonly string[]): Match[] {
  const all: Match[] = [];
  for (const id of ids)
    for (const [start, end] of DETECTORS.get(id)!.find(s)) if (end > start) all.push({ start, end, detector: id });
  if (all.length <= 1) return all;
  all.sort((a, b) => a.start - b.start || ids.indexOf(a.detector) - ids.indexOf(b.detector));
  const out: Match[] = [];
  for (const m of all) {
    const last = out[out.length - 1];
    if (last && m.start <= last.end) last.end = Math.max(last.end, m.end);
    else out.push({ ...m });
  }
  return out;
}
