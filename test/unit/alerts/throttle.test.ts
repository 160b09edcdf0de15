import t from 'tap';
import { fieldValue, freshRows, heldOff, throttleKey as key } from '../../../src/alerts/throttle.js';
import { MAX_THROTTLE_VALUES, type AlertDefinition, type AlertRuntime } from '../../../src/global/index.js';

const alert = (o: Partial<AlertDefinition> = {}): AlertDefinition => ({
  id: 'a',
  repositoryId: 'r',
  name: 'n',
  description: '',
  queryString: '',
  queryStart: '1h',
  throttleTimeMillis: 1000,
  throttleField: '',
  silenced: false,
  actions: ['x'],
  labels: [],
  ownership: { kind: 'organization' },
  createdAt: 0,
  ...o,
});
const rt = (o: Partial<AlertRuntime> = {}): AlertRuntime => ({ lastTriggeredAt: null, throttled: new Map(), lastError: null, lastErrorAt: null, lastErrorFromActions: false, ...o });

t.test('heldOff: the whole alert, for throttleTimeMillis after its last trigger', async (t) => {
  t.equal(heldOff(alert(), undefined, 5000), false, 'no runtime state');
  t.equal(heldOff(alert(), rt(), 5000), false, 'never triggered');
  t.equal(heldOff(alert(), rt({ lastTriggeredAt: 4500 }), 5000), true);
  t.equal(heldOff(alert(), rt({ lastTriggeredAt: 4000 }), 4999), true);
  t.equal(heldOff(alert(), rt({ lastTriggeredAt: 4000 }), 5000), false, 'exactly at the end: free again');
  t.equal(heldOff(alert({ throttleTimeMillis: 0 }), rt({ lastTriggeredAt: 5000 }), 5000), false, 'no throttle');
  t.equal(heldOff(alert({ throttleField: 'host' }), rt({ lastTriggeredAt: 4900 }), 5000), false, 'with a field, the values decide');
});

t.test('freshRows: per value; missing field is the empty value', async (t) => {
  const rows = [{ host: 'a', n: '1' }, { host: 'b', n: '2' }, { n: '3' }, { host: 'a', n: '4' }, { host: '', n: '5' }];
  const all = freshRows(rows, 'host', undefined, 1000, 0);
  t.strictSame(all.rows, rows, 'nothing held: every row');
  t.strictSame(all.values, ['a', 'b', ''].map(key));
  const held = new Map([
    [key('a'), 900],
    [key(''), 100],
  ]);
  const some = freshRows(rows, 'host', held, 1000, 1500);
  t.strictSame(some.rows.map((r) => r.n), ['2', '3', '5'], 'a is held until 1900; the empty value was free at 1100');
  t.strictSame(some.values, ['b', ''].map(key));
  t.strictSame(freshRows(rows, 'host', held, 1000, 1900).values, ['a', 'b', ''].map(key), 'a is free at exactly 1900');
  t.strictSame(freshRows(rows, 'host', held, 0, 900).values, ['a', 'b', ''].map(key), 'throttle 0 holds nothing');
  t.equal(fieldValue({ x: 5 }, 'x'), key('5'));
  const long = 'v'.repeat(100_000);
  t.match(fieldValue({ x: long }, 'x'), /^[A-Za-z0-9_-]{22}$/, 'every value is remembered by a 22-character key');
  t.match(fieldValue({ x: '' }, 'x'), /^[A-Za-z0-9_-]{22}$/);
  t.equal(fieldValue({ x: long }, 'x'), fieldValue({ x: long }, 'x'));
  t.not(fieldValue({ x: long }, 'x'), fieldValue({ x: `${long}w` }, 'x'));
  t.not(fieldValue({ x: 'a' }, 'x'), fieldValue({ x: 'b' }, 'x'));
});

t.test('freshRows: at most MAX_THROTTLE_VALUES distinct values per trigger', async (t) => {
  const rows = Array.from({ length: MAX_THROTTLE_VALUES + 5 }, (_, i) => ({ v: String(i) }));
  const out = freshRows([...rows, { v: '0' }], 'v', undefined, 1000, 0);
  t.equal(out.values.length, MAX_THROTTLE_VALUES);
  t.equal(out.rows.length, MAX_THROTTLE_VALUES + 1, 'rows of the kept values, repeats included');
});
