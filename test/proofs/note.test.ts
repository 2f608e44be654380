/**
 * C2SP signed notes, checkpoints and cosignatures (spec/PROOFS.md §8): the published C2SP examples
 * (shared/third-party/C2SP), round trips of generated notes, and malformed notes side by side with good
 * ones, each with the code it must get.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  MAX_NOTE_SIGNATURES,
  SIG_COSIGNATURE_V1,
  SIG_ED25519,
  noteKeyId,
  noteSigner,
  noteVerifier,
  openNote,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  signNote,
  verifierKey,
  formatCheckpoint,
  ProofError,
} from '../../src/proofs/index.js';
import { cosignatureTime, cosignedMessage, formatNote } from '../../src/proofs/note.js';
import { sha } from './reference.js';

const C2SP = new URL('../../shared/third-party/C2SP/', import.meta.url).pathname;
const read = (name: string): string => readFileSync(C2SP + name, 'utf8');
const seed = (n: number): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + n) & 255);
const log = noteSigner('example.com/log', seed(1));
const other = noteSigner('example.com/log', seed(2));

describe('the C2SP examples', () => {
  test('signed-note: the example note verifies with the example vkey, which round-trips', () => {
    const vkey = read('signed-note-example.vkey').trim();
    const v = parseVerifierKey(vkey);
    expect(v.name).toBe('example.com/foo');
    expect(v.type).toBe(SIG_ED25519);
    expect(v.keyId).toBe(0x530d903a);
    expect(noteKeyId(v.name, SIG_ED25519, v.publicKey)).toBe(0x530d903a);
    expect(verifierKey(v)).toBe(vkey);
    const opened = openNote(read('signed-note-example.note'), [v]);
    expect(opened.problems).toEqual([]);
    expect(opened.ok).toBe(true);
    expect(opened.note!.text).toBe('This is an example message.\n');
    expect(opened.verifiedBy).toEqual([v]);
  });

  test('signed-note: the example with blank lines in its text splits at the last blank line', () => {
    const parsed = parseNote(read('signed-note-quasimodo.note'));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.note.text).toBe(
      'Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned è subito sera.\n',
    );
    expect(parsed.note.signatures.map((s) => s.name)).toEqual(['quasimodo.example/salvatore']);
    expect(formatNote(parsed.note)).toBe(read('signed-note-quasimodo.note'));
    // A key we do not know is ignored, so nothing verifies.
    expect(
      openNote(read('signed-note-quasimodo.note'), [
        noteVerifier('quasimodo.example/salvatore', log.publicKey),
      ]).problems.map((p) => p.code),
    ).toEqual(['SIGNATURE_MISSING']);
  });

  test('tlog-checkpoint: the example parses to its origin, size and root', () => {
    const note = parseNote(read('tlog-checkpoint-example.note'));
    expect(note.ok).toBe(true);
    if (!note.ok) return;
    const cp = parseCheckpoint(note.note.text);
    expect(cp.ok).toBe(true);
    if (!cp.ok) return;
    expect(cp.checkpoint.origin).toBe('example.com/behind-the-sofa');
    expect(cp.checkpoint.size).toBe(20852163);
    expect(Buffer.from(cp.checkpoint.root).toString('base64')).toBe('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=');
    expect(cp.checkpoint.extensions).toEqual([]);
    expect(formatCheckpoint(cp.checkpoint)).toBe(note.note.text);
  });

  test('tlog-cosignature: the example cosignature carries the published time, and our signed message is the published one', () => {
    const note = parseNote(read('tlog-cosignature-example.note'));
    expect(note.ok).toBe(true);
    if (!note.ok) return;
    const [logSig, cosig] = note.note.signatures;
    expect(logSig!.name).toBe('example.com/behind-the-sofa');
    expect(cosig!.name).toBe('witness.example.com/w1');
    expect(cosig!.signature.length).toBe(72);
    const time = cosignatureTime(cosig!.signature);
    expect(time).toBe(1679315147);
    expect(new TextDecoder().decode(cosignedMessage(new TextEncoder().encode(note.note.text), time!))).toBe(
      read('tlog-cosignature-message.txt'),
    );
  });
});

describe('keys', () => {
  test('a key id is the first four bytes of SHA-256(name || 0x0A || type || key)', () => {
    for (const type of [SIG_ED25519, SIG_COSIGNATURE_V1]) {
      const h = sha(new TextEncoder().encode('w.example/1\n'), Uint8Array.of(type), log.publicKey);
      expect(noteKeyId('w.example/1', type, log.publicKey)).toBe(Buffer.from(h).readUInt32BE(0));
    }
    expect(noteKeyId('a', SIG_ED25519, log.publicKey)).not.toBe(noteKeyId('a', SIG_COSIGNATURE_V1, log.publicKey));
  });

  test('vkeys of both types round-trip', () => {
    for (const type of [SIG_ED25519, SIG_COSIGNATURE_V1]) {
      const v = noteVerifier('witness.example/w1', log.publicKey, type);
      const again = parseVerifierKey(verifierKey(v));
      expect([again.name, again.keyId, again.type, Buffer.from(again.publicKey).toString('hex')]).toEqual([
        v.name,
        v.keyId,
        type,
        Buffer.from(v.publicKey).toString('hex'),
      ]);
    }
  });

  const good = verifierKey(noteVerifier('example.com/log', log.publicKey));
  const [name, id, b64] = good.split('+') as [string, string, string];
  const material = (type: number, key = log.publicKey) =>
    Buffer.concat([Buffer.of(type), Buffer.from(key)]).toString('base64');
  test.each([
    ['two parts', `${name}+${id}`],
    ['four parts', `${good}+x`],
    ['an empty name', `+${id}+${b64}`],
    ['a name with a space', `a b+${id}+${b64}`],
    ['uppercase hex', `${name}+${id.toUpperCase()}+${b64}`],
    ['a short id', `${name}+${id.slice(1)}+${b64}`],
    ['the wrong id', `${name}+${(parseInt(id, 16) ^ 1).toString(16).padStart(8, '0')}+${b64}`],
    ['another name for this id', `example.com/other+${id}+${b64}`],
    ['an unsupported type', `${name}+${id}+${material(0x02)}`],
    ['a 31-byte key', `${name}+${id}+${material(1, log.publicKey.subarray(1))}`],
    ['non-canonical base64', `${name}+${id}+${b64.slice(0, -1)}`],
  ])('a vkey with %s is KEY_INVALID', (_, vkey) => {
    expect(() => parseVerifierKey(vkey)).toThrow(expect.objectContaining({ code: 'KEY_INVALID' }));
  });

  test('signers refuse bad keys and names', () => {
    expect(() => noteSigner('a b', seed(1))).toThrow(ProofError);
    expect(() => noteSigner('a+b', seed(1))).toThrow(ProofError);
    expect(() => noteSigner('ok', seed(1).subarray(1))).toThrow(ProofError);
    expect(() => noteSigner('ok', seed(1), 0x02)).toThrow(ProofError);
  });
});

describe('signed notes: round trips', () => {
  // Note texts: any Unicode but control characters, lines joined by newlines, ending with one.
  const line = fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replace(/[\u0000-\u001f]/g, ''));
  const text = fc.array(line, { minLength: 1, maxLength: 6 }).map((ls) => ls.join('\n') + '\n');

  test('sign, parse and open: the text comes back and every signature verifies', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 4 }), (t, k) => {
        const signers = Array.from({ length: k }, (_, i) => noteSigner(`signer.example/${i}`, seed(10 + i)));
        const note = signNote(t, signers);
        const parsed = parseNote(note);
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        expect(parsed.note.text).toBe(t);
        expect(formatNote(parsed.note)).toBe(note);
        const verifiers = signers.map((s) => noteVerifier(s.name, s.publicKey));
        const opened = openNote(new TextEncoder().encode(note), verifiers);
        expect(opened.ok).toBe(true);
        expect(opened.verifiedBy.length).toBe(k);
      }),
      { numRuns: 100 },
    );
  });

  test(`at least 16 signatures are accepted, up to ${MAX_NOTE_SIGNATURES}; one more is LIMIT_EXCEEDED`, () => {
    const body = 'a\n';
    const sig = signNote(body, [log]).slice(body.length + 1);
    const v = noteVerifier(log.name, log.publicKey);
    for (const n of [16, MAX_NOTE_SIGNATURES]) {
      const unknown = signNote(body, [other]).slice(body.length + 1);
      const note = body + '\n' + unknown.repeat(n - 1) + sig;
      expect(openNote(note, [v]).ok, `${n} signatures`).toBe(true);
    }
    expect(openNote(body + '\n' + sig.repeat(MAX_NOTE_SIGNATURES + 1), [v]).problems[0]!.code).toBe('LIMIT_EXCEEDED');
  });

  test('signNote refuses a text that is not a note text', () => {
    for (const t of ['no newline', 'tab\there\n', 'cr\r\n', '\ud800\n'])
      expect(() => signNote(t, [log])).toThrow(expect.objectContaining({ code: 'NOTE_INVALID' }));
  });
});

describe('signed notes: verification', () => {
  const v = noteVerifier(log.name, log.publicKey);
  const body = 'example.com/log\n5\n' + Buffer.alloc(32, 7).toString('base64') + '\n';
  const note = signNote(body, [log]);
  const codes = (n: string | Uint8Array, vs = [v]) => openNote(n, vs).problems.map((p) => p.code);

  test('a good note opens', () => expect(codes(note)).toEqual([]));
  test('signatures from unknown keys are ignored, even beside a good one', () => {
    const unknownKey = signNote(body, [other]).slice(body.length + 1);
    expect(codes(note + unknownKey)).toEqual([]);
    // Same name, other key (so another id): ignored, not a failure.
    expect(codes(body + '\n' + unknownKey)).toEqual(['SIGNATURE_MISSING']);
  });
  test('a known key whose signature fails makes the note invalid', () => {
    const forged = note.replace(/ (\S+)\n$/, (_, b64: string) => {
      const b = Buffer.from(b64, 'base64');
      b[10]! ^= 1;
      return ` ${b.toString('base64')}\n`;
    });
    expect(codes(forged)).toEqual(['SIGNATURE_INVALID']);
    expect(codes(note.replace('\n5\n', '\n6\n'))).toEqual(['SIGNATURE_INVALID']);
  });
  test('a same-id signature under another name is not the known key', () => {
    expect(codes(note.replace('\u2014 example.com/log ', '\u2014 example.com/lug '))).toEqual(['SIGNATURE_MISSING']);
  });

  const sigLine = note.slice(body.length + 1);
  const b64 = sigLine.slice(sigLine.lastIndexOf(' ') + 1, -1);
  test.each([
    ['an empty input', '', 'NOTE_MALFORMED'],
    ['no blank line', body + sigLine, 'NOTE_MALFORMED'],
    ['no signature line', body + '\n', 'NOTE_MALFORMED'],
    ['no final newline', note.slice(0, -1), 'NOTE_MALFORMED'],
    ['a trailing blank line', note + '\n', 'NOTE_MALFORMED'],
    ['a signature line without the em dash', body + '\n' + sigLine.replace('\u2014', '-'), 'NOTE_MALFORMED'],
    [
      'a signature line without the space after the dash',
      body + '\n' + sigLine.replace('\u2014 ', '\u2014'),
      'NOTE_MALFORMED',
    ],
    [
      'a signature line with two spaces',
      body + '\n' + sigLine.replace(' example.com/log ', ' example.com/log  '),
      'NOTE_MALFORMED',
    ],
    ['a key name with a plus', body + '\n' + sigLine.replace('example.com/log', 'example.com+log'), 'NOTE_MALFORMED'],
    [
      'a key name with a no-break space',
      body + '\n' + sigLine.replace('example.com/log', 'example.com\u00a0log'),
      'NOTE_MALFORMED',
    ],
    ['a signature too short for a key id', body + '\n\u2014 example.com/log AAAAAA==\n', 'NOTE_MALFORMED'],
    [
      'a signature in base64 without padding',
      body + '\n' + sigLine.replace(b64, b64.replace(/=+$/, '')),
      'NOTE_MALFORMED',
    ],
    [
      'a signature in base64url',
      body + '\n' + sigLine.replace(b64, b64.replace(/\+/g, '-').replace(/\//g, '_')),
      b64.includes('+') || b64.includes('/') ? 'NOTE_MALFORMED' : null,
    ],
    ['a carriage return', note.replace('\n5\n', '\r\n5\n'), 'NOTE_MALFORMED'],
    ['a tab in the text', note.replace('\n5\n', '\n\t5\n'), 'NOTE_MALFORMED'],
    ['a NUL in the text', note.replace('\n5\n', '\n5\u0000\n'), 'NOTE_MALFORMED'],
    ['a lone surrogate', note.replace('\n5\n', '\n5\ud800\n'), 'NOTE_MALFORMED'],
    ['a byte order mark', '\ufeff' + note, 'SIGNATURE_INVALID'],
    ['over a mebibyte', 'x'.repeat(1024 * 1024) + '\n\n' + sigLine, 'LIMIT_EXCEEDED'],
  ])('%s', (_, input, code) => {
    if (code === null) return; // this key's signature has no character base64url changes
    expect(codes(input)[0]).toBe(code);
  });

  test('invalid UTF-8 bytes are NOTE_MALFORMED', () => {
    const bytes = new TextEncoder().encode(note);
    const bad = Uint8Array.from([...bytes.subarray(0, 3), 0xff, ...bytes.subarray(3)]);
    expect(codes(bad)).toEqual(['NOTE_MALFORMED']);
  });

  test('anything at all is parsed without throwing', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.uint8Array(), fc.anything()), (x) => {
        const r = openNote(x as string, [v]);
        expect(r.ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('cosigners', () => {
  test('a cosignature covers the time and the text, under a type 0x04 key id', () => {
    const w = noteSigner('witness.example/w1', seed(3), SIG_COSIGNATURE_V1, () => 1_700_000_000);
    const wv = noteVerifier(w.name, w.publicKey, SIG_COSIGNATURE_V1);
    const note = signNote('a\nb\nc\n', [w]);
    const parsed = parseNote(note);
    expect(parsed.ok && cosignatureTime(parsed.note.signatures[0]!.signature)).toBe(1_700_000_000);
    expect(openNote(note, [wv]).ok).toBe(true);
    // The same key as an Ed25519 note key has another id: the cosignature is not mistaken for it.
    expect(openNote(note, [noteVerifier(w.name, w.publicKey, SIG_ED25519)]).problems.map((p) => p.code)).toEqual([
      'SIGNATURE_MISSING',
    ]);
    // Changing the time breaks the signature.
    const sig = parsed.ok ? parsed.note.signatures[0]! : null;
    const moved = Uint8Array.from(sig!.signature);
    moved[7]! ^= 1;
    expect(
      openNote(formatNote({ text: 'a\nb\nc\n', signatures: [{ ...sig!, signature: moved }] }), [wv]).problems.map(
        (p) => p.code,
      ),
    ).toEqual(['COSIGNATURE_INVALID']);
  });

  test('a cosigner refuses a time that is not a whole number of seconds', () => {
    const w = noteSigner('witness.example/w1', seed(3), SIG_COSIGNATURE_V1, () => -1);
    expect(() => signNote('a\n', [w])).toThrow(expect.objectContaining({ code: 'ARGUMENT_INVALID' }));
  });
});
