/**
 * Java DateTimeFormatter patterns for parseTimestamp(), compiled into a small parser: y/u (year),
 * M (number, MMM short name, MMMM full name), d, H, k, h with a, m, s, S (fraction, 1..n digits),
 * E (day name, checked loosely), X/x/Z (offsets), z/VV/O (zone names and ids), 'literal' quotes and
 * [optional] sections. Parsing is left to right; only an optional section can fail and be skipped,
 * so the work is bounded by pattern length times text length.
 */
import { parseOffset, parseZone, type Zone } from './zones.js';

type Tok =
  | { t: 'lit'; s: string }
  | { t: 'field'; c: string; n: number }
  | { t: 'opt'; body: Tok[] };

export interface Parsed {
  year?: number;
  month?: number;
  day?: number;
  hour?: number;
  hour12?: number;
  pm?: boolean;
  minute?: number;
  second?: number;
  nanos?: number;
  /** Offset in minutes, or a zone. */
  offset?: number;
  zone?: Zone;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTHS_FULL = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const DAYS_FULL = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

const FIELD_LETTERS = new Set(['y', 'u', 'M', 'L', 'd', 'H', 'k', 'h', 'K', 'm', 's', 'S', 'a', 'E', 'X', 'x', 'Z', 'z', 'V', 'O', 'n']);

/** Compiles a pattern; a string is an error message. */
export function compileJavaPattern(pattern: string): Tok[] | string {
  const stack: Tok[][] = [[]];
  let i = 0;
  const top = (): Tok[] => stack[stack.length - 1]!;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        top().push({ t: 'lit', s: "'" });
        i += 2;
        continue;
      }
      let j = i + 1;
      let s = '';
      while (j < pattern.length) {
        if (pattern[j] === "'") {
          if (pattern[j + 1] === "'") {
            s += "'";
            j += 2;
            continue;
          }
          break;
        }
        s += pattern[j];
        j++;
      }
      if (j >= pattern.length) return `unterminated quote in time format ${pattern}`;
      top().push({ t: 'lit', s });
      i = j + 1;
      continue;
    }
    if (c === '[') {
      const body: Tok[] = [];
      top().push({ t: 'opt', body });
      stack.push(body);
      i++;
      continue;
    }
    if (c === ']') {
      if (stack.length === 1) return `unbalanced ] in time format ${pattern}`;
      stack.pop();
      i++;
      continue;
    }
    if (/[a-zA-Z]/.test(c)) {
      if (!FIELD_LETTERS.has(c)) return `the pattern letter ${c} is not supported in time format ${pattern}`;
      let n = 1;
      while (pattern[i + n] === c) n++;
      top().push({ t: 'field', c, n });
      i += n;
      continue;
    }
    top().push({ t: 'lit', s: c });
    i++;
  }
  if (stack.length !== 1) return `unbalanced [ in time format ${pattern}`;
  return stack[0]!;
}

function digits(text: string, pos: number, min: number, max: number): [number, number] | null {
  let j = pos;
  while (j < text.length && j - pos < max && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
  if (j - pos < min) return null;
  return [Number(text.slice(pos, j)), j];
}

function nameAt(text: string, pos: number, names: readonly string[], caseSensitive: boolean): [number, number] | null {
  // Longest first so "June" is not read as "Jun".
  let best: [number, number] | null = null;
  for (let k = 0; k < names.length; k++) {
    const n = names[k]!;
    const got = text.slice(pos, pos + n.length);
    const ok = caseSensitive ? got === n[0]!.toUpperCase() + n.slice(1) : got.toLowerCase() === n;
    if (ok && (best === null || n.length > best[1] - pos)) best = [k, pos + n.length];
  }
  return best;
}

/** Reads an offset: `Z` (when allowed), `+HH`, `+HHMM`, `+HH:MM`, `+HH:MM:SS`. */
function offsetAt(text: string, pos: number, allowZ: boolean): [number, number] | null {
  if (allowZ && text[pos] === 'Z') return [0, pos + 1];
  const m = /^[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?/.exec(text.slice(pos, pos + 9));
  if (m === null) return null;
  const o = parseOffset(m[0].length > 6 ? m[0].slice(0, m[0].length - 3) : m[0]);
  return o === null ? null : [o, pos + m[0].length];
}

function field(tok: Extract<Tok, { t: 'field' }>, text: string, pos: number, out: Parsed, caseSensitive: boolean): number {
  const { c, n } = tok;
  const num = (min: number, max: number): [number, number] | null => digits(text, pos, min, max);
  let r: [number, number] | null;
  switch (c) {
    case 'y':
    case 'u':
      if (n === 2) {
        r = num(2, 2);
        if (r === null) return -1;
        out.year = 2000 + r[0];
        return r[1];
      }
      // yyyy reads exactly four digits, so adjacent fields (yyyyMMdd) work; y reads 1..9.
      r = n === 1 ? num(1, 9) : num(n, n);
      if (r === null) return -1;
      out.year = r[0];
      return r[1];
    case 'M':
    case 'L':
      if (n >= 3) {
        r = nameAt(text, pos, n === 3 ? MONTHS : MONTHS_FULL, caseSensitive);
        if (r === null) return -1;
        out.month = r[0] + 1;
        return r[1];
      }
      r = num(n, 2);
      if (r === null) return -1;
      out.month = r[0];
      return r[1];
    case 'E':
      r = nameAt(text, pos, n >= 4 ? DAYS_FULL : DAYS, caseSensitive);
      return r === null ? -1 : r[1];
    case 'a': {
      const s = text.slice(pos, pos + 2).toUpperCase();
      if (s !== 'AM' && s !== 'PM') return -1;
      out.pm = s === 'PM';
      return pos + 2;
    }
    case 'S':
      // Fractions: 1..n digits (lenient, so [.SSSSSSSSS] reads ".123" too).
      r = num(1, n);
      if (r === null) return -1;
      out.nanos = Math.round(r[0] * 10 ** (9 - (r[1] - pos)));
      return r[1];
    case 'n':
      r = num(1, 9);
      if (r === null) return -1;
      out.nanos = r[0];
      return r[1];
    case 'X':
    case 'x':
    case 'Z':
      if (c === 'Z' && n === 4) {
        // ZZZZ: localized offset, GMT+hh:mm.
        if (text.startsWith('GMT', pos)) {
          const o = offsetAt(text, pos + 3, false);
          if (o === null) {
            out.offset = 0;
            return pos + 3;
          }
          out.offset = o[0];
          return o[1];
        }
        return -1;
      }
      r = offsetAt(text, pos, c === 'X' || (c === 'Z' && n === 5));
      if (r === null) return -1;
      out.offset = r[0];
      return r[1];
    case 'z':
    case 'V':
    case 'O': {
      // Zone ids (Europe/Oslo), abbreviations (UTC, GMT), GMT+2.
      const m = /^[A-Za-z][A-Za-z0-9_/+\-:]*/.exec(text.slice(pos, pos + 64));
      if (m === null) return -1;
      const z = parseZone(m[0]);
      if (z === null) return -1;
      out.zone = z;
      return pos + m[0].length;
    }
    default: {
      const max = n === 1 ? 2 : n;
      r = num(n, max);
      if (r === null) return -1;
      if (c === 'd') out.day = r[0];
      else if (c === 'H' || c === 'k') out.hour = c === 'k' && r[0] === 24 ? 0 : r[0];
      else if (c === 'h' || c === 'K') out.hour12 = r[0];
      else if (c === 'm') out.minute = r[0];
      else if (c === 's') out.second = r[0];
      return r[1];
    }
  }
}

function run(toks: readonly Tok[], text: string, pos: number, out: Parsed, caseSensitive: boolean): number {
  let p = pos;
  for (const tok of toks) {
    if (tok.t === 'lit') {
      const got = text.slice(p, p + tok.s.length);
      if (caseSensitive ? got !== tok.s : got.toLowerCase() !== tok.s.toLowerCase()) return -1;
      p += tok.s.length;
    } else if (tok.t === 'opt') {
      const trial: Parsed = { ...out };
      const q = run(tok.body, text, p, trial, caseSensitive);
      if (q >= 0) {
        Object.assign(out, trial);
        p = q;
      }
    } else {
      p = field(tok, text, p, out, caseSensitive);
      if (p < 0) return -1;
    }
  }
  return p;
}

/**
 * Parses `text` fully with `toks`; epoch ms and the zone seen, or an error message. `zone` is used
 * when the text carries no zone; without either the parse fails.
 */
export function parseJavaTime(toks: readonly Tok[], text: string, zone: Zone | null, caseSensitive: boolean): { ms: number; zoneText: string | null } | string {
  const out: Parsed = {};
  const end = run(toks, text, 0, out, caseSensitive);
  if (end < 0) return `could not parse "${text.slice(0, 80)}" with the time format`;
  if (end !== text.length) return `unexpected text after the timestamp in "${text.slice(0, 80)}"`;
  if (out.year === undefined) return `no year in "${text.slice(0, 80)}"`;
  let hour = out.hour ?? 0;
  if (out.hour12 !== undefined) hour = (out.hour12 % 12) + (out.pm === true ? 12 : 0);
  const month = out.month ?? 1;
  const day = out.day ?? 1;
  const minute = out.minute ?? 0;
  const second = out.second ?? 0;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return `the timestamp "${text.slice(0, 80)}" is out of range`;
  const wall = Date.UTC(out.year, month - 1, day, hour, minute, second) + Math.floor((out.nanos ?? 0) / 1e6);
  // Date.UTC maps years 0..99 to 1900..1999; set the year exactly.
  const d = new Date(wall);
  if (out.year < 100) d.setUTCFullYear(out.year);
  const wallMs = d.getTime();
  if (new Date(wallMs).getUTCDate() !== day) return `the timestamp "${text.slice(0, 80)}" has no such day`;
  if (out.offset !== undefined) return { ms: wallMs - out.offset * 60_000, zoneText: formatZone(out.offset) };
  const z = out.zone ?? zone;
  if (z === null) return `the timestamp "${text.slice(0, 80)}" has no time zone; give the timezone parameter`;
  const first = z.offsetAt(wallMs);
  const second2 = z.offsetAt(wallMs - first * 60_000);
  return { ms: wallMs - second2 * 60_000, zoneText: z.name };
}

function formatZone(minutes: number): string {
  if (minutes === 0) return 'Z';
  const sign = minutes < 0 ? '-' : '+';
  const m = Math.abs(minutes);
  return `${sign}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}
