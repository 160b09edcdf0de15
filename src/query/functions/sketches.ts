/**
 * Bounded, mergeable summaries for aggregates whose exact state would grow with the data:
 * distinct counts (an exact set up to 10,000 values, then a HyperLogLog with 4,096 registers,
 * about 1.6% standard error) and percentiles (exact values up to 5,000, then a DDSketch-style
 * log-bucket histogram with the requested relative accuracy, at most 4,096 buckets per sign).
 * Both are plain objects, arrays and Maps so they survive structured cloning, and their merges
 * give the same answer in any order while below the exact thresholds.
 */

const EXACT_DISTINCT = 10_000;
const HLL_P = 12;
const HLL_M = 1 << HLL_P;

export interface DistinctState {
  /** Exact values while small; null once converted. */
  ex: Map<string, true> | null;
  /** HyperLogLog registers once large. */
  h: number[] | null;
}

function hash32(s: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function hllAdd(regs: number[], v: string): void {
  const idx = hash32(v, 0x811c9dc5) >>> (32 - HLL_P);
  const w = hash32(v, 0x9747b28c);
  // Rank: position of the first 1 bit in a 32-bit word (33 when all zero).
  const rank = w === 0 ? 33 : Math.clz32(w) + 1;
  if (rank > regs[idx]!) regs[idx] = rank;
}

export function distinctInit(): DistinctState {
  return { ex: new Map(), h: null };
}

function toHll(s: DistinctState): number[] {
  if (s.h !== null) return s.h;
  const regs = new Array<number>(HLL_M).fill(0);
  for (const v of s.ex!.keys()) hllAdd(regs, v);
  s.ex = null;
  s.h = regs;
  return regs;
}

export function distinctAdd(s: DistinctState, v: string): void {
  if (s.ex !== null) {
    s.ex.set(v, true);
    if (s.ex.size > EXACT_DISTINCT) toHll(s);
    return;
  }
  hllAdd(s.h!, v);
}

export function distinctMerge(into: DistinctState, other: DistinctState): void {
  if (into.ex !== null && other.ex !== null) {
    for (const v of other.ex.keys()) into.ex.set(v, true);
    if (into.ex.size > EXACT_DISTINCT) toHll(into);
    return;
  }
  const a = toHll(into);
  const b = other.h ?? toHll({ ex: new Map(other.ex!), h: null });
  for (let i = 0; i < HLL_M; i++) if (b[i]! > a[i]!) a[i] = b[i]!;
}

export function distinctCount(s: DistinctState): number {
  if (s.ex !== null) return s.ex.size;
  const regs = s.h!;
  let sum = 0;
  let zeros = 0;
  for (const r of regs) {
    sum += 2 ** -r;
    if (r === 0) zeros++;
  }
  const alpha = 0.7213 / (1 + 1.079 / HLL_M);
  const est = (alpha * HLL_M * HLL_M) / sum;
  // Small-range correction (linear counting).
  if (est <= 2.5 * HLL_M && zeros > 0) return Math.round(HLL_M * Math.log(HLL_M / zeros));
  return Math.round(est);
}

// --- percentiles ----------------------------------------------------------------------------------

const EXACT_VALUES = 5000;
const MAX_BUCKETS = 4096;

export interface QuantileState {
  /** Exact values while few; null once converted. */
  v: number[] | null;
  /** Relative accuracy of the sketch. */
  a: number;
  pos: Map<number, number>;
  neg: Map<number, number>;
  zero: number;
}

export function quantileInit(accuracy: number): QuantileState {
  return { v: [], a: accuracy, pos: new Map(), neg: new Map(), zero: 0 };
}

function gammaOf(a: number): number {
  return (1 + a) / (1 - a);
}

function collapse(m: Map<number, number>): void {
  if (m.size <= MAX_BUCKETS) return;
  // Fold the smallest-magnitude buckets into one, as DDSketch does: large values keep accuracy.
  const keys = [...m.keys()].sort((x, y) => x - y);
  const cut = keys[keys.length - MAX_BUCKETS]!;
  let folded = 0;
  for (const k of keys) {
    if (k >= cut) break;
    folded += m.get(k)!;
    m.delete(k);
  }
  m.set(cut, (m.get(cut) ?? 0) + folded);
}

function sketchAdd(s: QuantileState, x: number, count: number): void {
  if (x === 0) {
    s.zero += count;
    return;
  }
  const lg = Math.log(gammaOf(s.a));
  const m = x > 0 ? s.pos : s.neg;
  const k = Math.ceil(Math.log(Math.abs(x)) / lg);
  m.set(k, (m.get(k) ?? 0) + count);
  collapse(m);
}

function toSketch(s: QuantileState): void {
  if (s.v === null) return;
  const vals = s.v;
  s.v = null;
  for (const x of vals) sketchAdd(s, x, 1);
}

export function quantileAdd(s: QuantileState, x: number): void {
  if (s.v !== null) {
    s.v.push(x);
    if (s.v.length > EXACT_VALUES) toSketch(s);
    return;
  }
  sketchAdd(s, x, 1);
}

/** How many exact values a quantile state keeps before it becomes a sketch. */
export const QUANTILE_EXACT_VALUES = EXACT_VALUES;

/**
 * Adds `x` `count` times to a state that would be a sketch after them (the column path): the same
 * state as `count` quantileAdd calls, since a sketch's buckets do not depend on the order of adds
 * (collapsing keeps the largest keys seen and folds the rest into the smallest kept).
 */
export function quantileAddMany(s: QuantileState, x: number, count: number): void {
  toSketch(s);
  sketchAdd(s, x, count);
}

export function quantileMerge(into: QuantileState, other: QuantileState): void {
  if (into.v !== null && other.v !== null && into.v.length + other.v.length <= EXACT_VALUES) {
    for (const x of other.v) into.v.push(x);
    return;
  }
  toSketch(into);
  if (other.v !== null) {
    for (const x of other.v) sketchAdd(into, x, 1);
    return;
  }
  into.zero += other.zero;
  for (const [k, c] of other.pos) into.pos.set(k, (into.pos.get(k) ?? 0) + c);
  for (const [k, c] of other.neg) into.neg.set(k, (into.neg.get(k) ?? 0) + c);
  collapse(into.pos);
  collapse(into.neg);
}

export function quantileCount(s: QuantileState): number {
  if (s.v !== null) return s.v.length;
  let n = s.zero;
  for (const c of s.pos.values()) n += c;
  for (const c of s.neg.values()) n += c;
  return n;
}

/**
 * The values at percentiles `ps` (0..100) by nearest rank: the smallest value with at least p% of
 * the values at or below it. Undefined when there are no values.
 */
export function quantiles(s: QuantileState, ps: readonly number[]): (number | undefined)[] {
  const n = quantileCount(s);
  if (n === 0) return ps.map(() => undefined);
  const rankOf = (p: number): number => Math.min(n, Math.max(1, Math.ceil((p / 100) * n)));
  if (s.v !== null) {
    const sorted = [...s.v].sort((x, y) => x - y);
    return ps.map((p) => sorted[rankOf(p) - 1]);
  }
  const g = gammaOf(s.a);
  const valueOf = (k: number): number => (2 * g ** k) / (g + 1);
  // Buckets in ascending value order: negatives (largest magnitude first), zero, positives.
  const order: [number, number][] = [];
  for (const k of [...s.neg.keys()].sort((x, y) => y - x)) order.push([-valueOf(k), s.neg.get(k)!]);
  if (s.zero > 0) order.push([0, s.zero]);
  for (const k of [...s.pos.keys()].sort((x, y) => x - y)) order.push([valueOf(k), s.pos.get(k)!]);
  return ps.map((p) => {
    const want = rankOf(p);
    let seen = 0;
    for (const [v, c] of order) {
      seen += c;
      if (seen >= want) return v;
    }
    return order[order.length - 1]![0];
  });
}
