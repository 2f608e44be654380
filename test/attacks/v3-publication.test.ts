/**
 * An outsider's attacks on a published stepchain/v3 receipt (REDACTION.md §13): holding only the unsigned
 * public receipt and the original head, they edit what it shows and recompute every manifest digest, so
 * the archive itself is consistent. Everything shown is a disclosed unit bound to the head, so each edit
 * must be refused against the original head — by the record's deep check, located at its seq.
 */
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { verifyPublishedReceipt, type PublishedReport } from '../../src/redact/verify.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { API_KEY, EMAIL, editRecord, published, reforge, v3Journal } from '../redact/v3-helpers.js';

const b64u = (b: Uint8Array): string => Buffer.from(b).toString('base64url');
const codes = (r: PublishedReport): string[] => r.problems.map((p) => p.code);

async function attack(edit: Parameters<typeof reforge>[1]): Promise<PublishedReport> {
  const { bytes, head } = await published();
  return verifyPublishedReceipt(reforge(bytes, edit), { expectHead: head });
}

describe('issue 32 attacks on a v3 publication, refused against the original head', () => {
  it('the re-forged receipt is otherwise consistent: an edit-free re-forge verifies', async () => {
    const r = await attack(() => {});
    expect(r.problems).toEqual([]);
  });

  it('a disclosed value rewritten ({to: alice, amount: 10} → {to: mallory, amount: 10000}) is ROOT_MISMATCH at its seq', async () => {
    const r = await attack((lines) =>
      editRecord(lines, 0, (x) => {
        x.tool_call.arguments = { to: 'mallory', amount: 10000 };
      }),
    );
    expect(r.ok).toBe(false);
    expect(r.problems).toContainEqual(
      expect.objectContaining({ code: 'ROOT_MISMATCH', location: expect.objectContaining({ seq: 0, field: 'root' }) }),
    );
  });

  it('price 59 → 19 beside a withheld e-mail is ROOT_MISMATCH', async () => {
    const r = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        x.result.price = 19;
      }),
    );
    expect(codes(r)).toContain('ROOT_MISMATCH');
  });

  it('invented text where a prompt message was withheld: SECRETS_INVALID without a salt, ROOT_MISMATCH with one', async () => {
    const bare = await attack((lines) =>
      editRecord(lines, 1, (x) => {
        x.prompt[1] = { role: 'user', content: 'transfer 10000 EUR to mallory' };
      }),
    );
    expect(bare.problems).toContainEqual(
      expect.objectContaining({ code: 'SECRETS_INVALID', location: expect.objectContaining({ seq: 1 }) }),
    );
    const salted = await attack((lines) =>
      editRecord(lines, 1, (x) => {
        x.prompt[1] = { role: 'user', content: 'transfer 10000 EUR to mallory' };
        // One salt for the element and one per member of the invented message, spliced in at its place.
        const s = Buffer.from(x.secrets.salts.prompt, 'base64url');
        x.secrets.salts.prompt = b64u(
          Buffer.concat([s.subarray(0, 16 * 4), Buffer.alloc(16 * 3, 7), s.subarray(16 * 4)]),
        );
      }),
    );
    expect(codes(salted)).toContain('ROOT_MISMATCH');
  });

  it('invented text where the e-mail chunk was withheld, and a whole withheld slot dressed as a value', async () => {
    const chunk = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        x.input.note['$stepchain:chunks'][0] = 'Please transfer 10000 EUR to mallory about the overdue ';
      }),
    );
    expect(codes(chunk)).toContain('SECRETS_INVALID');
    const slot = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        x.meta = { operator: 'mallory' };
      }),
    );
    expect(slot.problems).toContainEqual(
      expect.objectContaining({
        code: 'SECRETS_INVALID',
        location: expect.objectContaining({ seq: 2, field: 'meta' }),
      }),
    );
  });

  it('a publication stripped of its manifest members is still checked deep: the rewrite is refused', async () => {
    const r = await attack((lines, m) => {
      delete m.publication;
      delete m.redactions;
      editRecord(lines, 0, (x) => {
        x.tool_call.arguments.to = 'mallory';
      });
    });
    expect(codes(r)).toContain('ROOT_MISMATCH');
    expect(r.ok).toBe(false);
  });
});

describe('outsider attacks beyond the issue', () => {
  it('salts reordered, moved to another unit, or one dropped', async () => {
    const swap = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        const s = Buffer.from(x.secrets.salts.input, 'base64url');
        x.secrets.salts.input = b64u(Buffer.concat([s.subarray(16, 32), s.subarray(0, 16), s.subarray(32)]));
      }),
    );
    expect(codes(swap)).toContain('ROOT_MISMATCH');
    const dropped = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        x.secrets.salts.input = b64u(Buffer.from(x.secrets.salts.input, 'base64url').subarray(16));
      }),
    );
    expect(codes(dropped).some((c) => c === 'SECRETS_INVALID' || c === 'ROOT_MISMATCH')).toBe(true);
    const extra = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        x.secrets.salts.input = b64u(
          Buffer.concat([Buffer.from(x.secrets.salts.input, 'base64url'), Buffer.alloc(16)]),
        );
      }),
    );
    expect(codes(extra)).toContain('SECRETS_INVALID');
  });

  it('a withheld member moved to another object, a withheld digest dropped, duplicated or unsorted', async () => {
    const moved = await attack((lines) =>
      editRecord(lines, 1, (x) => {
        x.result['$stepchain:withheld'] = x.tool_call.arguments['$stepchain:withheld'];
        delete x.tool_call.arguments['$stepchain:withheld'];
      }),
    );
    // result is disclosed by its slot key, which would open a withheld unit there: refused as such.
    expect(codes(moved).some((c) => c === 'SECRET_PUBLISHED' || c === 'ROOT_MISMATCH')).toBe(true);
    const unsorted = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        x.input['$stepchain:withheld'].reverse();
      }),
    );
    expect(codes(unsorted)).toContain('MARKER_INVALID');
    const dup = await attack((lines) =>
      editRecord(lines, 1, (x) => {
        const d = x.tool_call.arguments['$stepchain:withheld'][0];
        x.tool_call.arguments['$stepchain:withheld'] = [d, d];
      }),
    );
    expect(codes(dup)).toContain('MARKER_INVALID');
    const dropped = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        delete x.input['$stepchain:withheld'];
      }),
    );
    expect(codes(dropped)).toContain('ROOT_MISMATCH');
  });

  it('a record spliced from another publication of the same journal: bound content, but the declarations no longer match', async () => {
    const j = await v3Journal();
    const a = await published(j);
    const b = await published(j, compilePolicy({ rules: [{ id: 'none', paths: ['/input/nothing'] }] }));
    const r = await verifyPublishedReceipt(
      reforge(a.bytes, (lines) => {
        lines[1] = b.pub.lines[1]!;
      }),
      { expectHead: a.head },
    );
    expect(codes(r)).toContain('REDACTION_MISSING');
    // The other publication's record discloses everything by its seed: the seed opens nothing else.
    expect(JSON.parse(b.pub.lines[1]!).secrets.seed).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a record spliced from another journal breaks the chain', async () => {
    const a = await published();
    const other = await published(await v3Journal());
    const r = await verifyPublishedReceipt(
      reforge(a.bytes, (lines) => {
        lines[0] = other.pub.lines[0]!;
      }),
      { expectHead: a.head },
    );
    expect(r.ok).toBe(false);
  });

  it('the seed or a slot key left in, or a slot key beside a withheld unit, is SECRET_PUBLISHED', async () => {
    const seed = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        x.seed = '0'.repeat(64);
      }),
    );
    expect(r(seed)).toBe(false);
    const key = await attack((lines) =>
      editRecord(lines, 2, (x) => {
        x.secrets.keys.input = b64u(Buffer.alloc(16));
        delete x.secrets.salts.input;
      }),
    );
    expect(codes(key)).toContain('SECRET_PUBLISHED');
    function r(x: PublishedReport): boolean {
      return x.ok;
    }
  });

  it('hostile bytes: never throws, always refused', async () => {
    const edits: Array<(x: Record<string, any>) => void> = [
      (x) => {
        x.secrets = 'nope';
      },
      (x) => {
        x.secrets = { keys: {}, salts: { input: '!!!' } };
      },
      (x) => {
        x.secrets.salts.input = x.secrets.salts.input + 'A';
      },
      (x) => {
        x.input.note = { '$stepchain:chunks': ['a', 'b'] };
      },
      (x) => {
        x.input.note = { '$stepchain:chunks': [{ '$stepchain:withheld': 'sha256:zz' }, 'x'] };
      },
      (x) => {
        x.input.note['$stepchain:chunks'].push(5);
      },
      (x) => {
        x.input['$stepchain:withheld'] = 'sha256:' + '0'.repeat(64);
      },
      (x) => {
        x.input = { '$stepchain:withheld': 'sha256:' + '0'.repeat(64), extra: 1 };
      },
      (x) => {
        x.secrets.keys.nonslot = 'AAAAAAAAAAAAAAAAAAAAAA';
      },
      (x) => {
        x.secrets.keys.input = 'AAAA';
        delete x.secrets.salts.input;
      },
    ];
    for (const e of edits) {
      const rep = await attack((lines) => editRecord(lines, 2, e));
      expect(rep.ok).toBe(false);
    }
    // Nesting beyond the record limit, written as text (no serializer would write it).
    const deep = await attack((lines) => {
      lines[0] = lines[0]!.replace('"result":{', '"result":{"deep":' + '['.repeat(300) + '1' + ']'.repeat(300) + ',');
    });
    expect(deep.ok).toBe(false);
  });
});

describe('hiding: nothing withheld is in the public bytes, and guesses cannot be tested', () => {
  it('no withheld value, salt, slot key or seed appears anywhere in the public bytes', async () => {
    const { j, pub, bytes } = await published();
    const all = Buffer.from(bytes).toString('latin1');
    for (const s of [EMAIL, API_KEY, 'My PIN is 4711', '"4711"', 'bob@example.com', '"operator"'])
      expect(all).not.toContain(s);
    for (const w of pub.withheld) {
      expect(all).not.toContain(Buffer.from(w.salt).toString('hex'));
      expect(all).not.toContain(b64u(w.salt));
    }
    for await (const l of j.lines())
      expect(all).not.toContain((JSON.parse(l.text) as { seed: string }).seed.slice(0, 32));
  });

  it('the guessing attack on a PIN, yes/no and an e-mail from a list recovers nothing; given the salt, it does', async () => {
    const { pub, bytes } = await published();
    const all = Buffer.from(bytes).toString('latin1');
    // Every digest the receipt shows, and every 16-byte salt it discloses (the attacker tries them all).
    const digests = new Set([...all.matchAll(/sha256:([0-9a-f]{64})/g)].map((m) => m[1]!));
    // The salts disclosed beside the withheld values (the record holding them); a salt of another record is
    // no better a guess (salts are independent PRF outputs), and trying them all would only cost time here.
    const salts: Buffer[] = [];
    for (const l of [pub.lines[2]!]) {
      const s = JSON.parse(l).secrets;
      for (const v of Object.values<string>(s.salts ?? {})) {
        const b = Buffer.from(v, 'base64url');
        for (let i = 0; i < b.length; i += 16) salts.push(b.subarray(i, i + 16));
      }
    }
    const member = (salt: Uint8Array, name: string, value: string): string =>
      createHash('sha256')
        .update(Uint8Array.of(0x6d))
        .update(salt)
        .update(JSON.stringify(name))
        .update(value)
        .digest('hex');
    const candidates: Array<[string, string]> = [];
    for (let p = 0; p < 10000; p++) candidates.push(['pin', JSON.stringify(String(p).padStart(4, '0'))]);
    for (const v of ['true', 'false', '"yes"', '"no"']) candidates.push(['approved', v]);
    for (const e of ['bob@example.com', 'carol@example.com', 'eve@example.com'])
      candidates.push(['contact', JSON.stringify(e)]);
    let found = 0;
    for (const salt of [...salts, Buffer.alloc(16)])
      for (const [n, v] of candidates) if (digests.has(member(salt, n, v))) found++;
    expect(found).toBe(0);
    // The publisher's own salts (private) do find them: the search would work if a salt leaked.
    const pin = pub.withheld.find((w) => w.path === '/input/pin')!;
    expect(
      candidates.filter(([n, v]) => n === 'pin' && 'sha256:' + member(pin.salt, n, v) === pin.digest).map(([, v]) => v),
    ).toEqual(['"4711"']);
  });
});

describe('a full (private) v3 receipt whose content quotes the public form', () => {
  it('is no publication: text like "secrets": and "bind":" inside a value does not trigger the public-form checks', async () => {
    const { receiptBytes } = await import('../../src/receipt/node.js');
    const { verifyReceipt } = await import('../../src/receipt/verify.js');
    const { publishedReceiptHooks } = await import('../../src/redact/verify.js');
    const j = await v3Journal([
      {
        step_id: 's0',
        ts: '2026-01-01T00:00:00.000Z',
        model: 'm',
        prompt: 'quote',
        result: { bind: 'sha256:x', secrets: { keys: {} } },
      },
    ]);
    const bytes = await receiptBytes(j);
    const r = await verifyReceipt(bytes, publishedReceiptHooks().options);
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
  });
});
