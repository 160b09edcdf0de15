/**
 * window() (query-functions.md §1, the product's window() page): inside timeChart()/bucket() only,
 * the aggregate of the last n buckets at each bucket (n = buckets, or span rounded to whole
 * buckets); the first buckets aggregate what exists before them; a window wider than the chart
 * yields nothing; mixed with plain aggregates in function=[...], those see their own bucket only.
 * Expected values are worked out by hand from the events below; every query also runs over 1 and 3
 * partitions (the driver checks that the merged answers agree).
 */
import t from 'tap';
import { compileQuery } from '../../../src/query/compile.js';
import { ctxOf, ev, rowsOf, type Fields } from './driver.js';

const M = 60_000;
/** Six one-minute buckets: S, S+1m, ..., S+5m. */
const S = 1_585_144_800_000;
const ctx = ctxOf({ start: S, end: S + 5 * M + 59_999, now: S + 6 * M });
// bucket: values of x (bucket 2 is empty)
const XS: number[][] = [[1, 3], [5], [], [10], [2, 4], [6]];
const events: Fields[] = XS.flatMap((xs, b) => xs.map((x, i) => ev(`x=${x}`, { x: String(x), host: x % 2 === 0 ? 'even' : 'odd' }, S + b * M + 1000 * (i + 1))));
const bucket = (i: number): string => String(S + i * M);

t.test('window(avg, buckets=3): the documented running average', async (t) => {
  const rows = rowsOf('timeChart(span=1m, function=window(function=avg(x), buckets=3))', events, { ctx });
  t.strictSame(rows, [
    { _bucket: bucket(0), _avg: '2' },
    { _bucket: bucket(1), _avg: '3' },
    { _bucket: bucket(2), _avg: '3' },
    { _bucket: bucket(3), _avg: '7.5' },
    { _bucket: bucket(4), _avg: '5.33333333333333' }, // 16/3, averages print 15 significant digits
    { _bucket: bucket(5), _avg: '5.5' },
  ]);
});

t.test('span= is rounded to whole buckets; the unnamed argument is function', async (t) => {
  const sums = ['4', '9', '5', '10', '16', '12'];
  const rows = rowsOf('timeChart(span=1m, function=window(sum(x), span=2m))', events, { ctx });
  t.strictSame(rows.map((r) => r._sum), sums);
  const rounded = rowsOf('timeChart(span=1m, function=window(sum(x), span=130s))', events, { ctx });
  t.strictSame(rounded.map((r) => r._sum), sums, '130s rounds to 2 buckets');
  const viaBucket = rowsOf('bucket(span=1m, function=window(function=sum(x), buckets=2))', events, { ctx });
  t.strictSame(viaBucket.map((r) => r._sum), sums, 'inside bucket() too');
  t.strictSame(rowsOf('timeChart(span=1m, function=window(buckets=2))', events, { ctx }).map((r) => r._count), ['2', '3', '1', '1', '3', '3'], 'default function count()');
});

t.test('mixed with plain aggregates: those see only their own bucket', async (t) => {
  const rows = rowsOf('timeChart(span=1m, function=[max(x), window([sum(x), count(as=n)], buckets=2)])', events, { ctx });
  t.strictSame(rows.map((r) => [r._max, r._sum, r.n]), [
    ['3', '4', '2'],
    ['5', '9', '3'],
    [rowsOf('timeChart(span=1m, function=max(x))', events, { ctx })[2]!._max, '5', '1'],
    ['10', '10', '1'],
    ['4', '16', '3'],
    ['6', '12', '3'],
  ]);
});

t.test('per series', async (t) => {
  const rows = rowsOf('timeChart(host, span=1m, function=window(count(), buckets=2))', events, { ctx });
  const of = (h: string): string[] => rows.filter((r) => r.host === h).map((r) => r._count!);
  // even: x=10 (b3), 2 and 4 (b4), 6 (b5); odd: 1, 3 (b0), 5 (b1)
  t.strictSame(of('even'), ['0', '0', '0', '1', '3', '3']);
  t.strictSame(of('odd'), ['2', '3', '1', '0', '0', '0']);
});

t.test('a window wider than the chart yields nothing', async (t) => {
  const rows = rowsOf('timeChart(span=1m, function=window(sum(x), buckets=7))', events, { ctx });
  t.strictSame(rows, [], 'an empty result');
  t.strictSame(rowsOf('timeChart(span=1m, function=window(sum(x), buckets=6))', events, { ctx }).map((r) => r._sum), ['4', '9', '9', '19', '25', '31'], 'six buckets fit');
});

t.test('errors, with the position of the call', async (t) => {
  const err = (q: string): string => {
    try {
      compileQuery(q, { ctx });
    } catch (e) {
      return (e as Error).message;
    }
    return 'compiled';
  };
  t.match(err('window(function=count(), buckets=2)'), /window\(\) can only be used as the function argument of timeChart\(\) or bucket\(\)/);
  t.match(err('groupBy(host, function=window(count(), buckets=2))'), /window\(\) can only be used as the function argument/);
  t.match(err('timeChart(span=1m, function=window(count(), buckets=2, span=2m))'), /window: exactly one of span and buckets/);
  t.match(err('timeChart(span=1m, function=window(count()))'), /window: exactly one of span and buckets/);
  t.match(err('timeChart(span=1m, function=window(count(), buckets=0))'), /buckets of function window must be a whole number of at least 1/);
  t.match(err('timeChart(span=1m, function=window(count(), buckets=201))'), /201 buckets is more than the 200/);
  t.match(err('timeChart(span=1m, function=window(window(count(), buckets=2), buckets=2))'), /window\(\) can only be used/, 'no window inside a window');
  t.match(err('timeChart(span=1m, function=window(count(), buckets=2))\n| window(buckets=2)'), /line 2/, 'the position is the line of the call');
});
