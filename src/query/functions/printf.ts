/**
 * The printf subset of format() (Java Formatter style): `%[idx$][flags][width][.precision]conv` with
 * an argument index (`%2$s`, 1-based, or `%<s`: the previous argument again), flags `-`
 * (left-justify), `0` (zero-pad), `,` (thousands separators), `+` and space (sign), and conversions
 * s, S, d, i, f, e, E, g, x, X, o, b, c, %% and %n, and the date/time conversions `%t?`/`%T?` (upper
 * case) of an epoch-milliseconds value in format()'s timezone (UTC by default): H I k l M S L N p z Z
 * s Q B b h A a C Y y j m d e R T r D F c. A numeric or date conversion of a value that is not a
 * number makes the whole format fail (undefined), so the output field is not set.
 */
import { MAX_FORMAT_PRECISION, MAX_FORMAT_WIDTH, MAX_VALUE_CHARS, valueTooLarge } from '../limits.js';
import { formatNumber, parseNumber } from '../values.js';
import { formatOffset, UTC, type Zone } from './zones.js';

interface Spec {
  /** The argument: null the next one in order, -1 the previous one (`<`), else its 0-based index. */
  arg: number | null;
  flags: string;
  width: number;
  precision: number | null;
  conv: string;
  /** For `t`/`T`: the date/time suffix. */
  time: string | null;
}

export type Piece = string | Spec;

const SPEC = /%(?:([1-9]\d*)\$|(<))?([-0,+ #]*)(\d+)?(?:\.(\d+))?(?:([tT])([HIklMSLNpzZsQBbhAaCYyjmdeRTrDFc])|([sSdifeEgGxXobcn%]))/y;

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
    const conv = m[6] ?? m[8]!;
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
    const width = m[4] === undefined ? 0 : Number(m[4]);
    const precision = m[5] === undefined ? null : Number(m[5]);
    if (width > MAX_FORMAT_WIDTH) return `format: the width ${m[4]} in "${m[0]}" is more than ${MAX_FORMAT_WIDTH}, the most characters a query function may make`;
    if (precision !== null && precision > MAX_FORMAT_PRECISION && 'feE'.includes(conv)) return `format: the precision ${m[5]} in "${m[0]}" is more than ${MAX_FORMAT_PRECISION} digits`;
    const arg = m[1] !== undefined ? Number(m[1]) - 1 : m[2] !== undefined ? -1 : null;
    out.push({ arg, flags: m[3] ?? '', width, precision, conv, time: m[7] ?? null });
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

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const p2 = (n: number): string => String(n).padStart(2, '0');

/** A Java `%t` suffix of epoch ms `ms` in `zone`. */
function timePart(suffix: string, ms: number, zone: Zone): string {
  const off = zone.offsetAt(ms);
  const d = new Date(ms + off * 60_000);
  const H = d.getUTCHours();
  const h12 = H % 12 === 0 ? 12 : H % 12;
  const at = (s: string): string => timePart(s, ms, zone);
  switch (suffix) {
    case 'H': return p2(H);
    case 'I': return p2(h12);
    case 'k': return String(H);
    case 'l': return String(h12);
    case 'M': return p2(d.getUTCMinutes());
    case 'S': return p2(d.getUTCSeconds());
    case 'L': return String(d.getUTCMilliseconds()).padStart(3, '0');
    case 'N': return `${String(d.getUTCMilliseconds()).padStart(3, '0')}000000`;
    case 'p': return H < 12 ? 'am' : 'pm';
    case 'z': return formatOffset(off, false);
    case 'Z': return zone.name;
    case 's': return String(Math.floor(ms / 1000));
    case 'Q': return String(ms);
    case 'B': return MONTHS[d.getUTCMonth()]!;
    case 'b':
    case 'h': return MONTHS[d.getUTCMonth()]!.slice(0, 3);
    case 'A': return DAYS[d.getUTCDay()]!;
    case 'a': return DAYS[d.getUTCDay()]!.slice(0, 3);
    case 'C': return p2(Math.floor(d.getUTCFullYear() / 100));
    case 'Y': return String(d.getUTCFullYear()).padStart(4, '0');
    case 'y': return p2(d.getUTCFullYear() % 100);
    case 'j': return String(Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1).padStart(3, '0');
    case 'm': return p2(d.getUTCMonth() + 1);
    case 'd': return p2(d.getUTCDate());
    case 'e': return String(d.getUTCDate());
    case 'R': return `${at('H')}:${at('M')}`;
    case 'T': return `${at('H')}:${at('M')}:${at('S')}`;
    case 'r': return `${at('I')}:${at('M')}:${at('S')} ${at('p').toUpperCase()}`;
    case 'D': return `${at('m')}/${at('d')}/${at('y')}`;
    case 'F': return `${at('Y')}-${at('m')}-${at('d')}`;
    default: return `${at('a')} ${at('b')} ${at('d')} ${at('T')} ${at('Z')} ${at('Y')}`;
  }
}

function one(spec: Spec, v: string, zone: Zone): string | undefined {
  if (spec.time !== null) {
    const ms = parseNumber(v);
    if (ms === undefined || Math.abs(ms) > 8.64e15) return undefined;
    const s = timePart(spec.time, Math.floor(ms), zone);
    return pad(spec.conv === 'T' ? s.toUpperCase() : s, spec, false);
  }
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

/**
 * Formats `values`: each conversion takes the next value in order (the last is reused if there are
 * fewer), or the one its index names (`%2$s`), or the previous one (`%<s`); date conversions in `zone`.
 */
export function printf(pieces: readonly Piece[], values: readonly string[], zone: Zone = UTC): string | undefined {
  let out = '';
  let next = 0;
  let last = -1;
  for (const p of pieces) {
    if (typeof p === 'string') {
      if (out.length + p.length > MAX_VALUE_CHARS) throw valueTooLarge('format', out.length + p.length);
      out += p;
      continue;
    }
    const at = p.arg === null ? Math.min(next++, values.length - 1) : p.arg === -1 ? last : p.arg;
    last = at;
    const v = at < 0 ? undefined : values[at];
    if (v === undefined) return undefined;
    const s = one(p, v, zone);
    if (s === undefined) return undefined;
    if (out.length + s.length > MAX_VALUE_CHARS) throw valueTooLarge('format', out.length + s.length);
    out += s;
  }
  return out;
}
