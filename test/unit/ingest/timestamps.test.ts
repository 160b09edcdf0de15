import t from 'tap';
import {
  matchIsoTimestampAt,
  matchOffsetAt,
  monthAbbreviationAt,
  normaliseTimezone,
  parseIsoTimestamp,
  utcMillis,
} from '../../../src/ingest/timestamps.js';

const H = 3_600_000;

t.test('zone designators: Z, +hh:mm, +hhmm, +hh, negative offsets', async (t) => {
  const base = Date.UTC(2016, 5, 6, 12, 0, 0);
  t.same(parseIsoTimestamp('2016-06-06T12:00:00Z'), { ms: base, zone: 'Z' });
  t.same(parseIsoTimestamp('2016-06-06T12:00:00z'), { ms: base, zone: 'Z' });
  t.same(parseIsoTimestamp('2016-06-06T12:00:00+02:00'), { ms: base - 2 * H, zone: '+02:00' });
  t.same(parseIsoTimestamp('2016-06-06T12:00:00+0200'), { ms: base - 2 * H, zone: '+02:00' });
  t.same(parseIsoTimestamp('2016-06-06T12:00:00+02'), { ms: base - 2 * H, zone: '+02:00' });
  t.same(parseIsoTimestamp('2016-06-06T12:00:00-05:30'), { ms: base + 5.5 * H, zone: '-05:30' });
  t.same(parseIsoTimestamp('2016-06-06T12:00:00+00:00'), { ms: base, zone: '+00:00' }, '+00:00 is kept, not turned into Z');
  t.same(parseIsoTimestamp('2016-06-06T12:00:00+18:00'), { ms: base - 18 * H, zone: '+18:00' });
});

t.test('fractions of 1..9 digits keep milliseconds and truncate the rest', async (t) => {
  const base = Date.UTC(2020, 0, 2, 3, 4, 5);
  const cases: [string, number][] = [
    ['5', 500],
    ['12', 120],
    ['123', 123],
    ['1234', 123],
    ['12345', 123],
    ['123456', 123],
    ['1234567', 123],
    ['12345678', 123],
    ['999999999', 999],
  ];
  for (const [frac, ms] of cases) {
    t.same(parseIsoTimestamp(`2020-01-02T03:04:05.${frac}Z`), { ms: base + ms, zone: 'Z' }, `.${frac}`);
  }
  t.same(parseIsoTimestamp('2020-01-02T03:04:05,25Z'), { ms: base + 250, zone: 'Z' }, 'comma as decimal sign');
  t.equal(parseIsoTimestamp('2020-01-02T03:04:05.1234567890Z'), null, 'ten digits');
  t.equal(parseIsoTimestamp('2020-01-02T03:04:05.Z'), null, 'no digits');
});

t.test('space or T separator, optional seconds', async (t) => {
  const base = Date.UTC(2020, 0, 2, 3, 4, 5);
  t.same(parseIsoTimestamp('2020-01-02 03:04:05Z'), { ms: base, zone: 'Z' });
  t.same(parseIsoTimestamp('2020-01-02t03:04:05Z'), { ms: base, zone: 'Z' });
  t.same(parseIsoTimestamp('2020-01-02T03:04+01:00'), { ms: Date.UTC(2020, 0, 2, 2, 4), zone: '+01:00' });
  t.equal(parseIsoTimestamp('2020-01-02  03:04:05Z'), null, 'two spaces');
  t.equal(parseIsoTimestamp('2020-01-02_03:04:05Z'), null);
});

t.test('no zone: null when required, otherwise UTC with zone Z', async (t) => {
  const base = Date.UTC(2020, 0, 2, 3, 4, 5, 600);
  t.same(parseIsoTimestamp('2020-01-02T03:04:05.6'), { ms: base, zone: 'Z' });
  t.same(parseIsoTimestamp('2020-01-02T03:04:05.6', { requireZone: false }), { ms: base, zone: 'Z' });
  t.equal(parseIsoTimestamp('2020-01-02T03:04:05.6', { requireZone: true }), null);
  t.same(parseIsoTimestamp('2020-01-02T03:04:05.6Z', { requireZone: true }), { ms: base, zone: 'Z' });
});

t.test('invalid dates and malformed text give null', async (t) => {
  const bad = [
    '',
    '2020-02-30T00:00:00Z',
    '2021-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2020-13-01T00:00:00Z',
    '2020-00-01T00:00:00Z',
    '2020-01-00T00:00:00Z',
    '2020-04-31T00:00:00Z',
    '2020-01-01T24:00:00Z',
    '2020-01-01T23:60:00Z',
    '2020-01-01T23:59:60Z',
    '2020-01-01T00:00:00+19:00',
    '2020-01-01T00:00:00+02:60',
    '2020-01-01T00:00:00+02:',
    '2020-01-01T00:00:00+2',
    '2020-01-01T00:00:00 Z',
    '2020-01-01T00:00:00Z ',
    ' 2020-01-01T00:00:00Z',
    '2020-1-01T00:00:00Z',
    '20200101T000000Z',
    '2020-01-01',
    '2020-01-01T00',
    'yesterday',
    '2020-01-01T00:00:00ZZ',
  ];
  for (const text of bad) t.equal(parseIsoTimestamp(text), null, JSON.stringify(text));
  t.same(parseIsoTimestamp('2020-02-29T00:00:00Z'), { ms: Date.UTC(2020, 1, 29), zone: 'Z' }, 'leap day');
  t.same(parseIsoTimestamp('2000-02-29T00:00:00Z'), { ms: Date.UTC(2000, 1, 29), zone: 'Z' }, '400-year leap day');
});

t.test('calendar arithmetic holds across the whole range, including years below 100', async (t) => {
  t.same(parseIsoTimestamp('1970-01-01T00:00:00Z'), { ms: 0, zone: 'Z' });
  t.same(parseIsoTimestamp('1969-12-31T23:59:59.999Z'), { ms: -1, zone: 'Z' });
  const year50 = new Date(0);
  year50.setUTCFullYear(50, 2, 1);
  t.same(parseIsoTimestamp('0050-03-01T00:00:00Z'), { ms: year50.getTime(), zone: 'Z' });
  t.equal(parseIsoTimestamp('9999-12-31T23:59:59.999Z')?.ms, Date.UTC(9999, 11, 31, 23, 59, 59, 999));
  // Every day of a leap and a non-leap year against Date.UTC.
  for (const year of [2023, 2024]) {
    for (let d = 0; d < 366; d++) {
      const ms = Date.UTC(year, 0, 1 + d, 13, 14, 15);
      const iso = new Date(ms).toISOString();
      if (!iso.startsWith(String(year))) continue;
      if (parseIsoTimestamp(iso)?.ms !== ms) t.fail(`mismatch for ${iso}`);
    }
  }
});

t.test('matchIsoTimestampAt finds a date-time inside a line and reports where it ends', async (t) => {
  const line = '[2020-01-02T03:04:05.678+01:00] INFO';
  const m = matchIsoTimestampAt(line, 1);
  t.same(m, { ms: Date.UTC(2020, 0, 2, 2, 4, 5, 678), zone: '+01:00', end: 30 });
  t.same(matchIsoTimestampAt('2020-01-02T03:04:05 rest', 0), { ms: Date.UTC(2020, 0, 2, 3, 4, 5), zone: null, end: 19 });
  t.equal(matchIsoTimestampAt(line, 0), null);
});

t.test('offsets, months and utcMillis', async (t) => {
  t.same(matchOffsetAt('-0800]', 0), { minutes: -480, text: '-08:00', end: 5 });
  t.same(matchOffsetAt('+05:45', 0), { minutes: 345, text: '+05:45', end: 6 });
  t.equal(matchOffsetAt('0800', 0), null);
  t.equal(monthAbbreviationAt('Oct', 0), 10);
  t.equal(monthAbbreviationAt('xJAN', 1), 1);
  t.equal(monthAbbreviationAt('Ja', 0), 0);
  t.equal(monthAbbreviationAt('Jun', 0), 6);
  t.equal(monthAbbreviationAt('J@n', 0), 0);
  t.equal(utcMillis(2020, 2, 29, 0, 0, 0, 0), Date.UTC(2020, 1, 29));
  t.equal(utcMillis(2019, 2, 29, 0, 0, 0, 0), null);
  t.equal(utcMillis(2019, 1, 1, 0, 0, 0, 1000), null);
});

t.test('normaliseTimezone accepts IANA names and fixed offsets', async (t) => {
  t.equal(normaliseTimezone('Europe/Copenhagen'), 'Europe/Copenhagen');
  t.equal(normaliseTimezone('europe/copenhagen'), 'Europe/Copenhagen', 'case is normalised');
  t.equal(normaliseTimezone('America/New_York'), 'America/New_York');
  t.equal(normaliseTimezone('UTC'), 'UTC');
  t.equal(normaliseTimezone('GMT'), 'UTC');
  t.equal(normaliseTimezone('Z'), 'Z');
  t.equal(normaliseTimezone('+02:00'), '+02:00');
  t.equal(normaliseTimezone('+0200'), '+02:00');
  t.equal(normaliseTimezone('-05'), '-05:00');
  t.equal(normaliseTimezone('-5'), '-05:00');
  t.equal(normaliseTimezone('UTC+01:00'), '+01:00');
  t.equal(normaliseTimezone('GMT-0330'), '-03:30');
  t.equal(normaliseTimezone('Foo/Bar'), null);
  t.equal(normaliseTimezone('Europe/Copenhagen '), null);
  t.equal(normaliseTimezone(''), null);
  t.equal(normaliseTimezone('+25:00'), null);
  t.equal(normaliseTimezone('UTC+'), null);
  t.equal(normaliseTimezone('x'.repeat(100)), null);
  // Second lookups come from the cache and must agree.
  t.equal(normaliseTimezone('europe/copenhagen'), 'Europe/Copenhagen');
  t.equal(normaliseTimezone('Foo/Bar'), null);
});
