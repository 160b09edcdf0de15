import t from 'tap';
import { col, ev, rowsOf, run, type Fields } from './driver.js';

const E: Fields[] = [
  ev('a', { host: 'web1', status: '200', bytes: '100', ms: '1.5' }),
  ev('b', { host: 'web1', status: '200', bytes: '300', ms: '2.5' }),
  ev('c', { host: 'web2', status: '500', bytes: '50' }),
  ev('d', { host: 'web2', status: '200', bytes: 'n/a', ms: '4' }),
  ev('e', { host: 'web3', status: '404', bytes: '7' }),
  ev('f', { status: '200', bytes: '1000', ms: '-3' }),
  ev('g', { host: 'web1', status: '302' }),
];

t.test('count: all events, events with a field, distinct, as', async (t) => {
  t.strictSame(rowsOf('count()', E), [{ _count: '7' }]);
  t.strictSame(rowsOf('count(ms)', E), [{ _count: '4' }]);
  t.strictSame(rowsOf('count(host, distinct=true, as=hosts)', E), [{ hosts: '3' }]);
  t.strictSame(rowsOf('n := count()', E), [{ n: '7' }]);
  t.strictSame(rowsOf('nosuchword | count()', E), [{ _count: '0' }]);
});

t.test('sum / avg / min / max / range / stdDev: non-numbers skipped, product number format', async (t) => {
  t.strictSame(rowsOf('sum(bytes)', E), [{ _sum: '1457' }]);
  t.strictSame(rowsOf('avg(ms)', E), [{ _avg: '1.25' }]);
  t.strictSame(rowsOf('min(ms)', E), [{ _min: '-3' }]);
  t.strictSame(rowsOf('max(bytes, as=biggest)', E), [{ biggest: '1000' }]);
  t.strictSame(rowsOf('range(ms)', E), [{ _range: '7' }]);
  t.strictSame(rowsOf('avg(bytes)', E), [{ _avg: '291.4' }]);
  t.strictSame(rowsOf('stdDev(ms)', [ev('x', { ms: '2' }), ev('y', { ms: '4' }), ev('z', { ms: '4' }), ev('w', { ms: '4' }), ev('v', { ms: '5' }), ev('u', { ms: '5' }), ev('s', { ms: '7' }), ev('r', { ms: '9' })]), [{ _stddev: '2' }]);
  t.strictSame(rowsOf('avg(nosuch)', E), [{}], 'no values: the row has no value');
  t.strictSame(rowsOf('sum(nosuch)', E), [{ _sum: '0' }]);
  t.strictSame(rowsOf('avg(x)', [ev('a', { x: '0.1' }), ev('b', { x: '0.2' })]), [{ _avg: '0.15' }], 'float noise is printed away');
});

t.test('percentile: nearest rank, default percentiles, as prefix', async (t) => {
  const vals = Array.from({ length: 100 }, (_, i) => ev(`v${i}`, { x: String(i + 1) }));
  t.strictSame(rowsOf('percentile(x)', vals), [{ _50: '50', _75: '75', _99: '99' }]);
  t.strictSame(rowsOf('percentile(x, percentiles=[10, 100], as=p)', vals), [{ p_10: '10', p_100: '100' }]);
  // Above the exact threshold the sketch is within the 1% accuracy.
  const big = Array.from({ length: 12_000 }, (_, i) => ev(`v${i}`, { x: String(i + 1) }));
  const r = run('percentile(x, percentiles=[50, 99])', big).rows[0]!;
  t.ok(Math.abs(Number(r['_50']) - 6000) / 6000 < 0.02, `p50 ${r['_50']}`);
  t.ok(Math.abs(Number(r['_99']) - 11880) / 11880 < 0.02, `p99 ${r['_99']}`);
});

t.test('stats and the [a(), b()] list give one combined row', async (t) => {
  t.strictSame(rowsOf('[count(), avg(ms), max(bytes)]', E), [{ _count: '7', _avg: '1.25', _max: '1000' }]);
  t.strictSame(rowsOf('stats(function=[count(), sum(bytes)])', E), [{ _count: '7', _sum: '1457' }]);
  t.strictSame(rowsOf('stats()', E), [{ _count: '7' }]);
  t.throws(() => run('[count(), count()]', E), { code: 'E_QUERY', message: /_count/ });
});

t.test('groupBy: keys then values, default count, several functions, missing key skipped', async (t) => {
  const rows = rowsOf('groupBy(host)', E);
  t.strictSame(rows, [
    { host: 'web1', _count: '3' },
    { host: 'web2', _count: '2' },
    { host: 'web3', _count: '1' },
  ]);
  t.strictSame(run('groupBy(host)', E).query.fieldOrder, ['host', '_count']);
  const multi = rowsOf('groupBy([host, status], function=[count(), sum(bytes)])', E);
  t.strictSame(multi[0], { host: 'web1', status: '200', _count: '2', _sum: '400' });
  t.equal(multi.length, 5);
  t.strictSame(run('groupBy([host, status], function=[count(), sum(bytes)])', E).query.fieldOrder, ['host', 'status', '_count', '_sum']);
  t.strictSame(rowsOf('groupBy(host, function=[])', E), [{ host: 'web1' }, { host: 'web2' }, { host: 'web3' }], 'function=[]: distinct only');
  t.strictSame(rowsOf('groupBy(host, function=max(bytes))', E).map((r) => r['_max']), ['300', '50', '7']);
  t.strictSame(rowsOf('groupBy(status, function={ count() | n := _count * 10 })', E).map((r) => [r['status'], r['n']]), [
    ['200', '40'],
    ['302', '10'],
    ['404', '10'],
    ['500', '10'],
  ]);
});

t.test('groupBy limits: limit parameter and query.max_groups with a warning', async (t) => {
  const many = Array.from({ length: 50 }, (_, i) => ev(`x${i}`, { k: `k${String(i).padStart(2, '0')}` }));
  const r = run('groupBy(k, limit=10)', many, { partitions: 1 });
  t.equal(r.rows.length, 10);
  t.match(r.warnings.join('\n'), /limit of 10 groups/);
  const lim = run('groupBy(k)', many, { limits: { maxGroups: 20, maxRows: 100 }, partitions: 3 });
  t.equal(lim.rows.length, 20);
  t.match(lim.warnings.join('\n'), /20 groups/);
  t.equal(run('groupBy(k, limit=max)', many, { limits: { maxGroups: 30, maxRows: 100 } }).rows.length, 30);
  t.throws(() => run('groupBy(k, limit=50)', many, { limits: { maxGroups: 30, maxRows: 100 } }), { code: 'E_QUERY', message: /maximum 30/ });
  t.equal(run('groupBy(k)', many).warnings.length, 0);
});

t.test('top: counts, percent, rest, sum, limit', async (t) => {
  t.strictSame(rowsOf('top(status)', E), [
    { status: '200', _count: '4' },
    { status: '302', _count: '1' },
    { status: '404', _count: '1' },
    { status: '500', _count: '1' },
  ]);
  t.strictSame(rowsOf('top(status, limit=2, percent=true, rest=others)', E), [
    { status: '200', _count: '4', percent: '57.1428571428571' },
    { status: '302', _count: '1', percent: '14.2857142857143' },
    { status: 'others', _count: '2', percent: '28.5714285714286' },
  ]);
  t.strictSame(rowsOf('top(host, sum=bytes, limit=1)', E), [{ host: 'web1', _sum: '400' }]);
  t.strictSame(rowsOf('top([host, status], limit=1)', E), [{ host: 'web1', status: '200', _count: '2' }]);
  t.strictSame(run('top(status, percent=true)', E).query.fieldOrder, ['status', '_count', 'percent']);
});

t.test('collect: distinct values joined, limit with a warning', async (t) => {
  t.strictSame(rowsOf('collect(host)', E), [{ host: 'web1\nweb2\nweb3' }]);
  t.strictSame(rowsOf('collect([host, status], separator=",")', E), [{ host: 'web1,web2,web3', status: '200,302,404,500' }]);
  t.strictSame(rowsOf('groupBy(status, function=collect(host)) | status=200', E), [{ status: '200', host: 'web1\nweb2' }]);
  const r = run('collect(status, limit=2)', E, { partitions: 1 });
  t.equal(r.rows[0]!['status']!.split('\n').length, 2);
  t.match(r.warnings.join(), /more than 2 distinct values/);
});

t.test('every aggregate gives the same answer from 1 and from 3 partitions', async (t) => {
  const events = Array.from({ length: 300 }, (_, i) =>
    ev(`line ${i} ${i % 7 === 0 ? 'ERROR' : 'ok'}`, { k: `k${i % 13}`, v: String((i * 37) % 101), w: i % 5 === 0 ? 'x' : String(i / 4) }, 1_000_000 + ((i * 7919) % 300) * 1000),
  );
  const queries = [
    'count()',
    'count(k, distinct=true)',
    'sum(v)',
    'avg(w)',
    'min(v)',
    'max(w)',
    'range(v)',
    'stdDev(v)',
    'percentile(v, percentiles=[1, 50, 90])',
    '[count(), avg(v)]',
    'groupBy(k)',
    'groupBy([k], function=[avg(v), max(v), count(k, distinct=true)])',
    'top(k, limit=3, percent=true, rest=other)',
    'top(k, sum=v)',
    'head(7)',
    'tail(11)',
    'sort(v, limit=9)',
    'sort([k, v], order=[asc, desc], limit=20)',
    'table([k, v], limit=15)',
    'ERROR | groupBy(k) | sort(_count)',
    'timeChart(function=count())',
    'timeChart(k, function=avg(v), span=1h)',
    'bucket(span=5m, field=k)',
    'groupBy(k, function={ v > 50 | count() })',
    'collect(k)',
  ];
  for (const q of queries) {
    const one = run(q, events, { partitions: 1, ctx: { start: 1_000_000, end: 1_300_000, timeZoneOffsetMinutes: 0, now: 1_300_000, live: false } });
    const three = run(q, events, { partitions: 3, ctx: { start: 1_000_000, end: 1_300_000, timeZoneOffsetMinutes: 0, now: 1_300_000, live: false } });
    t.strictSame(three.rows, one.rows, q);
    t.ok(one.rows.length > 0, `${q} has rows`);
  }
});

t.test('count(distinct) stays bounded and close above the exact threshold', async (t) => {
  const events = Array.from({ length: 30_000 }, (_, i) => ev('x', { u: `user${i}` }));
  const r = run('count(u, distinct=true)', events).rows[0]!;
  const n = Number(r['_count']);
  t.ok(Math.abs(n - 30_000) / 30_000 < 0.05, `estimate ${n}`);
  t.strictSame(col(rowsOf('count(u, distinct=true)', events.slice(0, 5000)), '_count'), ['5000']);
});
