/**
 * The `unit` parameter of timeChart() and bucket() (query-functions.md §1): a conversion per
 * function, `"bytes/bucket to Mbytes/hour"`, applied to that function's output values. A side is a
 * quantity with an optional decimal (k M G T P) or binary (Ki Mi Gi Ti Pi) prefix, optionally per a
 * time: `bucket` or `span` (the bucket's span) or a unit such as `s`, `minute`, `hour`, `day`. Both
 * sides name the same quantity (singular or plural; `B` is bytes), and both or neither are rates. One conversion applies to every
 * function, or there is one per function.
 */
import { parseRelative } from '../time.js';
import { formatNumber, parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';

const PREFIXES: Readonly<Record<string, number>> = {
  '': 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
};

interface Side {
  quantity: string;
  /** The time the value is per, in ms; null: not a rate. */
  per: number | null;
}

function side(text: string, spanMs: number): Side | string {
  const [quantity = '', per, extra] = text.trim().split('/').map((s) => s.trim());
  if (quantity === '' || extra !== undefined) return `"${text.trim()}" is not a unit such as bytes or Mbytes/hour`;
  if (per === undefined) return { quantity, per: null };
  const p = per.toLowerCase();
  if (p === 'bucket' || p === 'span') return { quantity, per: spanMs };
  const ms = parseRelative(/^\d/.test(p) ? p : `1${p}`);
  if (ms === null || ms <= 0) return `"${per}" is not a time such as bucket, second, minute, hour or day`;
  return { quantity, per: ms };
}

/** A quantity's name for comparing: singular, and `B` is bytes (`KiB`, `MB`). */
function canonical(q: string): string {
  return q === 'B' ? 'byte' : q.replace(/s$/, '');
}

/** The factor a prefix pair converts by, when the two quantities are one quantity with prefixes. */
function prefixFactor(from: string, to: string): number | null {
  let best: number | null = null;
  let bestLength = -1;
  for (const [pf, f] of Object.entries(PREFIXES)) {
    if (!from.startsWith(pf)) continue;
    for (const [pt, t] of Object.entries(PREFIXES)) {
      if (!to.startsWith(pt)) continue;
      const q = canonical(from.slice(pf.length));
      // The longest shared quantity: "bytes" to "Mbytes" is bytes with prefix M, not "ytes".
      if (q.length > 0 && q === canonical(to.slice(pt.length)) && q.length > bestLength) {
        best = f / t;
        bestLength = q.length;
      }
    }
  }
  return best;
}

/** The factor of one conversion `from to to`, or a message saying what is wrong with it. */
export function unitFactor(text: string, spanMs: number): number | string {
  const parts = text.split(/\s+to\s+/i);
  if (parts.length !== 2) return `"${text}" is not a conversion such as "bytes/bucket to Mbytes/hour"`;
  const from = side(parts[0]!, spanMs);
  if (typeof from === 'string') return from;
  const to = side(parts[1]!, spanMs);
  if (typeof to === 'string') return to;
  if ((from.per === null) !== (to.per === null)) return `"${text}": both sides are rates (x/time) or neither is`;
  const f = prefixFactor(from.quantity, to.quantity);
  if (f === null) return `"${text}": ${from.quantity} and ${to.quantity} are not the same quantity with prefixes (k, M, G, T, P, Ki, Mi, Gi, Ti, Pi)`;
  return from.per === null || to.per === null ? f : f * (to.per / from.per);
}

/**
 * The conversions of `unit=` for `functions` aggregate functions over buckets of `spanMs`: a factor
 * per function (1 where none is given), or null without `unit`.
 */
export function unitFactors(a: BoundArgs, functions: number, spanMs: number): number[] | null {
  const list = a.list('unit');
  if (list === undefined || list.length === 0) return null;
  if (list.length !== 1 && list.length !== functions) {
    return a.fail('unit', `parameter unit of function ${a.def.name} has ${list.length} conversions; give one, or one per function (${functions})`);
  }
  const factors = list.map((u) => {
    const f = unitFactor(u, spanMs);
    return typeof f === 'string' ? a.fail('unit', `parameter unit of function ${a.def.name}: ${f}`) : f;
  });
  return Array.from({ length: functions }, (_, i) => factors[list.length === 1 ? 0 : i]!);
}

/** A value converted by `factor` (a value that is not a number is left as it is). */
export function convertValue(v: string, factor: number): string {
  const x = parseNumber(v);
  return x === undefined ? v : formatNumber(x * factor);
}
