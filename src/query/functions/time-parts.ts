/**
 * Time functions (query-functions.md §1, category time): the parts of an epoch-ms value
 * (time:year ... time:millisecond, ISO week and day numbers, English names), duration(), start(),
 * end() and formatDuration(). A part is read in `timezone` when given, else in the zone named by the
 * event's `timezoneField` (default @timezone) when it holds one, else in the query's time zone
 * (timeZoneOffsetMinutes).
 */
import { parseRelative } from '../time.js';
import type { Ev } from '../runtime.js';
import { parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import { argNumber, fieldName, oneOf, setter, valueDef } from './define.js';
import type { CompileEnv, FnDef, ValueFn } from './types.js';
import { eventZone, fixedZone, type Zone } from './zones.js';

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** The wall-clock fields of `ms` in `zone`, read from a shifted UTC date. */
function wall(ms: number, zone: Zone): Date {
  return new Date(ms + zone.offsetAt(ms) * 60_000);
}

function isoWeek(d: Date): number {
  // The week that holds this week's Thursday, counted from the year's first Thursday.
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const dow = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - dow);
  const yearStart = Date.UTC(t.getUTCFullYear(), 0, 1);
  return Math.ceil(((t.getTime() - yearStart) / 86_400_000 + 1) / 7);
}

function dayOfYear(d: Date): number {
  return Math.floor((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
}

/** How an event's zone is chosen (see the module comment). */
function zoneOf(a: BoundArgs, env: CompileEnv): (e: Ev) => Zone {
  const query = fixedZone(env.ctx.timeZoneOffsetMinutes);
  const zone = eventZone(a);
  return (e) => zone(e) ?? query;
}

function part(name: string, f: (d: Date) => string): FnDef {
  const short = name.slice('time:'.length);
  return valueDef(
    name,
    [
      { name: 'field', type: 'field', unnamed: true, default: '@timestamp' },
      { name: 'timezone', type: 'string' },
      { name: 'timezoneField', type: 'field', default: '@timezone' },
    ],
    `_${short}`,
    (a, env) => {
      const ts: (e: Ev) => number | undefined = a.has('field') ? argNumber(a, 'field') : (e) => parseNumber(e.get('@timestamp'));
      const zone = zoneOf(a, env);
      return (e) => {
        const ms = ts(e);
        if (ms === undefined || Math.abs(ms) > 8.64e15) return undefined;
        return f(wall(Math.floor(ms), zone(e)));
      };
    },
  );
}

const parts: FnDef[] = [
  part('time:year', (d) => String(d.getUTCFullYear())),
  part('time:month', (d) => String(d.getUTCMonth() + 1)),
  part('time:monthName', (d) => MONTH_NAMES[d.getUTCMonth()]!),
  part('time:dayOfMonth', (d) => String(d.getUTCDate())),
  part('time:dayOfWeek', (d) => String(d.getUTCDay() || 7)),
  part('time:dayOfWeekName', (d) => DAY_NAMES[d.getUTCDay()]!),
  part('time:dayOfYear', (d) => String(dayOfYear(d))),
  part('time:weekOfYear', (d) => String(isoWeek(d))),
  part('time:hour', (d) => String(d.getUTCHours())),
  part('time:minute', (d) => String(d.getUTCMinutes())),
  part('time:second', (d) => String(d.getUTCSeconds())),
  part('time:millisecond', (d) => String(d.getUTCMilliseconds())),
];

/** duration("5m"): milliseconds of a relative time. */
const duration = valueDef('duration', [{ name: 'duration', type: 'string', unnamed: true, required: true }], '_duration', (a) => {
  const text = a.string('duration')!;
  const ms = parseRelative(text) ?? (/^\d+ms$/.test(text.trim()) ? Number(text.trim().slice(0, -2)) : null);
  if (ms === null) return a.fail('duration', `duration: ${text} is not a relative time such as 5m, 2h or 1d`);
  const v = String(ms);
  return () => v;
});

function rangeEnd(name: 'start' | 'end'): FnDef {
  return valueDef(name, [{ name: 'as', type: 'string', unnamed: true, default: `_${name}` }], `_${name}`, (_a, env) => {
    const v = String(name === 'start' ? env.ctx.start : env.ctx.end);
    return () => v;
  });
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PARTS: [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];

/** 93784005 ms -> `1d2h3m4s5ms`; `precision` keeps that many units from the largest (0 = all). */
export function renderDuration(ms: number, precision: number): string {
  if (ms === 0) return '0ms';
  const neg = ms < 0;
  let rest = Math.abs(ms);
  const pieces: string[] = [];
  for (const [u, len] of PARTS) {
    const n = u === 'ms' ? Math.round(rest) : Math.floor(rest / len);
    if (n > 0) pieces.push(`${n}${u}`);
    rest -= n * len;
  }
  const kept = precision > 0 ? pieces.slice(0, precision) : pieces;
  return (neg ? '-' : '') + (kept.length === 0 ? '0ms' : kept.join(''));
}

const formatDuration: FnDef = {
  name: 'formatDuration',
  params: [
    { name: 'field', type: 'field', unnamed: true, required: true },
    { name: 'as', type: 'string', default: '(the input field)' },
    { name: 'from', type: 'string', default: 'ms' },
    { name: 'precision', type: 'number', default: '0' },
  ],
  value(a) {
    const x = argNumber(a, 'field');
    const from = oneOf(a, 'from', ['ns', 'us', 'ms', 's', 'm', 'h', 'd'] as const, 'ms');
    const precision = a.number('precision', 0);
    if (!Number.isInteger(precision) || precision < 0) a.fail('precision', 'formatDuration: precision must be a whole number, 0 or more');
    const f = UNIT_MS[from]!;
    return (e) => {
      const v = x(e);
      if (v === undefined || !Number.isInteger(v)) return undefined;
      return renderDuration(v * f, precision);
    };
  },
  stage(a, env) {
    const as = a.string('as') ?? fieldName(a) ?? a.fail('as', 'formatDuration: give as= when field is not a field name');
    return setter(as, formatDuration.value!(a, env) as ValueFn);
  },
};


export const timePartFunctions: FnDef[] = [...parts, duration, rangeEnd('start'), rangeEnd('end'), formatDuration];
