/**
 * The printf subset of format() (Java Formatter style): `%[flags][width][.precision]conv` with
 * flags `-` (left-justify), `0` (zero-pad), `,` (thousands separators), `+` and space (sign), and
 * conversions s, S, d, i, f, e, E, g, x, X, o, b, c and %% and %n. A numeric conversion of a value
 * that is not a number makes the whole format fail (undefined), so the output field is not set.
 */
import { MAX_FORMAT_PRECISION, MAX_FORMAT_WIDTH, MAX_VALUE_CHARS, valueTooLarge } from '../limits.js';
import { formatNumber, parseNumber } from '../values.js';

interface Spec {
  flags: string;
  width: number;
  precision: number | null;
  conv: string;
}

export type Piece = string | Spec;

const SPEC = /%([-0,+ #]*)(\d+)?(?:\.(\d+))?([sSdifeEgGxXobcn%])/y;

/** Splits a format string into literal text and conversion specs; a message for a bad `%`. */
export function parsePrintf(format: string): Piece[] | string {
  const out: Piece[] = [];
  let lit = '';
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c !== '%') {
      lit += c;
      i++;
      continue;
    }
    SPEC.lastIndex = i;
    const m = SPEC.exec(format);
    if (m === null) return `format: unsupported conversion at "${format.slice(i, i + 6)}"`;
    i = SPEC.lastIndex;
    const conv = m[4]!;
    if (conv === '%') {
      lit += '%';
      continue;
    }
    if (conv === 'n') {
      lit += '\n';
      continue;
    }
    if (lit !== '') out.push(lit);
    lit = '';
    const width = m[2] === undefined ? 0 : Number(m[2]);
    const precision = m[3] === undefined ? null : Number(m[3]);
    if (width > MAX_FORMAT_WIDTH) return `format: the width ${m[2]} in "${m[0]}" is more than ${MAX_FORMAT_WIDTH}, the most characters a query function may make`;
    if (precision !== null && precision > MAX_FORMAT_PRECISION && 'feE'.includes(conv)) return `format: the precision ${m[3]} in "${m[0]}" is more than ${MAX_FORMAT_PRECISION} digits`;
    out.push({ flags: m[1] ?? '', width, precision, conv });
  }
  if (lit !== '') out.push(lit);
  return out;
}

function group(intDigits: string): string {
  return intDigits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function pad(s: string, spec: Spec, numeric: boolean): string {
  if (s.length >= spec.width) return s;
  if (spec.flags.includes('-')) return s + ' '.repeat(spec.width - s.length);
  if (numeric && spec.flags.includes('0')) {
    const sign = /^[+\- ]/.test(s) ? s[0]! : '';
    const body = sign === '' ? s : s.slice(1);
    return sign + '0'.repeat(spec.width - s.length) + body;
  }
  return ' '.repeat(spec.width - s.length) + s;
}

function signed(n: number, body: string, spec: Spec): string {
  if (n < 0 || Object.is(n, -0)) return body;
  if (spec.flags.includes('+')) return `+${body}`;
  if (spec.flags.includes(' ')) return ` ${body}`;
  return body;
}

function fixed(n: number, digits: number, grouping: boolean): string {
  let s = Math.abs(n).toFixed(digits);
  if (grouping) {
    const [i, f] = s.split('.');
    s = group(i!) + (f === undefined ? '' : `.${f}`);
  }
  return (n < 0 ? '-' : '') + s;
}

function one(spec: Spec, v: string): string | undefined {
  switch (spec.conv) {
    case 's':
    case 'S': {
      let s = spec.precision === null ? v : v.slice(0, spec.precision);
      if (spec.conv === 'S') s = s.toUpperCase();
      return pad(s, spec, false);
    }
    case 'c':
      return pad(v.slice(0, 1), spec, false);
    case 'b':
      return pad(v === '' || v === 'false' ? 'false' : 'true', spec, false);
    default:
      break;
  }
  const n = parseNumber(v);
  if (n === undefined) return undefined;
  const grouping = spec.flags.includes(',');
  switch (spec.conv) {
    case 'd':
    case 'i': {
      const t = Math.trunc(n);
      const body = grouping ? fixed(t, 0, true) : Math.abs(t) < 1e21 ? String(t) : BigInt(t).toString();
      return pad(signed(t, body, spec), spec, true);
    }
    case 'f':
      return pad(signed(n, fixed(n, spec.precision ?? 6, grouping), spec), spec, true);
    case 'e':
    case 'E': {
      const s = n.toExponential(spec.precision ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
      return pad(signed(n, spec.conv === 'E' ? s.toUpperCase() : s, spec), spec, true);
    }
    case 'g':
    case 'G': {
      const s = spec.precision === null ? formatNumber(n) : String(Number(n.toPrecision(Math.max(1, spec.precision))));
      return pad(signed(n, spec.conv === 'G' ? s.toUpperCase() : s, spec), spec, true);
    }
    case 'x':
    case 'X':
    case 'o': {
      const t = BigInt(Math.trunc(n));
      const u = t < 0n ? (spec.conv === 'o' ? t + (1n << 64n) : t + (1n << 64n)) : t;
      let s = u.toString(spec.conv === 'o' ? 8 : 16);
      if (spec.conv === 'X') s = s.toUpperCase();
      if (spec.flags.includes('#')) s = (spec.conv === 'o' ? '0' : spec.conv === 'x' ? '0x' : '0X') + s;
      return pad(s, spec, true);
    }
    default:
      return undefined;
  }
}

/** Formats `values` (one per conversion, in order; the last is reused if there are fewer). */
export function printf(pieces: readonly Piece[], values: readonly string[]): string | undefined {
  let out = '';
  let arg = 0;
  for (const p of pieces) {
    if (typeof p === 'string') {
      if (out.length + p.length > MAX_VALUE_CHARS) throw valueTooLarge('format', out.length + p.length);
      out += p;
      continue;
    }
    const v = values[Math.min(arg, values.length - 1)];
    arg++;
    if (v === undefined) return undefined;
    const s = one(p, v);
    if (s === undefined) return undefined;
    if (out.length + s.length > MAX_VALUE_CHARS) throw valueTooLarge('format', out.length + s.length);
    out += s;
  }
  return out;
}
