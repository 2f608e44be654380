/**
 * Alignment of two windows of step digests (spec/DIFF.md §5). Myers's O((N+M)D) shortest edit script
 * ("An O(ND) Difference Algorithm and Its Variations", 1986) finds a longest common subsequence; the
 * engine only needs where that alignment first matches two steps, because everything before it is one
 * block of changed, inserted and deleted steps and everything from it on is re-checked in lockstep.
 */

/**
 * The first matched pair [i, j] (a[i] === b[j]) on a shortest edit script from a to b, or null when the
 * two share nothing. Ties are broken as in Myers's paper: deletions before insertions.
 */
export function firstMatch(a: readonly string[], b: readonly string[]): [number, number] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return null;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] holds V for k in [-d, d] after round d (index k + d).
  const trace: Int32Array[] = [];
  let end = -1;
  for (let d = 0; d <= max && end < 0; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        end = d;
        break;
      }
    }
    trace.push(v.slice(off - d, off + d + 1));
  }
  // Walk back from (n, m); the last snake seen (closest to the start) holds the first match.
  let x = n;
  let y = m;
  let first: [number, number] | null = null;
  for (let d = end; d >= 0; d--) {
    const k = x - y;
    let startX: number;
    let startY: number;
    let prevX = 0;
    let prevY = 0;
    if (d === 0) {
      startX = 0;
      startY = 0;
    } else {
      const prev = trace[d - 1]!;
      const at = (kk: number): number => prev[kk + d - 1]!;
      const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
      const prevK = down ? k + 1 : k - 1;
      prevX = at(prevK);
      prevY = prevX - prevK;
      startX = down ? prevX : prevX + 1;
      startY = down ? prevY + 1 : prevY;
    }
    if (x > startX) first = [startX, startY];
    x = prevX;
    y = prevY;
  }
  return first;
}

/**
 * Pairs the steps of an unmatched block: `min(na, nb)` monotone pairs maximizing the summed similarity
 * (so a retry's failed attempt is reported as inserted and its successful twin as changed), ties going
 * to the earliest pairing. Returns the pairs in order as [i, j].
 */
export function pairBlock(na: number, nb: number, similarity: (i: number, j: number) => number): [number, number][] {
  const pairs: [number, number][] = [];
  if (na === 0 || nb === 0) return pairs;
  if (na === nb) {
    for (let i = 0; i < na; i++) pairs.push([i, i]);
    return pairs;
  }
  const swap = na > nb;
  const s = swap ? nb : na; // the shorter side: every one of its steps is paired
  const l = swap ? na : nb;
  const sim = swap ? (i: number, j: number) => similarity(j, i) : similarity;
  // best[x][y]: the best total pairing short[0..x) within long[0..y), every short step paired (y >= x).
  const width = l + 1;
  const best = new Float64Array((s + 1) * width).fill(-Infinity);
  for (let y = 0; y <= l; y++) best[y] = 0;
  for (let x = 1; x <= s; x++) {
    for (let y = x; y <= l; y++) {
      const skip = best[x * width + y - 1]!;
      const take = best[(x - 1) * width + y - 1]! + sim(x - 1, y - 1);
      best[x * width + y] = Math.max(skip, take);
    }
  }
  // Backtrack preferring to skip the later long step on ties, which pairs as early as possible.
  let x = s;
  let y = l;
  while (x > 0) {
    if (y > x && best[x * width + y - 1]! >= best[x * width + y]!) {
      y--;
      continue;
    }
    pairs.push(swap ? [y - 1, x - 1] : [x - 1, y - 1]);
    x--;
    y--;
  }
  return pairs.reverse();
}
