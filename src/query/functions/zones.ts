/**
 * Time zones for the time functions (timeChart/bucket `timezone`, formatTime, parseTimestamp): UTC
 * and fixed offsets (`Z`, `UTC`, `+02:00`, `-0530`, `UTC+2`) directly, IANA names (`Europe/Oslo`)
 * through Intl, whose offsets change over the year.
 */
import type { Ev } from '../runtime.js';
import type { BoundArgs } from './args.js';

export interface Zone {
  /** The zone as written (for `%Z`). */
  name: string;
  /** Minutes east of UTC at the instant `ms`. */
  offsetAt(ms: number): number;
}

const fixedCache = new Map<number, Zone>();

export function fixedZone(minutes: number, name?: string): Zone {
  if (name !== undefined) return { name, offsetAt: () => minutes };
  let z = fixedCache.get(minutes);
  if (z === undefined) {
    z = { name: minutes === 0 ? 'UTC' : formatOffset(minutes, true), offsetAt: () => minutes };
    fixedCache.set(minutes, z);
  }
  return z;
}

export const UTC: Zone = fixedZone(0);

/** `+02:00` (colon) or `+0200`. */
export function formatOffset(minutes: number, colon: boolean): string {
  const sign = minutes < 0 ? '-' : '+';
  const m = Math.abs(minutes);
  const hh = String(Math.floor(m / 60)).padStart(2, '0');
  const mm = String(m % 60).padStart(2, '0');
  return colon ? `${sign}${hh}:${mm}` : `${sign}${hh}${mm}`;
}

/** Minutes of a `+HH:MM`, `+HHMM`, `+HH`, `+H` offset, or null. */
export function parseOffset(text: string): number | null {
  const m = /^([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$/.exec(text);
  if (m === null) return null;
  const h = Number(m[2]);
  const mi = Number(m[3] ?? '0');
  if (h > 18 || mi > 59) return null;
  const v = h * 60 + mi;
  return m[1] === '-' ? -v : v;
}

const intlCache = new Map<string, Zone | null>();

function intlZone(name: string): Zone | null {
  const hit = intlCache.get(name);
  if (hit !== undefined) return hit;
  let zone: Zone | null = null;
  try {
    const fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zone = {
      name,
      offsetAt(ms: number): number {
        const parts: Record<string, number> = {};
        for (const p of fmt.formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
        const wall = Date.UTC(parts['year']!, parts['month']! - 1, parts['day']!, parts['hour']!, parts['minute']!, parts['second']!);
        return Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
      },
    };
  } catch {
    zone = null;
  }
  if (intlCache.size > 500) intlCache.clear();
  intlCache.set(name, zone);
  return zone;
}

/** The zone named by `text`, or null when it is not one. */
export function parseZone(text: string): Zone | null {
  const t = text.trim();
  if (t === '' ) return null;
  const up = t.toUpperCase();
  if (up === 'Z' || up === 'UTC' || up === 'GMT' || up === 'UT') return UTC;
  const off = parseOffset(t);
  if (off !== null) return fixedZone(off);
  const pre = /^(?:UTC|GMT|UT)([+-].*)$/i.exec(t);
  if (pre !== null) {
    const o = parseOffset(pre[1]!);
    return o === null ? null : fixedZone(o);
  }
  return intlZone(t);
}

/** The UTC instant of a wall-clock time (given as if it were UTC) in `zone`. */
export function wallToUtc(wallAsUtc: number, zone: Zone): number {
  const first = zone.offsetAt(wallAsUtc);
  const guess = wallAsUtc - first * 60_000;
  const second = zone.offsetAt(guess);
  return wallAsUtc - second * 60_000;
}

/**
 * The zone an event's times are read in, for functions with `timezone` and `timezoneField`
 * parameters: `timezone=` when given (a bad name is a query error), else the zone the event's
 * `timezoneField` (default @timezone) names when it names one, else null: the caller falls back (the
 * query's zone for time:hour(), an error for a parseTimestamp() text without a zone).
 */
export function eventZone(a: BoundArgs): (e: Ev) => Zone | null {
  const t = a.string('timezone');
  if (t !== undefined) {
    const z = parseZone(t);
    if (z === null) return a.fail('timezone', `parameter timezone of function ${a.def.name}: unknown time zone ${t}`);
    return () => z;
  }
  const field = a.string('timezoneField', '@timezone');
  // Events of a source mostly share a zone: each name is parsed once (a bounded cache).
  const seen = new Map<string, Zone | null>();
  return (e) => {
    const name = e.get(field);
    if (name === undefined) return null;
    let z = seen.get(name);
    if (z === undefined) {
      z = parseZone(name);
      if (seen.size < 1000) seen.set(name, z);
    }
    return z;
  };
}
