import t from 'tap';
import { flattenInto } from '../../../src/ingest/flatten.js';
import { MAX_FIELD_NAME_CHARS } from '../../../src/ingest/limits.js';

t.test('nested objects join with ".", arrays index with [i]', async (t) => {
  const target: Record<string, string> = {};
  const r = flattenInto(
    target,
    { a: 'x', n: 1.5, b: true, f: false, z: null, o: { p: { q: 'deep' } }, arr: [1, { k: 'v' }, [2, 3]], e: {}, ea: [] },
    '',
    100,
  );
  t.same(target, {
    a: 'x',
    n: '1.5',
    b: 'true',
    f: 'false',
    'o.p.q': 'deep',
    'arr[0]': '1',
    'arr[1].k': 'v',
    'arr[2][0]': '2',
    'arr[2][1]': '3',
  });
  t.same(Object.keys(target), ['a', 'n', 'b', 'f', 'o.p.q', 'arr[0]', 'arr[1].k', 'arr[2][0]', 'arr[2][1]'], 'member order kept');
  t.same(r, { count: 9, truncated: false });
});

t.test('prefix, top-level arrays and primitives', async (t) => {
  const a: Record<string, string> = {};
  flattenInto(a, { x: 1 }, 'attrs', 10);
  t.same(a, { 'attrs.x': '1' });
  const b: Record<string, string> = {};
  t.same(flattenInto(b, 'hello', 'msg', 10), { count: 1, truncated: false });
  t.same(b, { msg: 'hello' });
  const c: Record<string, string> = {};
  t.same(flattenInto(c, 'nameless', '', 10), { count: 0, truncated: false }, 'a primitive without a name is skipped');
  t.same(c, {});
  const d: Record<string, string> = {};
  flattenInto(d, ['p', 'q'], '', 10);
  t.same(d, { '[0]': 'p', '[1]': 'q' });
  const e: Record<string, string> = {};
  t.same(flattenInto(e, null, 'x', 10), { count: 0, truncated: false });
});

t.test('keys are taken as-is', async (t) => {
  const target: Record<string, string> = {};
  flattenInto(target, { 'a.b': { 'c[0]': 'x' }, 'sp ace': 's', n: { '': 'e' } }, '', 10);
  t.same(target, { 'a.b.c[0]': 'x', 'sp ace': 's', 'n.': 'e' });
  const empty: Record<string, string> = {};
  t.same(flattenInto(empty, { '': 'nameless' }, '', 10), { count: 0, truncated: false }, 'an empty field name is skipped');
  t.same(empty, {});
});

t.test('a member named __proto__ is stored as a field, not as the prototype', async (t) => {
  const target: Record<string, string> = {};
  const value = JSON.parse('{"__proto__":"x","a":{"__proto__":{"polluted":"yes"}}}') as unknown;
  flattenInto(target, value, '', 10);
  t.equal(Object.getPrototypeOf(target), Object.prototype);
  t.equal(Object.hasOwn(target, '__proto__'), true);
  t.equal(target['__proto__'], 'x');
  t.equal(target['a.__proto__.polluted'], 'yes');
  t.equal(({} as Record<string, unknown>)['polluted'], undefined);
});

t.test('maxFields stops adding fields and reports truncation', async (t) => {
  const target: Record<string, string> = {};
  const r = flattenInto(target, { a: 1, b: { c: 2, d: 3 }, e: 4 }, '', 2);
  t.same(r, { count: 2, truncated: true });
  t.same(target, { a: '1', 'b.c': '2' });

  const exact: Record<string, string> = {};
  t.same(flattenInto(exact, { a: 1, b: 2 }, '', 2), { count: 2, truncated: false }, 'exactly at the limit is not truncated');

  const none: Record<string, string> = {};
  t.same(flattenInto(none, { a: 1 }, '', 0), { count: 0, truncated: true });
  t.same(none, {});

  const arr: Record<string, string> = {};
  t.same(flattenInto(arr, { xs: [1, 2, 3, 4] }, '', 3), { count: 3, truncated: true });
  t.same(arr, { 'xs[0]': '1', 'xs[1]': '2', 'xs[2]': '3' });
});

t.test('replacing a field already in the target does not count against the limit', async (t) => {
  const target: Record<string, string> = { a: 'old', keep: 'k' };
  const r = flattenInto(target, { a: 'new', b: 'x' }, '', 1);
  t.same(r, { count: 1, truncated: false });
  t.same(target, { a: 'new', keep: 'k', b: 'x' });
});

t.test('numbers print as JavaScript prints them', async (t) => {
  const target: Record<string, string> = {};
  flattenInto(target, JSON.parse('{"i":42,"f":1.0,"e":1e21,"neg":-0.5,"big":12345678901234567890}') as unknown, '', 10);
  t.same(target, { i: '42', f: '1', e: '1e+21', neg: '-0.5', big: '12345678901234567000' });
});

t.test('names longer than MAX_FIELD_NAME_CHARS are left out, without counting as fields', async (t) => {
  const long = 'k'.repeat(MAX_FIELD_NAME_CHARS);
  const target: Record<string, string> = {};
  const r = flattenInto(target, { [long]: 1, [`${long}x`]: 2, big: { [long]: 3, ok: 4 }, [`${long}y`]: { a: 5, b: 6 } }, '', 3);
  t.same(target, { [long]: '1', 'big.ok': '4' });
  t.same(r, { count: 2, truncated: false });
  // Thousands of long names under one long key: left out in time linear in the input.
  const wide: Record<string, number> = {};
  for (let i = 0; i < 1000; i++) wide[`f${i}`] = i;
  const out: Record<string, string> = {};
  flattenInto(out, { ['k'.repeat(100_000)]: wide, short: 'x' }, '', 2000);
  t.same(out, { short: 'x' });
});
