/**
 * The tree, its incremental state and proofs (spec/PROOFS.md §4–§7, §9.1–§9.3), against the independent
 * recursive reference in reference.ts: roots at every size, proofs that verify, and every mutation of a
 * proof, root, size or index refused with a code — never an exception.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  EMPTY_ROOT,
  MemoryTree,
  TreeFrontier,
  consistencySpans,
  frontierOf,
  inclusionSpans,
  leafHash,
  nodeHash,
  perfectNodes,
  proveConsistency,
  proveInclusion,
  rootOfLeaves,
  stepLeafHash,
  tilePath,
  tileReader,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
  verifyRange,
  ProofError,
  type NodeReader,
} from '../../src/proofs/index.js';
import { bitLength, isPowerOfTwo, popCount, splitPoint } from '../../src/proofs/math.js';
import { hex, leaves, refConsistency, refLeaf, refPath, refRoot, sha } from './reference.js';

const ALL = leaves(300);
const flip = (h: Uint8Array, bit = 0): Uint8Array => {
  const c = h.slice();
  c[bit >> 3]! ^= 1 << (bit & 7);
  return c;
};

function treeOf(n: number): MemoryTree {
  const t = new MemoryTree();
  for (const l of ALL.slice(0, n)) t.append(l);
  return t;
}

describe('hashing (RFC 6962 §2.1)', () => {
  test('leaf and node hashes are domain-separated SHA-256', () => {
    const d = new TextEncoder().encode('x');
    expect(hex(leafHash(d))).toBe(hex(refLeaf(d)));
    expect(hex(nodeHash(ALL[0]!, ALL[1]!))).toBe(hex(sha(Uint8Array.of(1), ALL[0]!, ALL[1]!)));
    expect(hex(EMPTY_ROOT)).toBe(hex(sha()));
  });

  test('a step leaf is the leaf hash of the 32 bytes of its step_hash', () => {
    const digest = 'sha256:' + 'ab'.repeat(32);
    expect(hex(stepLeafHash(digest)!)).toBe(hex(refLeaf(new Uint8Array(32).fill(0xab))));
  });

  test.each([
    '',
    'sha256:' + 'AB'.repeat(32),
    'sha256:' + 'ab'.repeat(31),
    'sha512:' + 'ab'.repeat(32),
    'sha256:' + 'ab'.repeat(32) + '\n',
    42 as unknown as string,
  ])('stepLeafHash(%j) is null', (s) => {
    expect(stepLeafHash(s)).toBeNull();
  });

  test('rootOfLeaves is MTH for every size up to 300', () => {
    for (let n = 0; n <= 300; n++)
      expect(hex(rootOfLeaves(ALL.slice(0, n))), `size ${n}`).toBe(hex(refRoot(ALL.slice(0, n))));
  });
});

describe('integer helpers beyond 32 bits', () => {
  const big = (n: bigint): number => Number(n);
  test.each([1n, 2n, 3n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 32n + 1n, 2n ** 52n + 12345n, 2n ** 53n - 1n])(
    '%s',
    (n) => {
      expect(bitLength(big(n))).toBe(n.toString(2).length);
      expect(popCount(big(n))).toBe([...n.toString(2)].filter((c) => c === '1').length);
      expect(isPowerOfTwo(big(n))).toBe((n & (n - 1n)) === 0n);
      if (n >= 2n) {
        let p = 1n;
        while (p * 2n < n) p *= 2n;
        expect(splitPoint(big(n))).toBe(big(p));
      }
    },
  );
});

describe('the frontier (PROOFS.md §5)', () => {
  test('its root equals the from-scratch root at every size from 0 to 300', () => {
    const f = new TreeFrontier();
    expect(hex(f.root())).toBe(hex(EMPTY_ROOT));
    for (let n = 1; n <= 300; n++) {
      f.append(ALL[n - 1]!);
      expect(f.size).toBe(n);
      expect(hex(f.root()), `size ${n}`).toBe(hex(refRoot(ALL.slice(0, n))));
      expect(f.nodes().length).toBe(popCount(n));
    }
  });

  test('a serialized state resumes exactly where it left off', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 100 }), (n, more) => {
        const f = new TreeFrontier();
        for (const l of ALL.slice(0, n)) f.append(l);
        const text = f.serialize();
        expect(JSON.parse(text)).toEqual(f.toJSON());
        const g = TreeFrontier.parse(text);
        const h = TreeFrontier.parse(f.toJSON());
        for (const l of ALL.slice(n, n + more)) {
          g.append(l);
          h.append(l);
        }
        expect(hex(g.root())).toBe(hex(refRoot(ALL.slice(0, n + more))));
        expect(hex(h.root())).toBe(hex(g.root()));
      }),
      { numRuns: 60 },
    );
  });

  test('it reports every perfect node it completes, as a MemoryTree stores them', () => {
    const seen: string[] = [];
    const f = new TreeFrontier();
    for (const l of ALL.slice(0, 37)) f.append(l, (level, index, h) => seen.push(`${level}/${index}/${hex(h)}`));
    const t = treeOf(37);
    const expected = seen.map((s) => {
      const [level, index] = s.split('/').map(Number) as [number, number];
      return `${level}/${index}/${hex(t.readNodes([{ level, index }])[0]!)}`;
    });
    expect(seen).toEqual(expected);
    expect(seen.length).toBe(37 + (37 - popCount(37))); // every leaf, and every interior node of the 32 + 4 + 1 forest
  });

  test('frontierOf builds the same state in one streaming pass', async () => {
    async function* stream() {
      for (const l of ALL.slice(0, 123)) yield l;
    }
    expect((await frontierOf(stream())).serialize()).toBe((await frontierOf(ALL.slice(0, 123))).serialize());
    expect(hex((await frontierOf(stream())).root())).toBe(hex(refRoot(ALL.slice(0, 123))));
  });

  const good = new TreeFrontier();
  for (const l of ALL.slice(0, 5)) good.append(l);
  const state = good.toJSON();
  test.each([
    ['not JSON', '{'],
    ['not an object', '[]'],
    ['another format', { ...state, format: 'stepchain-tree/v2' }],
    ['a missing member', { format: state.format, size: 5 }],
    ['an extra member', { ...state, head: null }],
    ['a fractional size', { ...state, size: 5.5 }],
    ['a negative size', { ...state, size: -1 }],
    ['too few nodes for the size', { ...state, nodes: state.nodes.slice(1) }],
    ['too many nodes for the size', { ...state, size: 4 }],
    ['a node that is not 32 bytes', { ...state, nodes: [state.nodes[0], 'AAAA'] }],
    ['a node in non-canonical base64', { ...state, nodes: [state.nodes[0], state.nodes[1]!.replace(/=$/, '')] }],
  ])('a state with %s is refused with TREE_STATE_INVALID', (_, bad) => {
    expect(() => TreeFrontier.parse(bad)).toThrow(expect.objectContaining({ code: 'TREE_STATE_INVALID' }));
  });

  test('append refuses what is not a 32-byte hash', () => {
    expect(() => new TreeFrontier().append(new Uint8Array(31))).toThrow(ProofError);
  });
});

describe('node readers (PROOFS.md §6)', () => {
  test('perfectNodes splits a right edge into its perfect subtrees, largest first', () => {
    expect(perfectNodes({ start: 0, end: 13 })).toEqual([
      { level: 3, index: 0 },
      { level: 2, index: 2 },
      { level: 0, index: 12 },
    ]);
    expect(perfectNodes({ start: 8, end: 16 })).toEqual([{ level: 3, index: 1 }]);
    // A span that is not an RFC subtree still splits into aligned perfect subtrees.
    expect(perfectNodes({ start: 3, end: 8 })).toEqual([
      { level: 0, index: 3 },
      { level: 2, index: 1 },
    ]);
  });

  test('treeRoot gives the root of every earlier size from perfect nodes', async () => {
    const t = treeOf(300);
    for (let n = 0; n <= 300; n += 7) expect(hex(await treeRoot(t, n))).toBe(hex(refRoot(ALL.slice(0, n))));
  });

  test('a tile reader over tlog-tiles tiles answers exactly what the memory tree answers', async () => {
    const size = 70_000;
    const many = leaves(size, 'tiles');
    const tiles = new Map<string, Uint8Array[]>();
    const mem = new MemoryTree();
    for (const l of many) {
      mem.append(l, (level, index, h) => {
        if (level % 8 !== 0) return;
        const key = `${level / 8}/${Math.floor(index / 256)}`;
        if (!tiles.has(key)) tiles.set(key, []);
        tiles.get(key)![index % 256] = h.slice();
      });
    }
    // tlog-tiles' own example: 273 full level-0 tiles plus a partial one of width 112, one full and one partial (17) level-1 tile.
    expect([...tiles.keys()].filter((k) => k.startsWith('0/')).length).toBe(274);
    expect(tiles.get('0/273')!.length).toBe(112);
    expect(tiles.get('1/1')!.length).toBe(17);
    const fetched: string[] = [];
    // One fetch at a time: a store may read its tiles on one connection (pg: overlapping queries, outsider H).
    let inFlight = 0;
    let most = 0;
    const reader = tileReader(async (level, index, width) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      fetched.push(`${level}/${index}`);
      const t = tiles.get(`${level}/${index}`) ?? [];
      expect(t.length).toBeGreaterThanOrEqual(width);
      return Buffer.concat(t);
    });
    for (const [from, to, n] of [
      [0, 0, size],
      [500, 520, size],
      [69_999, 69_999, size],
      [1234, 1234, 65_536],
      [65_535, 65_600, 69_000],
    ] as const) {
      expect((await proveInclusion(reader, from, to, n)).map(hex)).toEqual(
        (await proveInclusion(mem, from, to, n)).map(hex),
      );
    }
    for (const [m, n] of [
      [1, size],
      [256, 70_000],
      [65_536, 69_999],
      [12_345, 67_890],
    ] as const) {
      expect((await proveConsistency(reader, m, n)).map(hex)).toEqual((await proveConsistency(mem, m, n)).map(hex));
    }
    expect(fetched.length).toBeGreaterThan(0);
    expect(most).toBe(1);
    expect(hex(await treeRoot(reader, size))).toBe(hex(rootOfLeaves(many)));
    // A second proof through the same tiles is served from the reader's cache; a one-tile cache still answers right.
    const before = fetched.length;
    await proveInclusion(reader, 500, 520, size);
    expect(fetched.length).toBe(before);
    const tiny = tileReader((level, index) => Buffer.concat(tiles.get(`${level}/${index}`)!), { cache: 1 });
    for (const i of [0, 4097, 69_999])
      expect((await proveInclusion(tiny, i, i, size)).map(hex)).toEqual(
        (await proveInclusion(mem, i, i, size)).map(hex),
      );
  });

  test('tilePath follows tlog-tiles', () => {
    expect(tilePath(0, 1234067)).toBe('tile/0/x001/x234/067');
    expect(tilePath(2, 0)).toBe('tile/2/000');
    expect(tilePath(1, 273, 112)).toBe('tile/1/273.p/112');
  });

  test('a reader that answers badly is an error of the reader, not a wrong proof', async () => {
    const short: NodeReader = { readNodes: (ids) => ids.slice(1).map(() => new Uint8Array(32)) };
    await expect(proveInclusion(short, 0, 0, 8)).rejects.toMatchObject({ code: 'NODE_READER_FAILED' });
    const wrong: NodeReader = { readNodes: (ids) => ids.map(() => new Uint8Array(31)) };
    await expect(proveConsistency(wrong, 3, 8)).rejects.toMatchObject({ code: 'NODE_READER_FAILED' });
    await expect(proveInclusion(treeOf(8), 0, 0, 9)).rejects.toMatchObject({ code: 'NODE_READER_FAILED' });
  });

  test.each([
    [5, 4, 8],
    [0, 8, 8],
    [-1, 0, 8],
    [0.5, 1, 8],
    [0, 0, 0],
  ])('proveInclusion(%d..%d of %d) is ARGUMENT_INVALID', async (from, to, size) => {
    await expect(proveInclusion(treeOf(8), from, to, size)).rejects.toMatchObject({ code: 'ARGUMENT_INVALID' });
  });
  test('proveConsistency refuses a shrinking tree', async () => {
    await expect(proveConsistency(treeOf(8), 5, 4)).rejects.toMatchObject({ code: 'ARGUMENT_INVALID' });
  });
});

describe('proofs against the recursive reference, exhaustively for small trees', () => {
  const tree = treeOf(64);
  test('every inclusion proof in trees of 1..64 leaves is the RFC audit path and verifies', async () => {
    for (let n = 1; n <= 64; n++) {
      const root = refRoot(ALL.slice(0, n));
      for (let i = 0; i < n; i++) {
        const proof = await proveInclusion(tree, i, i, n);
        expect(proof.map(hex)).toEqual(refPath(i, ALL.slice(0, n)).map(hex));
        expect(verifyInclusion({ index: i, size: n, leaf: ALL[i]!, proof, root })).toEqual({ ok: true });
      }
    }
  });

  test('every range proof in trees of 1..40 leaves verifies, and is at most two audit paths long', async () => {
    for (let n = 1; n <= 40; n++) {
      const root = refRoot(ALL.slice(0, n));
      for (let a = 0; a < n; a++) {
        for (let b = a; b < n; b++) {
          const proof = await proveInclusion(tree, a, b, n);
          expect(proof.length).toBeLessThanOrEqual(inclusionSpans(a, a, n).length + inclusionSpans(b, b, n).length);
          expect(
            verifyRange({ from: a, to: b, size: n, leaves: ALL.slice(a, b + 1), proof, root }),
            `${a}..${b} of ${n}`,
          ).toEqual({ ok: true });
        }
      }
    }
  });

  test('every consistency proof between trees of 0..64 leaves is RFC 9162 §2.1.4.1 and verifies', async () => {
    for (let n = 0; n <= 64; n++) {
      for (let m = 0; m <= n; m++) {
        const proof = await proveConsistency(tree, m, n);
        expect(proof.map(hex)).toEqual(refConsistency(m, ALL.slice(0, n)).map(hex));
        expect(
          verifyConsistency({
            oldSize: m,
            oldRoot: refRoot(ALL.slice(0, m)),
            size: n,
            root: refRoot(ALL.slice(0, n)),
            proof,
          }),
          `${m} → ${n}`,
        ).toEqual({ ok: true });
      }
    }
  });
});

describe('mutations are refused (fast-check)', () => {
  const tree = treeOf(300);
  const roots = Array.from({ length: 301 }, (_, n) => refRoot(ALL.slice(0, n)));
  const code = (v: { ok: boolean; problem?: { code: string } }): string => (v.ok ? 'OK' : v.problem!.code);

  test('inclusion and range proofs: any bit of any hash, the index, the size, the root, one hash more or less', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 300 })
          .chain((n) =>
            fc.tuple(
              fc.constant(n),
              fc.integer({ min: 0, max: n - 1 }),
              fc.integer({ min: 0, max: 20 }),
              fc.nat(),
              fc.nat(255),
            ),
          ),
        async ([n, a, span, pick, bit]) => {
          const b = Math.min(n - 1, a + span);
          const proof = await proveInclusion(tree, a, b, n);
          const input = { from: a, to: b, size: n, leaves: ALL.slice(a, b + 1), proof, root: roots[n]! };
          expect(verifyRange(input)).toEqual({ ok: true });
          if (proof.length > 0) {
            const i = pick % proof.length;
            expect(code(verifyRange({ ...input, proof: proof.map((h, j) => (j === i ? flip(h, bit) : h)) }))).toBe(
              'ROOT_MISMATCH',
            );
            expect(code(verifyRange({ ...input, proof: proof.slice(1) }))).toBe('PROOF_LENGTH_INVALID');
          }
          expect(code(verifyRange({ ...input, proof: [...proof, roots[n]!] }))).toBe('PROOF_LENGTH_INVALID');
          expect(code(verifyRange({ ...input, root: flip(roots[n]!, bit) }))).toBe('ROOT_MISMATCH');
          expect(
            code(
              verifyRange({
                ...input,
                leaves: input.leaves.map((l, j) => (j === pick % input.leaves.length ? flip(l, bit) : l)),
              }),
            ),
          ).toBe('ROOT_MISMATCH');
          if (a + 1 <= n - 1 && b + 1 <= n - 1)
            expect(code(verifyRange({ ...input, from: a + 1, to: b + 1 }))).not.toBe('OK');
          if (a > 0) expect(code(verifyRange({ ...input, from: a - 1, to: b - 1 }))).not.toBe('OK');
          // The size alone is not mutated: an audit path need not pin it (leaf 0's path in a tree of 7 also
          // fits 8), which is why a verifier takes size and root together from one signed checkpoint (§9.2).
          if (a === b) {
            const single = { index: a, size: n, leaf: ALL[a]!, proof, root: roots[n]! };
            expect(verifyInclusion(single)).toEqual({ ok: true });
            if (a + 1 < n) expect(code(verifyInclusion({ ...single, index: a + 1 }))).not.toBe('OK');
            if (proof.length > 0)
              expect(
                code(
                  verifyInclusion({
                    ...single,
                    proof: proof.map((h, j) => (j === pick % proof.length ? flip(h, bit) : h)),
                  }),
                ),
              ).toBe('ROOT_MISMATCH');
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('consistency proofs: any bit of any hash, either root, either size, one hash more or less', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 300 })
          .chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n }), fc.nat(), fc.nat(255))),
        async ([n, m, pick, bit]) => {
          const proof = await proveConsistency(tree, m, n);
          const input = { oldSize: m, oldRoot: roots[m]!, size: n, root: roots[n]!, proof };
          expect(verifyConsistency(input)).toEqual({ ok: true });
          expect(code(verifyConsistency({ ...input, oldRoot: flip(roots[m]!, bit) }))).toBe('INCONSISTENT');
          expect(code(verifyConsistency({ ...input, root: flip(roots[n]!, bit) }))).toBe('INCONSISTENT');
          if (proof.length > 0) {
            const i = pick % proof.length;
            expect(
              code(verifyConsistency({ ...input, proof: proof.map((h, j) => (j === i ? flip(h, bit) : h)) })),
            ).toBe('INCONSISTENT');
            expect(code(verifyConsistency({ ...input, proof: proof.slice(0, -1) }))).toBe('PROOF_LENGTH_INVALID');
          }
          expect(code(verifyConsistency({ ...input, proof: [...proof, roots[1]!] }))).toBe('PROOF_LENGTH_INVALID');
          if (m > 1 && m < n)
            expect(code(verifyConsistency({ ...input, oldSize: m - 1, oldRoot: roots[m - 1]! }))).not.toBe('OK');
          if (m < n - 1)
            expect(code(verifyConsistency({ ...input, oldSize: m + 1, oldRoot: roots[m + 1]! }))).not.toBe('OK');
          if (n < 300 && m < n)
            expect(code(verifyConsistency({ ...input, size: n + 1, root: roots[n + 1]! }))).not.toBe('OK');
          if (m < n)
            expect(
              code(verifyConsistency({ ...input, oldSize: n, oldRoot: roots[n]!, size: m, root: roots[m]! })),
            ).toBe('SIZE_DECREASED');
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('hostile input never throws', () => {
  test('verifiers answer PROOF_MALFORMED for anything of the wrong shape', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (x, y, z) => {
        for (const v of [
          verifyInclusion({ index: x, size: y, leaf: z, proof: x, root: y } as never),
          verifyRange({ from: x, to: y, size: z, leaves: x, proof: y, root: z } as never),
          verifyConsistency({ oldSize: x, oldRoot: y, size: z, root: x, proof: y } as never),
          verifyInclusion(x as never),
          verifyConsistency(undefined as never),
        ])
          expect(v.ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  test('the length of a single-step proof is inner + popcount(index >> inner), inner = bitlen(index XOR (size − 1)) (PROOFS.md §7.3)', () => {
    const formula = (i: bigint, n: bigint): number => {
      const inner = BigInt((i ^ (n - 1n)).toString(2).replace(/^0+/, '').length);
      return Number(inner) + [...(i >> inner).toString(2)].filter((c) => c === '1').length;
    };
    fc.assert(
      fc.property(
        fc
          .bigInt({ min: 1n, max: 2n ** 53n - 1n })
          .chain((n) => fc.tuple(fc.constant(n), fc.bigInt({ min: 0n, max: n - 1n }))),
        ([n, i]) => {
          expect(inclusionSpans(Number(i), Number(i), Number(n)).length).toBe(formula(i, n));
        },
      ),
      { numRuns: 2000 },
    );
    for (let n = 1n; n <= 70n; n++)
      for (let i = 0n; i < n; i++) expect(inclusionSpans(Number(i), Number(i), Number(n)).length).toBe(formula(i, n));
  });

  test('huge sizes are checked arithmetically: a wrong-length proof costs no hashing', () => {
    const max = Number.MAX_SAFE_INTEGER;
    expect(inclusionSpans(0, 0, max).length).toBe(53);
    expect(inclusionSpans(max - 1, max - 1, max).length).toBe(52);
    expect(consistencySpans(1, max).length).toBeLessThanOrEqual(54);
    const h = new Uint8Array(32);
    expect(
      verifyInclusion({ index: max - 1, size: max, leaf: h, proof: Array(10_000).fill(h), root: h }),
    ).toMatchObject({ ok: false, problem: { code: 'PROOF_LENGTH_INVALID' } });
    expect(verifyInclusion({ index: max - 1, size: max, leaf: h, proof: Array(52).fill(h), root: h })).toMatchObject({
      ok: false,
      problem: { code: 'ROOT_MISMATCH' },
    });
    expect(
      verifyConsistency({
        oldSize: 3,
        oldRoot: h,
        size: max,
        root: h,
        proof: Array(consistencySpans(3, max).length).fill(h),
      }),
    ).toMatchObject({ ok: false, problem: { code: 'INCONSISTENT' } });
    expect(verifyInclusion({ index: 0, size: max + 1, leaf: h, proof: [], root: h })).toMatchObject({
      ok: false,
      problem: { code: 'PROOF_MALFORMED' },
    });
    expect(verifyRange({ from: 0, to: max - 1, size: max, leaves: [h], proof: [], root: h })).toMatchObject({
      ok: false,
      problem: { code: 'PROOF_MALFORMED' },
    });
  });

  test('an index past the tree is INDEX_OUT_OF_RANGE; a shrinking tree SIZE_DECREASED; the empty tree has the empty root', () => {
    const h = ALL[0]!;
    expect(verifyInclusion({ index: 3, size: 3, leaf: h, proof: [], root: h })).toMatchObject({
      problem: { code: 'INDEX_OUT_OF_RANGE' },
    });
    expect(verifyRange({ from: 2, to: 1, size: 3, leaves: [], proof: [], root: h })).toMatchObject({
      problem: { code: 'INDEX_OUT_OF_RANGE' },
    });
    expect(verifyConsistency({ oldSize: 0, oldRoot: EMPTY_ROOT, size: 5, root: h, proof: [] })).toEqual({ ok: true });
    expect(verifyConsistency({ oldSize: 0, oldRoot: h, size: 5, root: h, proof: [] })).toMatchObject({
      problem: { code: 'INCONSISTENT' },
    });
    expect(verifyConsistency({ oldSize: 5, oldRoot: h, size: 5, root: flip(h), proof: [] })).toMatchObject({
      problem: { code: 'INCONSISTENT' },
    });
  });
});
