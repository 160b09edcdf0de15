import t from 'tap';
import { compileQuery } from '../../../src/query/compile.js';
import { MapEvent } from '../../../src/query/runtime.js';
import { col, ctxOf, ev, rowsOf, run, type Fields } from './driver.js';

const E: Fields[] = [
  ev('one', { n: '5', s: 'b', h: 'ff' }, 1000),
  ev('two', { n: '40', s: 'a', h: '0x10' }, 3000),
  ev('three', { n: '3', s: 'c', h: '9' }, 2000),
  ev('four', { s: 'd' }, 5000),
  ev('five', { n: 'x', s: 'a' }, 4000),
];

t.test('head: oldest first; tail: newest first; limit and max', async (t) => {
  t.strictSame(col(rowsOf('head(2)', E), '@rawstring'), ['one', 'three']);
  t.strictSame(col(rowsOf('tail(limit=3)', E), '@rawstring'), ['four', 'five', 'two']);
  t.equal(rowsOf('head()', E).length, 5);
  t.equal(run('tail(limit=max)', E, { limits: { maxGroups: 10, maxRows: 2 } }).rows.length, 2);
  t.throws(() => run('tail(limit=5)', E, { limits: { maxGroups: 10, maxRows: 2 } }), { code: 'E_QUERY', message: /maximum 2/ });
  t.equal(run('head(2)', E).query.isAggregate, true);
});

t.test('head/tail after an aggregate keep the row order', async (t) => {
  const rows = rowsOf('groupBy(s) | tail(2)', E);
  t.strictSame(col(rows, 's'), ['c', 'd']);
  t.strictSame(col(rowsOf('groupBy(s) | head(2)', E), 's'), ['a', 'b']);
});

t.test('sort: default _count desc, asc, types, several fields, missing last, limit', async (t) => {
  t.strictSame(col(rowsOf('groupBy(s) | sort()', E), 's'), ['a', 'b', 'c', 'd']);
  t.strictSame(col(rowsOf('sort(n)', E), 'n'), ['40', '5', '3', 'x', undefined], 'numbers by value, then text, missing last');
  t.strictSame(col(rowsOf('sort(n, order=asc)', E), 'n'), ['3', '5', '40', 'x', undefined]);
  t.strictSame(col(rowsOf('sort(n, type=string, order=asc)', E), 'n'), ['3', '40', '5', 'x', undefined]);
  t.strictSame(col(rowsOf('sort(h, type=hex)', E), 'h'), ['ff', '0x10', '9', undefined, undefined]);
  t.strictSame(col(rowsOf('sort([s, n], order=[asc, desc])', E), '@rawstring'), ['two', 'five', 'one', 'three', 'four']);
  t.strictSame(col(rowsOf('sort(n, limit=2)', E), 'n'), ['40', '5']);
  t.throws(() => run('sort(n, order=sideways)', E), { code: 'E_QUERY', message: /asc or desc/ });
});

t.test('table: only the fields, in order, newest first by default, fieldOrder', async (t) => {
  const r = run('table([s, n])', E);
  t.strictSame(r.rows, [{ s: 'd' }, { s: 'a', n: 'x' }, { s: 'a', n: '40' }, { s: 'c', n: '3' }, { s: 'b', n: '5' }]);
  t.strictSame(r.query.fieldOrder, ['s', 'n']);
  t.strictSame(rowsOf('table(s, sortby=s, order=asc, limit=2)', E), [{ s: 'a' }, { s: 'a' }]);
});

t.test('select keeps only the fields (a transformation: no limit, still implicit tail)', async (t) => {
  const r = run('select([s, n])', E);
  t.strictSame(r.rows.map((x) => `${Object.keys(x).length}:${x['s']}/${x['n']}`).sort(), ['1:d/undefined', '2:a/40', '2:a/x', '2:b/5', '2:c/3']);
  t.equal(r.query.isAggregate, false);
  t.equal(r.rows.length, 5);
});

t.test('fieldOrder survives sort/head/tail after an aggregate', async (t) => {
  t.strictSame(run('groupBy(s) | sort(_count) | head(3)', E).query.fieldOrder, ['s', '_count']);
  t.strictSame(run('groupBy(s) | tail(3)', E).query.fieldOrder, ['s', '_count']);
  t.strictSame(run('groupBy(s) | drop(_count)', E).query.fieldOrder, ['s']);
  t.strictSame(run('groupBy(s) | rename(s, as=t)', E).query.fieldOrder, ['t', '_count']);
  t.equal(run('groupBy(s) | kvParse()', E).query.fieldOrder, null, 'unknown after a transformation that may add anything');
  t.equal(run('sort(n)', E).query.fieldOrder, null, 'events: no column order');
});

t.test('tail skips events older than its cut without reading their fields', async (t) => {
  let reads = 0;
  class Counting extends MapEvent {
    override names(): string[] {
      reads++;
      return super.names();
    }
  }
  const q = compileQuery('tail(10)', { ctx: ctxOf() });
  const stage = q.stages[0]!;
  if (stage.kind !== 'agg') throw new Error('tail is an aggregate');
  const st = stage.agg.init();
  for (let i = 1000; i > 0; i--) stage.agg.add(st, new Counting({ '@timestamp': String(i), '@id': `e${i}`, x: String(i) }));
  const rows = stage.agg.finish(st);
  t.strictSame(rows.map((r) => r.get('x')), ['1000', '999', '998', '997', '996', '995', '994', '993', '992', '991']);
  t.ok(reads < 100, `${reads} events read of 1000`);
});
