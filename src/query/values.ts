/**
 * Numbers in a world of string values: how the query language reads a field value as a number and
 * how it prints a computed number back (integers without `.0`, floats with at most 15 significant
 * digits and no exponent in normal ranges, as the product prints `_avg` and friends).
 */

const NUMBER = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/** The number a value denotes, or undefined when it is not a plain decimal number ("", "0x1f", "NaN" are not). */
export function parseNumber(v: string | undefined): number | undefined {
  if (v === undefined || v.length === 0 || v.length > 400) return undefined;
  // Fast path for the common short integer: no regex.
  let plain = v.length <= 15;
  for (let i = 0; plain && i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (i === 0 && c === 45 && v.length > 1))) plain = false;
  }
  if (plain) return Number(v);
  if (!NUMBER.test(v)) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** Expands `1.5e-7` / `1e+21` into plain decimal digits. */
function expandExponent(s: string): string {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (m === null) return s;
  const sign = m[1]!;
  const digits = m[2]! + (m[3] ?? '');
  const exp = Number(m[4]);
  // The decimal point sits after the first digit; move it by `exp`.
  const point = 1 + exp;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * Prints a number as the product does: `12`, `-3`, `2.5`, `0.1` (not `0.1000000000000000055`),
 * `1234567.891`. NaN and infinities print as `NaN`, `Infinity`, `-Infinity` (callers normally
 * avoid producing them).
 */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Object.is(n, -0)) return '0';
  if (Number.isInteger(n)) return Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString();
  const rounded = Number(n.toPrecision(15));
  const s = String(rounded);
  return s.includes('e') ? expandExponent(s) : s;
}

/** Truthiness of an expression value: absent, "", "false" and "0" are false. */
export function truthy(v: string | undefined): boolean {
  return v !== undefined && v !== '' && v !== 'false' && v !== '0';
}
