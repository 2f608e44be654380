// Timing helpers: every figure is the median of several runs, reported with the spread (min–max).
import { performance } from 'node:perf_hooks';

export function gc() {
  if (typeof globalThis.gc === 'function') {
    globalThis.gc();
    globalThis.gc();
  }
}

/**
 * Runs `fn` `reps` times (after `setup`, untimed, when given) and returns the per-run rates of
 * `units` units per second. `fn` may return the number of units it processed instead. `warmup` adds one
 * untimed run first (a number: that many), so the JIT's first passes are not measured runs. With `pair` ({ fn, units }), every
 * run of `fn` is preceded by a run of the reference `pair.fn`, and the result carries the median of the
 * per-run ratios (`pairRatio`): a ratio taken from adjacent runs is far less sensitive to other load on
 * the machine than two medians taken minutes apart.
 */
export async function measure({ reps, units, fn, setup, teardown, warmup = false, pair = null }) {
  const rates = [];
  const times = [];
  const ratios = [];
  for (let w = 0; w < Number(warmup); w++) {
    const ctx = setup ? await setup(-1) : undefined;
    await fn(ctx, -1);
    if (teardown) await teardown(ctx, -1);
    if (pair) await pair.fn();
  }
  for (let r = 0; r < reps; r++) {
    let refRate = null;
    if (pair) {
      gc();
      const t = performance.now();
      const done = await pair.fn();
      refRate = ((typeof done === 'number' ? done : pair.units) * 1000) / (performance.now() - t);
    }
    const ctx = setup ? await setup(r) : undefined;
    gc();
    const t0 = performance.now();
    const done = await fn(ctx, r);
    const ms = performance.now() - t0;
    if (teardown) await teardown(ctx, r);
    const n = typeof done === 'number' ? done : units;
    times.push(ms);
    rates.push((n * 1000) / ms);
    if (refRate !== null) ratios.push((n * 1000) / ms / refRate);
  }
  const out = summary(rates, times);
  if (ratios.length) {
    const s = [...ratios].sort((a, b) => a - b);
    Object.assign(out, { pairRatio: median(s), pairMin: s[0], pairMax: s[s.length - 1] });
  }
  return out;
}

export function summary(rates, times = []) {
  const s = [...rates].sort((a, b) => a - b);
  const t = [...times].sort((a, b) => a - b);
  return { median: median(s), min: s[0], max: s[s.length - 1], runs: s.length, ms: t.length ? median(t) : null };
}

export function median(sorted) {
  const n = sorted.length;
  if (n === 0) return NaN;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

export function fmtRate(x) {
  if (!Number.isFinite(x)) return '–';
  if (x >= 100_000) return `${Math.round(x / 1000)}k`;
  if (x >= 10_000) return `${(x / 1000).toFixed(1)}k`;
  if (x >= 1000) return `${(x / 1000).toFixed(2)}k`;
  return x >= 100 ? x.toFixed(0) : x.toFixed(1);
}

export function fmtRatio(x) {
  if (!Number.isFinite(x)) return '–';
  return x >= 10 ? `${x.toFixed(1)}×` : `${x.toFixed(2)}×`;
}
