import t from 'tap';
// @ts-expect-error the benchmarks are plain JavaScript modules without declarations
import { compareAnswers, normalizeLogsvc, normalizeVictoriaLogs } from '../../../bench/peers/compare.mjs';

type Kind = 'count' | 'events' | 'groups' | 'top' | 'value' | 'histogram';
const cmp = compareAnswers as (kind: Kind, a: unknown, b: unknown, tolerance?: number) => string | null;
const nl = normalizeLogsvc as (kind: Kind, rows: Record<string, unknown>[], q: { field?: string; valueField?: string }) => unknown;
const nv = normalizeVictoriaLogs as (kind: Kind, rows: Record<string, unknown>[], q: { field?: string }) => unknown;

t.test('counts: logsvc _count against LogsQL stats count() c', async (t) => {
  t.equal(cmp('count', nl('count', [{ _count: '42' }], {}), nv('count', [{ c: '42' }], {})), null);
  t.match(cmp('count', nl('count', [{ _count: 42 }], {}), nv('count', [{ c: '41' }], {})), /42 vs 41/);
});

t.test('events: same count and the same timestamps', async (t) => {
  const ts = [Date.UTC(2024, 4, 6, 8, 0, 1, 5), Date.UTC(2024, 4, 6, 8, 0, 0, 7)];
  const l = nl('events', ts.map((x) => ({ '@timestamp': x })), {});
  const v = nv('events', ts.map((x) => ({ _time: new Date(x).toISOString() })), {});
  t.equal(cmp('events', l, v), null, 'order does not matter');
  const v2 = nv('events', [{ _time: new Date(ts[0]! + 1).toISOString() }, { _time: new Date(ts[1]!).toISOString() }], {});
  t.match(cmp('events', l, v2), /timestamp #1/);
  t.match(cmp('events', l, nv('events', [], {})), /2 events vs 0/);
});

t.test('groups: every group, and VictoriaLogs\' empty group left out', async (t) => {
  const l = nl('groups', [{ method: 'GET', _count: 5 }, { method: 'POST', _count: '2' }], { field: 'method' });
  const v = nv('groups', [{ method: 'POST', c: '2' }, { method: 'GET', c: '5' }, { method: '', c: '9' }], { field: 'method' });
  t.equal(cmp('groups', l, v), null);
  const v2 = nv('groups', [{ method: 'GET', c: '5' }, { method: 'PUT', c: '2' }], { field: 'method' });
  t.match(cmp('groups', l, v2), /2 differ/);
});

t.test('top: ranked counts must match; ties at the last place may list other values', async (t) => {
  const l = nl('top', [{ ip: 'a', _count: 9 }, { ip: 'b', _count: 4 }, { ip: 'c', _count: 4 }], { field: 'ip' });
  const tie = nv('top', [{ ip: 'a', hits: '9' }, { ip: 'b', hits: '4' }, { ip: 'd', hits: '4' }], { field: 'ip' });
  t.equal(cmp('top', l, tie), null, 'c and d tie at the last place');
  const wrong = nv('top', [{ ip: 'a', hits: '9' }, { ip: 'd', hits: '5' }, { ip: 'b', hits: '4' }], { field: 'ip' });
  t.match(cmp('top', l, wrong), /ranked counts/);
  const swapped = nv('top', [{ ip: 'b', hits: '9' }, { ip: 'a', hits: '4' }, { ip: 'c', hits: '4' }], { field: 'ip' });
  t.match(cmp('top', l, swapped), /counts differ/);
});

t.test('values: within the tolerance', async (t) => {
  const l = nl('value', [{ _95: '0.100' }], { valueField: '_95' });
  t.equal(cmp('value', l, nv('value', [{ v: '0.103' }], {}), 0.05), null);
  t.match(cmp('value', l, nv('value', [{ v: '0.2' }], {}), 0.05), /50\.00% apart/);
  t.match(cmp('value', l, nv('value', [], {}), 0.05), /NaN/);
  t.equal(cmp('value', 0, 0, 0), null);
});

t.test('histogram: buckets by start, empty ones left out', async (t) => {
  const l = nl('histogram', [{ _bucket: 60000, _count: 3 }, { _bucket: 120000, _count: 0 }, { _bucket: 180000, _count: '1' }], {});
  const v = nv('histogram', [{ _bucket: 180000, c: '1' }, { _bucket: 60000, c: '3' }], {});
  t.equal(cmp('histogram', l, v), null);
  t.match(cmp('histogram', l, nv('histogram', [{ _bucket: 0, c: '3' }, { _bucket: 180000, c: '1' }], {})), /2 differ/);
});
