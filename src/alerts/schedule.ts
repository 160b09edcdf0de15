/**
 * When a scheduled search runs: its cron expression in its time zone (croner's home). The product
 * takes five-field cron expressions and time zones written as UTC offsets ("UTC", "UTC-01",
 * "UTC+12:45"); logsvc also takes IANA zone names ("Europe/Copenhagen") and a six-field form whose
 * first field is seconds (for schedules shorter than a minute, e.g. in tests).
 */
import { Cron } from 'croner';
import { LogsvcError } from '../lib/errors.js';

/** Runs looked at, at most, when a scheduled search catches up (its backfill limit is capped below it). */
export const MAX_BACKFILL_LIMIT = 1000;
const MAX_SCHEDULE_CHARS = 200;

/** The zone as croner takes it: a fixed offset in minutes, or an IANA name. */
type Zone = { utcOffset: number } | { timezone: string };

const bad = (field: string, message: string): LogsvcError => new LogsvcError('E_VALIDATION', `${field}: ${message}`);

/** "UTC", "UTC+2", "UTC-01", "UTC+12:45", "Z" -> minutes; an IANA name as it is; anything else refused. */
export function parseTimeZone(tz: unknown, field = 'timeZone'): Zone {
  if (typeof tz !== 'string' || tz.trim() === '') throw bad(field, 'required: a UTC offset such as "UTC", "UTC+02" or "UTC-05:30", or a zone name such as "Europe/Berlin"');
  const s = tz.trim();
  if (s === 'Z' || /^(UTC|GMT)$/i.test(s)) return { utcOffset: 0 };
  const m = /^(?:UTC|GMT)\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(s);
  if (m !== null) {
    const hours = Number(m[2]);
    const minutes = m[3] === undefined ? 0 : Number(m[3]);
    if (hours > 14 || minutes > 59 || (hours === 14 && minutes > 0)) throw bad(field, `"${s}" is not a UTC offset between UTC-14 and UTC+14`);
    return { utcOffset: (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes) };
  }
  if (s.length <= 64 && /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(s)) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: s });
      return { timezone: s };
    } catch {
      // fall through
    }
  }
  throw bad(field, `"${s.slice(0, 100)}" is not a time zone (a UTC offset such as "UTC+02", or a zone name such as "Europe/Berlin")`);
}

/** A validated schedule: its next and previous run times. */
export class Schedule {
  private readonly cron: Cron;

  private constructor(cron: Cron) {
    this.cron = cron;
  }

  /** Throws E_VALIDATION naming `field` when the expression or the zone does not parse. */
  static parse(expression: unknown, timeZone: unknown, field = 'schedule', zoneField = 'timeZone'): Schedule {
    const zone = parseTimeZone(timeZone, zoneField);
    if (typeof expression !== 'string' || expression.trim() === '') throw bad(field, 'required: a cron expression such as "*/5 * * * *"');
    if (expression.length > MAX_SCHEDULE_CHARS) throw bad(field, `longer than ${MAX_SCHEDULE_CHARS} characters`);
    const fields = expression.trim().split(/\s+/).length;
    if (fields !== 5 && fields !== 6) throw bad(field, `"${expression.slice(0, 100)}" has ${fields} fields; a cron expression has 5 (minute hour day month weekday), or 6 with seconds first`);
    let cron: Cron;
    try {
      cron = new Cron(expression.trim(), { paused: true, mode: fields === 5 ? '5-part' : '6-part', ...zone });
    } catch (err) {
      throw bad(field, `"${expression.slice(0, 100)}" is not a cron expression: ${(err as Error).message}`);
    }
    if (cron.nextRun(new Date(0)) === null) throw bad(field, `"${expression.slice(0, 100)}" never runs`);
    return new Schedule(cron);
  }

  /** The first run time after `after` (epoch ms), or null if there is none. */
  next(after: number): number | null {
    return this.cron.nextRun(new Date(after))?.getTime() ?? null;
  }

  /**
   * The run times in (after, upTo], oldest first, at most `max` of them: the newest ones when
   * there are more. `skipped` counts none of them exactly; it is true when older ones were left out.
   */
  due(after: number, upTo: number, max: number): { times: number[]; skipped: boolean } {
    if (upTo <= after || max <= 0) return { times: [], skipped: false };
    const first = this.next(after);
    if (first === null || first > upTo) return { times: [], skipped: false };
    // Walk forward a little first: the common case (a few runs due) needs no backward search.
    const times: number[] = [];
    let t: number | null = first;
    while (t !== null && t <= upTo && times.length <= max) {
      times.push(t);
      t = this.next(t);
    }
    if (times.length <= max) return { times, skipped: false };
    // More than `max` are due: the newest `max`. previousRuns looks back from before a whole
    // second, so it starts a second past upTo and what lies past upTo is dropped.
    const newest = this.cron
      .previousRuns(max + 1, new Date(upTo + 1000))
      .map((d) => d.getTime())
      .filter((x) => x > after && x <= upTo)
      .slice(0, max)
      .reverse();
    return { times: newest, skipped: true };
  }
}

/** The time after which a scheduled search's runs are due: its last run, or when it was created or enabled. */
export function runCursor(spec: { activeSince?: number | undefined }, createdAt: number, lastExecutedAt: number | null): number {
  return Math.max(lastExecutedAt ?? -Infinity, spec.activeSince ?? createdAt);
}

/** The next run time of a scheduled search: a due run not yet made, else the schedule's next after now. */
export function nextPlannedRun(spec: { cron: string; timeZone: string; backfillLimit: number; activeSince?: number | undefined }, createdAt: number, lastExecutedAt: number | null, now: number): number | null {
  let schedule: Schedule;
  try {
    schedule = Schedule.parse(spec.cron, spec.timeZone);
  } catch {
    return null;
  }
  const cursor = runCursor(spec, createdAt, lastExecutedAt);
  return schedule.due(cursor, now, spec.backfillLimit + 1).times[0] ?? schedule.next(Math.max(now, cursor));
}
