/**
 * Journals with planted secrets for the redaction tests, and a reader for published archives: gunzip,
 * then the raw tar bytes as text (every entry, headers and padding included) so searches see everything.
 */
import { gunzipSync } from 'node:zlib';
import type { StepInput } from '../../src/record/index.js';
import { MemoryStore, type Journal } from '../../src/store/index.js';

/** One planted secret of every detector kind (built from parts so this file does not trip secret scanners). */
export const SECRETS = {
  'api-key': 'sk-' + 'proj-' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4',
  'aws-access-key': 'AKIA' + 'IOSFODNN7EXAMPLE',
  'bearer-token': 'Bearer ' + 'abc.DEF-ghi_JKL~mno+pqr/stu=',
  jwt:
    'eyJhbGciOiJIUzI1NiJ9' + '.' + 'eyJzdWIiOiIxMjM0NTY3ODkwIn0' + '.' + 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  'private-key':
    '-----BEGIN ' +
    'PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END ' +
    'PRIVATE KEY-----',
  email: 'alice.liddell+test@example.org',
} as const;

export const CREATED_AT = '2026-01-01T00:00:00.000Z';

export function ts(i: number): string {
  return new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
}

/** A small journal: weather steps, an http tool call with an api_key argument, secrets in text, a blob. */
export function sampleSteps(): StepInput[] {
  return [
    {
      step_id: 'step-0',
      ts: ts(0),
      model: 'gpt-4o',
      prompt: 'You are a careful assistant. Keep secrets.',
      input: { question: 'What is the weather in Paris?' },
      tool_call: { name: 'get_weather', arguments: { city: 'Paris' } },
      result: { temperature: 18.5 },
    },
    {
      step_id: 'step-1',
      ts: ts(1),
      model: 'gpt-4o',
      prompt: 'Call the API.',
      input: { note: `contact ${SECRETS.email} about it` },
      tool_call: {
        name: 'http',
        arguments: {
          url: 'https://api.example.com/v1',
          api_key: 'k-live-0123456789abcdef',
          headers: { Authorization: SECRETS['bearer-token'] },
        },
      },
      result: { status: 200, body: { token: SECRETS.jwt, aws: `id=${SECRETS['aws-access-key']}` } },
      meta: { latency_ms: 412, operator: SECRETS.email },
    },
    {
      step_id: 'step-2',
      ts: ts(2),
      model: 'gpt-4o',
      prompt: 'Summarise.',
      input: { doc: 'x'.repeat(2000) + ` key ${SECRETS['api-key']} end` },
      tool_call: null,
      result: { pem: SECRETS['private-key'], text: 'y'.repeat(1500) },
    },
    {
      step_id: 'step-3',
      ts: ts(3),
      model: 'gpt-4o',
      prompt: 'Done.',
      input: { big: 'z'.repeat(3000) },
      tool_call: null,
      result: 'ok',
    },
  ];
}

export const SAMPLE_POLICY = {
  rules: [
    { id: 'prompts', paths: ['/prompt'] },
    { id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] },
    { id: 'secrets', detectors: ['api-key', 'aws-access-key', 'bearer-token', 'jwt', 'private-key', 'email'] },
  ],
};

export async function memoryJournal(
  steps: StepInput[] = sampleSteps(),
  blobThreshold = 1024,
  format: 'stepchain/v1' | 'stepchain/v2' = 'stepchain/v1',
): Promise<Journal> {
  const store = new MemoryStore({ blobThreshold });
  const j = await store.create('j', { journalId: 'redaction-test', createdAt: CREATED_AT, format });
  for (const s of steps) await j.append(s);
  return j;
}

/** The whole archive as one latin1 string of its uncompressed bytes, plus the same as UTF-8 text. */
export function archiveText(bytes: Uint8Array): string {
  const raw = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : Buffer.from(bytes);
  return Buffer.from(raw).toString('utf8');
}
