import t from 'tap';
import { ctxOf, DAY, ev, HOUR, NOW, rowsOf, run, type Fields } from './driver.js';

const SPAN = 900_000;

t.test('timeChart over 24 hours: 15-minute span, 97 buckets, empty buckets, extraData', async (t) => {
  const ctx = ctxOf();
  const first = Math.floor(ctx.start / SPAN) * SPAN;
  const last = Math.floor(ctx.end / SPAN) * SPAN;
  const events: Fields[] = [ev('a', {}, ctx.start), ev('b', {}, ctx.start + 1), ev('c', {}, ctx.end), ev('d', {}, first + 5 * SPAN + 17)];
  const r = run('timechart()', events, { ctx });
  t.equal(r.rows.length, 97);
  t.strictSame(r.rows[0], { _bucket: String(first), _count: '2' });
  t.strictSame(r.rows[5], { _bucket: String(first + 5 * SPAN), _count: '1' });
  t.strictSame(r.rows[96], { _bucket: String(last), _count: '1' });
  t.strictSame(r.rows[1], { _bucket: String(first + SPAN), _count: '0' }, 'empty buckets have _count 0');
  t.strictSame(r.query.extraData, {
    bucket_first_bucket: String(first),
    bucket_last_bucket: String(last),
    bucket_span_millis: '900000',
    bucket_span_humanized: '15 minutes',
    timechart: 'true',
    'ui:suggested-widget': 'time-chart',
  });
  t.strictSame(r.query.fieldOrder, ['_bucket', '_count']);
  t.equal(r.query.isAggregate, true);
  // The recording's numbers (api-facts §1.4): queryEnd 1585145700394 -> last bucket 1585145700000.
  t.equal(r.query.extraData['bucket_last_bucket'], '1585145700000');
  t.equal(r.query.extraData['bucket_first_bucket'], '1585059300000');
});

t.test('auto span for other ranges, buckets=, span=, minSpan, humanized names', async (t) => {
  const hour = ctxOf({ start: NOW - HOUR });
  t.equal(run('timechart()', [], { ctx: hour }).query.extraData['bucket_span_humanized'], '1 minute');
  const week = ctxOf({ start: NOW - 7 * DAY });
  t.equal(run('timechart()', [], { ctx: week }).query.extraData['bucket_span_humanized'], '2 hours');
  const r = run('timechart(span=1h)', [], { ctx: ctxOf() });
  t.equal(r.query.extraData['bucket_span_millis'], String(HOUR));
  t.equal(r.query.extraData['bucket_span_humanized'], '1 hour');
  t.equal(r.rows.length, 25);
  const b = run('timechart(buckets=10)', [], { ctx: ctxOf() });
  t.equal(b.query.extraData['bucket_span_millis'], String(DAY / 10));
  t.equal(run('timechart(span=1m, minSpan=30m)', [], { ctx: ctxOf() }).query.extraData['bucket_span_humanized'], '30 minutes');
  t.equal(run('timechart(span=1d)', [], { ctx: ctxOf() }).query.extraData['bucket_span_humanized'], '1 day');
  const tiny = run('timechart(span=1s)', [], { ctx: ctxOf() });
  t.ok(tiny.rows.length <= 1500, 'at most 1500 buckets');
  t.match(tiny.warnings.join('\n'), /more than 1500 buckets/);
});

t.test('series: rows per bucket and series, top series by total, limit warning', async (t) => {
  const ctx = ctxOf({ start: 0, end: 3 * HOUR - 1 });
  const events: Fields[] = [];
  for (let i = 0; i < 12; i++) events.push(ev('x', { host: `h${i}` }, HOUR + i));
  for (let i = 0; i < 5; i++) events.push(ev('x', { host: 'h3' }, 2 * HOUR + i), ev('x', { host: 'h7' }, i));
  events.push(ev('no host', {}, 10));
  const r = run('timechart(host, span=1h)', events, { ctx });
  t.equal(r.rows.length, 3 * 10, '3 buckets x 10 series');
  t.strictSame(r.rows.slice(0, 3), [
    { _bucket: '0', host: 'h0', _count: '0' },
    { _bucket: '0', host: 'h1', _count: '0' },
    { _bucket: '0', host: 'h10', _count: '0' },
  ]);
  t.ok(r.rows.some((x) => x['host'] === 'h3' && x['_bucket'] === String(2 * HOUR) && x['_count'] === '5'));
  t.ok(r.rows.some((x) => x['host'] === 'h7' && x['_bucket'] === '0' && x['_count'] === '5'));
  t.match(r.warnings.join('\n'), /12 series/);
  t.strictSame(r.query.fieldOrder, ['_bucket', 'host', '_count']);
  const lim = run('timechart(host, span=1h, limit=2)', events, { ctx });
  t.strictSame([...new Set(lim.rows.map((x) => x['host']))], ['h3', 'h7']);
  t.equal(lim.warnings.length, 0, 'an explicit limit does not warn');
});

t.test('function= and errors', async (t) => {
  const ctx = ctxOf({ start: 0, end: 2 * HOUR - 1 });
  const events = [ev('a', { v: '1' }, 10), ev('b', { v: '3' }, 20), ev('c', { v: '10' }, HOUR + 5)];
  t.strictSame(rowsOf('timechart(function=avg(v), span=1h)', events, { ctx }), [
    { _bucket: '0', _avg: '2' },
    { _bucket: String(HOUR), _avg: '10' },
  ]);
  t.strictSame(rowsOf('timechart(function=[count(), max(v)], span=1h)', events, { ctx }), [
    { _bucket: '0', _count: '2', _max: '3' },
    { _bucket: String(HOUR), _count: '1', _max: '10' },
  ]);
  t.throws(() => run('timechart(func=count())', events, { ctx }), { code: 'E_QUERY', message: /^parameter func is not supported in function timeChart/ });
  t.throws(() => run('timechart(span=soon)', events, { ctx }), { code: 'E_QUERY', message: /span/ });
});

t.test('1d spans align to the time zone offset (request or timezone parameter)', async (t) => {
  const start = Date.UTC(2024, 0, 10, 0, 0, 0);
  const ctx = ctxOf({ start, end: start + 3 * DAY - 1, timeZoneOffsetMinutes: 120 });
  const r = run('timechart(span=1d)', [ev('x', {}, start + 23 * HOUR)], { ctx });
  // Midnight at UTC+2 is 22:00 UTC the day before.
  t.equal(r.query.extraData['bucket_first_bucket'], String(start - 2 * HOUR));
  t.equal(r.rows.length, 4);
  t.strictSame(r.rows[1], { _bucket: String(start + DAY - 2 * HOUR), _count: '1' }, '23:00 UTC is the next day at UTC+2');
  const tz = run('timechart(span=1d, timezone="-05:00")', [], { ctx });
  t.equal(tz.query.extraData['bucket_first_bucket'], String(start - DAY + 5 * HOUR), 'the timezone parameter wins');
  const utc = run('timechart(span=1d, timezone=UTC)', [], { ctx });
  t.equal(utc.query.extraData['bucket_first_bucket'], String(start));
  const hourly = run('timechart(span=1h)', [], { ctx });
  t.equal(hourly.query.extraData['bucket_first_bucket'], String(start), 'spans under a day are not shifted');
  const iana = run('timechart(span=1d, timezone="Europe/Copenhagen")', [], { ctx });
  t.equal(iana.query.extraData['bucket_first_bucket'], String(start - HOUR), 'IANA zones: the offset at the start (CET, +1 in January)');
  t.throws(() => run('timechart(span=1d, timezone="Mars/Olympus")', [], { ctx }), { code: 'E_QUERY', message: /unknown time zone/ });
});

t.test('bucket(): same buckets, field= groups, no timechart keys', async (t) => {
  const ctx = ctxOf({ start: 0, end: 2 * HOUR - 1 });
  const events = [ev('a', { k: 'x' }, 10), ev('b', { k: 'y' }, 20), ev('c', { k: 'x' }, HOUR + 5)];
  const r = run('bucket(1h, field=k)', events, { ctx });
  t.strictSame(r.rows, [
    { _bucket: '0', k: 'x', _count: '1' },
    { _bucket: '0', k: 'y', _count: '1' },
    { _bucket: String(HOUR), k: 'x', _count: '1' },
    { _bucket: String(HOUR), k: 'y', _count: '0' },
  ]);
  t.equal(r.query.extraData['timechart'], undefined);
  t.equal(r.query.extraData['bucket_span_millis'], String(HOUR));
});
