/**
 * Latency samples and percentiles for the benchmarks. Every sample is kept (a Float64Array that
 * doubles when full), and percentiles are exact nearest-rank values over all of them: no histogram
 * buckets, no reservoir, so p99 of a 20-second run is the real 99th percentile.
 */

export class Samples {
  constructor(initial = 4096) {
    /** @type {Float64Array} */
    this.values = new Float64Array(initial);
    this.length = 0;
  }

  /** @param {number} v */
  add(v) {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = v;
  }

  /**
   * Sorted copy of the samples; sort once, then ask for many percentiles.
   * @returns {Float64Array}
   */
  sorted() {
    return this.values.slice(0, this.length).sort();
  }
}

/**
 * Nearest-rank percentile of sorted values: the smallest value with at least p% of the samples at or
 * below it. NaN when there are no samples.
 * @param {Float64Array} sorted ascending
 * @param {number} p in (0, 100]
 */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return /** @type {number} */ (sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]);
}

/**
 * p50/p90/p99/max/mean of a set of samples, in the samples' unit.
 * @param {Samples} s
 * @returns {{ count: number, p50: number, p90: number, p99: number, max: number, mean: number }}
 */
export function summarize(s) {
  const sorted = s.sorted();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += /** @type {number} */ (sorted[i]);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : /** @type {number} */ (sorted[sorted.length - 1]),
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
  };
}

/**
 * Least-squares slope of `ys` against `xs` (units of y per unit of x), or null with fewer than 3
 * points or no spread in x.
 * @param {readonly number[]} xs
 * @param {readonly number[]} ys
 * @returns {number | null}
 */
export function slope(xs, ys) {
  const n = Math.min(xs.length, ys.length);
  if (n < 3) return null;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += /** @type {number} */ (xs[i]);
    my += /** @type {number} */ (ys[i]);
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    const dx = /** @type {number} */ (xs[i]) - mx;
    sxy += dx * (/** @type {number} */ (ys[i]) - my);
    sxx += dx * dx;
  }
  return sxx === 0 ? null : sxy / sxx;
}
