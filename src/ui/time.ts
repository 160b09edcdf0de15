/** Time ranges (relative like "15m", or absolute epoch ms), time zones and timestamp formatting. */

export interface Range {
  /** A relative start ("15m", "24h", "7d") or epoch ms. */
  start: string | number;
  /** Epoch ms, or undefined for now. */
  end?: number;
}

export const RELATIVE = [
  ['5m', 'Last 5 minutes'],
  ['15m', 'Last 15 minutes'],
  ['1h', 'Last hour'],
  ['4h', 'Last 4 hours'],
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
] as const;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, y: 365 * 86_400_000 };

export function relativeMs(s: string): number | null {
  const m = /^(\d+)\s*([smhdwy])$/.exec(s.trim());
  return m === null ? null : Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** The zone's offset from UTC in minutes at `atMs` ("UTC", "local" or an IANA name). */
export function zoneOffsetMinutes(zone: string, atMs = Date.now()): number {
  if (zone === 'UTC') return 0;
  if (zone === 'local') return -new Date(atMs).getTimezoneOffset();
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(new Date(atMs));
  const get = (t: string): number => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour') % 24, get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(atMs / 1000) * 1000) / 60_000);
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** `2024-05-01 13:04:05.123` in `zone`. */
export function formatTime(ms: number, zone: string): string {
  const d = new Date(ms + zoneOffsetMinutes(zone, ms) * 60_000);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

/** The value of an <input type="datetime-local"> for `ms` in `zone`. */
export function toLocalInput(ms: number, zone: string): string {
  return formatTime(ms, zone).slice(0, 19).replace(' ', 'T');
}

/** Epoch ms of a datetime-local value read in `zone`; null when unreadable. */
export function fromLocalInput(v: string, zone: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(v);
  if (m === null) return null;
  const asUtc = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  // The offset at the wanted moment: try the offset at the naive instant, then correct once.
  const first = asUtc - zoneOffsetMinutes(zone, asUtc) * 60_000;
  return asUtc - zoneOffsetMinutes(zone, first) * 60_000;
}

export function describeRange(r: Range, zone: string): string {
  if (typeof r.start === 'string') return RELATIVE.find(([k]) => k === r.start)?.[1] ?? `Last ${r.start}`;
  return `${formatTime(r.start, zone).slice(0, 19)} → ${r.end === undefined ? 'now' : formatTime(r.end, zone).slice(0, 19)}`;
}

export function zones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  return ['UTC', 'local', ...(intl.supportedValuesOf?.('timeZone') ?? [])];
}
