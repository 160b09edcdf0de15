/** Schedules of scheduled searches: cron in a time zone, run times due, the backfill cap. */
import t from 'tap';
import { nextPlannedRun, parseTimeZone, Schedule } from '../../../src/alerts/schedule.js';

const at = (iso: string): number => Date.parse(iso);

t.test('time zones: the product\'s UTC offsets and IANA names', async (t) => {
  t.strictSame(parseTimeZone('UTC'), { utcOffset: 0 });
  t.strictSame(parseTimeZone('UTC-01'), { utcOffset: -60 });
  t.strictSame(parseTimeZone('UTC+12:45'), { utcOffset: 765 });
  t.strictSame(parseTimeZone('Europe/Copenhagen'), { timezone: 'Europe/Copenhagen' });
  t.throws(() => parseTimeZone('UTC+15'), /timeZone/);
  t.throws(() => parseTimeZone('Nowhere/Special'), /not a time zone/);
  t.throws(() => parseTimeZone(''), /required/);
});

t.test('run times follow the zone', async (t) => {
  const utc = Schedule.parse('0 9 * * *', 'UTC');
  t.equal(utc.next(at('2026-07-01T00:00:00Z')), at('2026-07-01T09:00:00Z'));
  const plus2 = Schedule.parse('0 9 * * *', 'UTC+02');
  t.equal(plus2.next(at('2026-07-01T00:00:00Z')), at('2026-07-01T07:00:00Z'));
  const cph = Schedule.parse('0 9 * * *', 'Europe/Copenhagen');
  t.equal(cph.next(at('2026-01-10T00:00:00Z')), at('2026-01-10T08:00:00Z'), 'winter: UTC+1');
  t.equal(cph.next(at('2026-07-10T00:00:00Z')), at('2026-07-10T07:00:00Z'), 'summer: UTC+2');
  t.throws(() => Schedule.parse('61 * * * *', 'UTC'), /schedule: .*not a cron expression/);
  t.throws(() => Schedule.parse('* *', 'UTC'), /2 fields/);
});

t.test('due: every run time after the cursor up to now, the newest ones past the cap', async (t) => {
  const s = Schedule.parse('*/5 * * * *', 'UTC');
  const from = at('2026-01-01T00:00:00Z');
  t.strictSame(s.due(from, from + 4 * 60_000, 3), { times: [], skipped: false }, 'nothing due before the first run time');
  t.strictSame(s.due(from, from + 10 * 60_000, 3), { times: [from + 5 * 60_000, from + 10 * 60_000], skipped: false }, 'the cursor itself is not due again; now is');
  t.strictSame(s.due(from, from + 60 * 60_000, 3), { times: [from + 50 * 60_000, from + 55 * 60_000, from + 60 * 60_000], skipped: true }, 'past the cap: the newest, oldest first');
  const year = s.due(from, from + 365 * 86_400_000, 2);
  t.equal(year.times.length, 2, 'a year down costs no walk over every run time');
  t.ok(year.skipped);
  const secs = Schedule.parse('*/2 * * * * *', 'UTC');
  t.strictSame(secs.due(from, from + 5000, 10).times, [from + 2000, from + 4000], 'six fields: seconds first');
});

t.test('the next planned run: a due one first, else the schedule\'s next', async (t) => {
  const spec = { cron: '*/5 * * * *', timeZone: 'UTC', backfillLimit: 1 };
  const created = at('2026-01-01T00:00:00Z');
  t.equal(nextPlannedRun(spec, created, null, created + 60_000), created + 5 * 60_000);
  t.equal(nextPlannedRun(spec, created, null, created + 21 * 60_000), created + 15 * 60_000, 'made up within the backfill limit');
  t.equal(nextPlannedRun(spec, created, created + 20 * 60_000, created + 21 * 60_000), created + 25 * 60_000);
});
