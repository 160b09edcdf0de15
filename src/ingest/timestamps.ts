/**
 * Reading times out of log text: ISO 8601 date-times (structured ingest, JSON and kv lines, syslog),
 * zone offsets, English month abbreviations (access logs, RFC 3164) and zone names given by senders.
 * Everything is a hand-written scanner over char codes: these run once per event on untrusted text,
 * so they must be linear and must not allocate on failure. Calendar arithmetic is done here rather
 * than with `Date.UTC`, which maps years 0-99 to 1900-1999.
 */

const MS_PER_MINUTE = 60_000;
const MS_PER_DAY = 86_400_000;
/** Java's ZoneOffset bound; the product rejects anything wider. */
const MAX_OFFSET_HOURS = 18;

export interface IsoMatch {
  ms: number;
  /** "Z", "+hh:mm"/"-hh:mm" as written, or null when the text carried no zone. */
  zone: string | null;
  /** Index just past the matched text. */
  end: number;
}

export interface OffsetMatch {
  minutes: number;
  /** Normalised "+hh:mm" / "-hh:mm". */
  text: string;
  end: number;
}

/**
 * Parses a whole string as an ISO 8601 date-time. With a zone designator (Z, ±hh:mm, ±hhmm, ±hh) the
 * result is ms UTC and the zone as written: "Z" for Z, otherwise the offset normalised to "±hh:mm"
 * (so "+00:00" stays "+00:00"). Fractions of 1-9 digits keep ms precision and truncate the rest. 'T'
 * or a single space separates date and time. Without a zone: null when `requireZone`, else UTC with
 * zone "Z". Null for anything invalid, including out-of-range fields and impossible dates (Feb 30).
 */
export function parseIsoTimestamp(text: string, opts?: { requireZone?: boolean }): { ms: number; zone: string } | null {
  const m = matchIsoTimestampAt(text, 0);
  if (m === null || m.end !== text.length) return null;
  if (m.zone === null) return opts?.requireZone === true ? null : { ms: m.ms, zone: 'Z' };
  return { ms: m.ms, zone: m.zone };
}

/**
 * Matches an ISO 8601 extended-format date-time starting exactly at `pos`, without looking past its
 * end: `yyyy-MM-dd(T|t| )HH:mm[:ss[(.|,)f{1,9}]][Z|±hh[[:]mm]]`. Seconds are optional, as in
 * Java's ISO parsers. Returns null if the text there is not one (or names an impossible date).
 */
export function matchIsoTimestampAt(text: string, pos: number): IsoMatch | null {
  const year = digitsAt(text, pos, 4);
  if (year < 0 || text.charCodeAt(pos + 4) !== 45 /* - */) return null;
  const month = digitsAt(text, pos + 5, 2);
  if (month < 0 || text.charCodeAt(pos + 7) !== 45) return null;
  const day = digitsAt(text, pos + 8, 2);
  if (day < 0) return null;
  const sep = text.charCodeAt(pos + 10);
  if (sep !== 84 /* T */ && sep !== 116 /* t */ && sep !== 32 /* space */) return null;
  const hour = digitsAt(text, pos + 11, 2);
  if (hour < 0 || text.charCodeAt(pos + 13) !== 58 /* : */) return null;
  const minute = digitsAt(text, pos + 14, 2);
  if (minute < 0) return null;
  let p = pos + 16;
  let second = 0;
  let millis = 0;
  if (text.charCodeAt(p) === 58) {
    second = digitsAt(text, p + 1, 2);
    if (second < 0) return null;
    p += 3;
    const dot = text.charCodeAt(p);
    if (dot === 46 /* . */ || dot === 44 /* , */) {
      let q = p + 1;
      while (q < text.length && isDigit(text.charCodeAt(q))) q++;
      const n = q - (p + 1);
      if (n < 1 || n > 9) return null;
      // Keep milliseconds; digits beyond the third are truncated, never rounded.
      for (let i = 0; i < 3; i++) {
        millis = millis * 10 + (i < n ? text.charCodeAt(p + 1 + i) - 48 : 0);
      }
      p = q;
    }
  }
  const local = utcMillis(year, month, day, hour, minute, second, millis);
  if (local === null) return null;

  const z = text.charCodeAt(p);
  if (z === 90 /* Z */ || z === 122 /* z */) return { ms: local, zone: 'Z', end: p + 1 };
  if (z === 43 /* + */ || z === 45 /* - */) {
    const off = matchOffsetAt(text, p);
    if (off === null) return null;
    return { ms: local - off.minutes * MS_PER_MINUTE, zone: off.text, end: off.end };
  }
  return { ms: local, zone: null, end: p };
}

/**
 * Matches a zone offset `±hh:mm`, `±hhmm` or `±hh` at `pos`. A colon not followed by two digits makes
 * the whole offset invalid rather than silently shorter.
 */
export function matchOffsetAt(text: string, pos: number): OffsetMatch | null {
  const sign = text.charCodeAt(pos);
  if (sign !== 43 && sign !== 45) return null;
  const hours = digitsAt(text, pos + 1, 2);
  if (hours < 0 || hours > MAX_OFFSET_HOURS) return null;
  let minutes = 0;
  let end = pos + 3;
  if (text.charCodeAt(end) === 58 /* : */) {
    minutes = digitsAt(text, end + 1, 2);
    if (minutes < 0) return null;
    end += 3;
  } else {
    const m = digitsAt(text, end, 2);
    if (m >= 0) {
      minutes = m;
      end += 2;
    }
  }
  if (minutes > 59 || (hours === MAX_OFFSET_HOURS && minutes > 0)) return null;
  const total = hours * 60 + minutes;
  const normalised = `${sign === 45 ? '-' : '+'}${pad2(hours)}:${pad2(minutes)}`;
  return { minutes: sign === 45 ? -total : total, text: normalised, end };
}

/**
 * Milliseconds since the epoch for a UTC calendar date-time, or null when any part is out of range
 * (month 1-12, day within the month, 00:00:00-23:59:59, year 0-9999, millis 0-999).
 */
export function utcMillis(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millis: number,
): number | null {
  if (year < 0 || year > 9999 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59 || hour < 0 || minute < 0 || second < 0) return null;
  if (millis < 0 || millis > 999) return null;
  return daysFromCivil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + millis;
}

const MONTH_ABBREVIATIONS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** The month (1-12) for an English three-letter abbreviation at `pos`, any case; 0 when there is none. */
export function monthAbbreviationAt(text: string, pos: number): number {
  if (pos + 3 > text.length) return 0;
  // ASCII letters only; `| 32` lower-cases them and leaves the comparison to reject anything else.
  const a = text.charCodeAt(pos) | 32;
  const b = text.charCodeAt(pos + 1) | 32;
  const c = text.charCodeAt(pos + 2) | 32;
  for (let i = 0; i < MONTH_ABBREVIATIONS.length; i++) {
    const name = MONTH_ABBREVIATIONS[i]!;
    if (name.charCodeAt(0) === a && name.charCodeAt(1) === b && name.charCodeAt(2) === c) return i + 1;
  }
  return 0;
}

/** The value of exactly `n` ASCII digits at `pos`, or -1 when any of them is missing or not a digit. */
export function digitsAt(text: string, pos: number, n: number): number {
  if (pos + n > text.length) return -1;
  let v = 0;
  for (let i = pos; i < pos + n; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    v = v * 10 + (c - 48);
  }
  return v;
}

/**
 * Validates a zone given in a structured event's `timezone` field and returns its normalised form, or
 * null when it is unknown: "Z"; fixed offsets (±hh:mm, ±hhmm, ±hh, ±h, optionally after "UTC", "GMT"
 * or "UT") as "±hh:mm"; IANA names as Intl.DateTimeFormat canonicalises them ("europe/copenhagen"
 * -> "Europe/Copenhagen", "GMT" -> "UTC").
 */
export function normaliseTimezone(name: string): string | null {
  if (name.length === 0 || name.length > MAX_ZONE_NAME) return null;
  if (name === 'Z' || name === 'z') return 'Z';
  const first = name.charCodeAt(0);
  if (first === 43 || first === 45) return wholeOffset(name, 0);
  // Java's ZoneId also takes "UTC+01:00", "GMT-5" and "UT+2"; we return the bare offset.
  for (const prefix of OFFSET_PREFIXES) {
    if (name.length > prefix.length && name.startsWith(prefix)) {
      const c = name.charCodeAt(prefix.length);
      if (c === 43 || c === 45) return wholeOffset(name, prefix.length);
    }
  }
  const cached = zoneCache.get(name);
  if (cached !== undefined) return cached;
  let resolved: string | null;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    resolved = null;
  }
  // Building a DateTimeFormat costs tens of microseconds, and senders repeat the same few names on
  // every event. The cache is cleared rather than evicted when full: distinct names are rare.
  if (zoneCache.size >= ZONE_CACHE_LIMIT) zoneCache.clear();
  zoneCache.set(name, resolved);
  return resolved;
}

const MAX_ZONE_NAME = 64;
const ZONE_CACHE_LIMIT = 1024;
const OFFSET_PREFIXES = ['UTC', 'GMT', 'UT'];
const zoneCache = new Map<string, string | null>();

function wholeOffset(name: string, pos: number): string | null {
  const off = matchOffsetAt(name, pos);
  if (off === null || off.end !== name.length) {
    // "+5" and "-5" are common enough in senders' configs to accept as whole hours.
    const h = name.length === pos + 2 ? digitsAt(name, pos + 1, 1) : -1;
    if (h < 0) return null;
    return `${name.charCodeAt(pos) === 45 ? '-' : '+'}0${h}:00`;
  }
  return off.text;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return isLeapYear(y) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
