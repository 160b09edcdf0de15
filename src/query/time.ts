/**
 * Query time ranges: the product's relative-time syntax (api-facts §1.7: a number, an optional
 * space, a unit; `now` for the end) and absolute epoch milliseconds, resolved against a fixed "now"
 * into an inclusive [start, end] range.
 */
import { LogsvcError } from '../lib/errors.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const UNITS: ReadonlyMap<string, number> = new Map([
  ...['millisecond', 'milliseconds', 'millis', 'ms'].map((u) => [u, 1] as const),
  ...['second', 'seconds', 's', 'sec', 'secs'].map((u) => [u, SECOND] as const),
  ...['minute', 'minutes', 'm', 'min', 'mins'].map((u) => [u, MINUTE] as const),
  ...['hour', 'hours', 'h', 'hr', 'hrs'].map((u) => [u, HOUR] as const),
  ...['day', 'days', 'd'].map((u) => [u, DAY] as const),
  ...['week', 'weeks', 'w'].map((u) => [u, 7 * DAY] as const),
  // Calendar units as fixed lengths (the product's relative syntax is "always relative to now").
  ...['month', 'months', 'mon'].map((u) => [u, 30 * DAY] as const),
  ...['quarter', 'quarters', 'q', 'qtr', 'qtrs'].map((u) => [u, 91 * DAY] as const),
  ...['year', 'years', 'y', 'yr', 'yrs'].map((u) => [u, 365 * DAY] as const),
]);

/** `"24hours"`, `"10 s"`, `"3 weeks"` -> milliseconds; null when `text` is not a relative time. */
export function parseRelative(text: string): number | null {
  const m = /^\s*(\d{1,12})\s*([a-zA-Z]+)\s*$/.exec(text);
  if (m === null) return null;
  const unit = UNITS.get(m[2]!.toLowerCase());
  if (unit === undefined) return null;
  return Number(m[1]) * unit;
}

export interface TimeRange {
  start: number;
  end: number;
}

/** Epoch ms bounds we accept: years 1970 to 9999. */
const MAX_EPOCH_MS = 253_402_300_799_999;

function resolveBound(name: 'start' | 'end', v: unknown, now: number): number {
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0 || v > MAX_EPOCH_MS) throw new LogsvcError('E_VALIDATION', `${name}: ${v} is not an epoch time in milliseconds`);
    return v;
  }
  if (typeof v !== 'string') throw new LogsvcError('E_VALIDATION', `${name}: must be a relative time such as "24hours" or epoch milliseconds`);
  if (v.trim() === 'now') return now;
  if (/^\s*\d{13,15}\s*$/.test(v)) return resolveBound(name, Number(v), now);
  const rel = parseRelative(v);
  if (rel === null) throw new LogsvcError('E_VALIDATION', `${name}: "${v.slice(0, 100)}" is not a relative time (a number and a unit such as "10s", "15 minutes", "24hours", "7d") or epoch milliseconds`);
  return now - rel;
}

/**
 * The request's `start`/`end` (absent: 24 hours and now) resolved against `now`. Live queries need
 * a relative start and an end of now.
 */
export function resolveRange(start: unknown, end: unknown, now: number, live: boolean): TimeRange {
  const s = start === undefined || start === null || start === '' ? now - DAY : resolveBound('start', start, now);
  const e = end === undefined || end === null || end === '' ? now : resolveBound('end', end, now);
  if (live) {
    if (typeof start === 'number' || (typeof start === 'string' && /^\s*\d{13,15}\s*$/.test(start))) throw new LogsvcError('E_VALIDATION', 'start: a live query needs a relative start such as "5m"');
    if (e !== now) throw new LogsvcError('E_VALIDATION', 'end: a live query ends now; leave end out or send "now"');
  }
  if (s > e) throw new LogsvcError('E_VALIDATION', `start (${s}) is after end (${e})`);
  return { start: s, end: e };
}
