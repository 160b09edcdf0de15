/**
 * Property: sort() and table() (rows.ts keepFirst with sort values read once per row, table()
 * keeping only its listed fields) give on random data exactly what the straightforward way gives:
 * every row sorted by the documented order (numbers by value, then text, missing last in either
 * direction; hex by value; string by code units), ties broken by the output row's contents, the
 * first `limit` rows, table() then showing its listed fields. rowsOf() also checks that one and
 * three partitions (states structured-cloned and merged) agree.
 */
import t from 'tap';
import { rnd } from '../../helpers/random.js';
import { parseNumber } from '../../../src/query/values.js';
import { rowsOf, type Fields } from './driver.js';

const NUMS = ['5', '40', '-3', '3', '3.0', '0.5', '1e3', '12', 'x', 'abc', '', '007', '-0', '9007199254740993'];
const HEXES = ['ff', '0x10', '9', 'FF', '0Xa', 'zz', '10', '0x'];
const WORDS = ['a', 'b', 'B', 'ab', 'a b', '', 'ä', 'z'];

function events(r: () => number, n: number): Fields[] {
  const out: Fields[] = [];
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  for (let i = 0; i < n; i++) {
    const f: Fields = { '@timestamp': String(1_000 + Math.floor(r() * 8)), '@rawstring': `raw ${i} ${pick(WORDS)}`, '@id': `id${String(i).padStart(4, '0')}` };
    if (r() < 0.85) f['s'] = pick(WORDS);
    if (r() < 0.85) f['n'] = pick(NUMS);
    if (r() < 0.7) f['h'] = pick(HEXES);
    if (r() < 0.5) f['other'] = pick(WORDS);
    out.push(f);
  }
  return out;
}

type Type = 'number' | 'string' | 'hex' | 'any';

/** The order as documented, written out directly (the old comparator: values read per comparison). */
function rank(type: Type, v: string): number {
  if (type === 'string') return 0;
  if (type === 'hex') return /^(0x)?[0-9a-f]+$/i.test(v) ? 0 : 1;
  return num(v) === undefined ? 1 : 0;
}
const num = (v: string): number | undefined => parseNumber(v);
function cmp(type: Type, a: string, b: string): number {
  const text = a < b ? -1 : a > b ? 1 : 0;
  if (type === 'string') return text;
  if (type === 'hex') {
    if (rank('hex', a) !== 0 || rank('hex', b) !== 0) return text;
    const x = BigInt(/^0x/i.test(a) ? a : `0x${a}`);
    const y = BigInt(/^0x/i.test(b) ? b : `0x${b}`);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const x = num(a);
  const y = num(b);
  return x !== undefined && y !== undefined ? x - y : text;
}
function order(fields: string[], orders: string[], types: Type[]): (a: Fields, b: Fields) => number {
  return (a, b) => {
    for (let i = 0; i < fields.length; i++) {
      const x = a[fields[i]!];
      const y = b[fields[i]!];
      if (x === undefined || y === undefined) {
        if (x === y) continue;
        return x === undefined ? 1 : -1;
      }
      const rx = rank(types[i]!, x);
      const ry = rank(types[i]!, y);
      if (rx !== ry) return rx - ry;
      const c = cmp(types[i]!, x, y);
      if (c !== 0) return orders[i] === 'desc' ? -c : c;
    }
    return 0;
  };
}

function straightforward(evs: Fields[], by: string[], orders: string[], types: Type[], limit: number, show: ((f: Fields) => Fields) | null): Fields[] {
  const out = evs.map((f) => (show === null ? f : show(f)));
  const keyed = evs.map((f, i) => ({ f, o: out[i]!, j: JSON.stringify(Object.entries(out[i]!)) }));
  const primary = order(by, orders, types);
  keyed.sort((a, b) => primary(a.f, b.f) || (a.j < b.j ? -1 : a.j > b.j ? 1 : 0));
  return keyed.slice(0, limit).map((x) => x.o);
}

t.test('sort() and table() agree with the straightforward order on random data', async (t) => {
  const r = rnd(20261128);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  let cases = 0;
  for (let round = 0; round < 60; round++) {
    const evs = events(r, 20 + Math.floor(r() * 120));
    const nBy = 1 + Math.floor(r() * 2);
    const by = Array.from({ length: nBy }, () => pick(['n', 's', 'h', '@timestamp']));
    const types = by.map(() => pick<Type>(['number', 'string', 'hex', 'any']));
    const orders = by.map(() => pick(['asc', 'desc']));
    const limit = 1 + Math.floor(r() * 40);
    const args = `sortby=[${by.join(', ')}], order=[${orders.join(', ')}], type=[${types.join(', ')}], limit=${limit}`;
    const listed = pick([['s', 'n'], ['n'], ['h', 's', 'other'], ['s', 's']]);
    const show = (f: Fields): Fields => Object.fromEntries(listed.flatMap((n) => (f[n] === undefined ? [] : [[n, f[n]!]])));
    const q = `table([${listed.join(', ')}], ${args})`;
    t.strictSame(rowsOf(q, evs), straightforward(evs, by, orders, types, limit, show), q);
    // sort() has no `any` type; its rows are whole events.
    const sortTypes = types.map((x) => (x === 'any' ? 'number' : x));
    const sq = `sort([${by.join(', ')}], order=[${orders.join(', ')}], type=[${sortTypes.join(', ')}], limit=${limit})`;
    t.strictSame(rowsOf(sq, evs), straightforward(evs, by, orders, sortTypes, limit, null), sq);
    cases += 2;
  }
  t.equal(cases, 120);
});

t.test('table(): rows tied on the sort key are kept and ordered by what the table shows', async (t) => {
  const evs: Fields[] = [
    { '@timestamp': '5', '@rawstring': 'z', s: 'b', n: '1' },
    { '@timestamp': '5', '@rawstring': 'a', s: 'c', n: '2' },
    { '@timestamp': '5', '@rawstring': 'm', s: 'a', n: '3' },
    { '@timestamp': '4', '@rawstring': 'b', s: 'd', n: '4' },
  ];
  t.strictSame(rowsOf('table([s, n], limit=2)', evs), [
    { s: 'a', n: '3' },
    { s: 'b', n: '1' },
  ]);
  t.strictSame(rowsOf('table([s], sortby=n, order=asc, limit=3)', evs), [{ s: 'b' }, { s: 'c' }, { s: 'a' }]);
});
