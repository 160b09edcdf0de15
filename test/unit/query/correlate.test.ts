/**
 * correlate(): the named-subquery grammar (`name: { ... } include: [...]`, `f <=> q.g`), its
 * errors with line and column, and its semantics over a small fixed dataset — links, within,
 * sequence with jitterTolerance and sequenceBy, root, maxPerRoot, includeMatchesOnceOnly,
 * includeConstraintValues, globalConstraints — with expected rows written from the documented
 * meaning, on one partition and three (partial states merged as across workers).
 */
import t from 'tap';
import { compileQuery } from '../../../src/query/compile.js';
import { parseQuery } from '../../../src/query/parser.js';
import { ctxOf, NOW, rowsOf, type Fields } from './driver.js';

const MIN = 60_000;
const T0 = NOW - 60 * MIN;

function e(minute: number, fields: Fields): Fields {
  return { '@timestamp': String(T0 + minute * MIN), '@rawstring': JSON.stringify(fields), ...fields };
}

const DATA: Fields[] = [
  e(0, { action: 'login', user: 'ann', src: 'h1' }),
  e(2, { action: 'exec', user: 'ann', host: 'h1', cmd: 'whoami' }),
  e(30, { action: 'exec', user: 'ann', host: 'h1', cmd: 'late' }),
  e(5, { action: 'login', user: 'bob', src: 'h2' }),
  e(4, { action: 'exec', user: 'bob', host: 'h2', cmd: 'early' }),
  e(6, { action: 'exec', user: 'bob', host: 'h3', cmd: 'otherhost' }),
  e(10, { action: 'login', user: 'cid', src: 'h4' }),
];

function failOf(q: string): Error {
  try {
    compileQuery(q, { ctx: ctxOf() });
  } catch (err) {
    return err as Error;
  }
  throw new Error(`compiled: ${q}`);
}

t.test('parse: named subqueries with include and links', async (t) => {
  const p = parseQuery('correlate(a: { x=1 } include: [u, v], b: { y=2 | u <=> a.u } include: w, within=5m)');
  const st = p.stages[0]!;
  t.equal(st.kind, 'expr');
  const call = st.kind === 'expr' && st.expr.k === 'call' ? st.expr.call : null;
  t.ok(call);
  t.same(call!.args.map((x) => [x.name, x.subquery !== undefined]), [['a', true], ['b', true], ['within', false]]);
  const inc = call!.args[0]!.subquery!.include!;
  t.equal(inc.k, 'array');
  const b = call!.args[1]!.value;
  t.equal(b.k, 'block');
  const link = b.k === 'block' ? b.pipeline.stages[1]! : null;
  t.match(link, { kind: 'link', field: 'u', query: 'a', other: 'u' });
  t.equal(call!.args[1]!.subquery!.include!.k, 'ident');
  // No include: is fine; a backquoted field after the dot too.
  const q = parseQuery('correlate(a: {x=1}, b: {y=2 | `my-f` <=> a.`other-f`})');
  const c2 = q.stages[0]!.kind === 'expr' && q.stages[0]!.expr.k === 'call' ? q.stages[0]!.expr.call : null;
  const b2 = c2!.args[1]!.value;
  t.match(b2.k === 'block' ? b2.pipeline.stages[1] : null, { kind: 'link', field: 'my-f', query: 'a', other: 'other-f' });
  t.equal(c2!.args[0]!.subquery!.include, null);
});

t.test('errors name the problem with line and column', async (t) => {
  t.match(failOf('x <=> a.y').message, /The link "<=>" can only be used inside a named subquery of correlate\(\).*line 1, column 1/s);
  t.match(failOf('foo x <=> a.y').message, /"<=>" is a step of its own.*line 1, column 7/s);
  t.match(failOf('correlate(a: { x=1 | u <=> nope })').message, /Expected a field of another subquery, written query.field, after "<=>".*line 1, column 28/s);
  t.match(failOf('correlate(a: { x=1 })').message, /at least two named subqueries/);
  t.match(failOf('correlate(a: { x=1 },\n  b: { y=1 | u <=> c.u })').message, /c is not a subquery of this correlate\(\); the subqueries are a, b.*line 2, column 14/s);
  t.match(failOf('correlate(a: { x=1 }, b: { y=1 })').message, /subquery b is not linked to a; add a step such as "\| field <=> a.field"/);
  t.match(failOf('correlate(a: { x=1 }, b: { y=1 | u <=> b.u })').message, /must name another subquery/);
  t.match(failOf('correlate(a: { x=1 }, a: { y=1 | u <=> a.u })').message, /name a is used twice/);
  t.match(failOf('correlate(a: { x=1 }, b: { y=1 | u <=> a.u }, root=c)').message, /root c is not one of the subqueries \(a, b\)/);
  t.match(failOf('correlate(a: { x=1 }, b: { y=1 | u <=> a.u }, iterationLimit=11)').message, /iterationLimit must be a whole number from 1 to 10/);
  t.match(failOf('correlate(a: { x=1 }, b: { y=1 | u <=> a.u }, within=2d)').message, /within \(2d\) is longer than the query's time range/);
  t.match(failOf('correlate(a: { x=1 }, b: { y=1 | u <=> a.u }, within=5m, jitterTolerance=10m)').message, /jitterTolerance must not be longer than within/);
  t.match(failOf('correlate(a: { x=1 }, b: { y=1 | u <=> a.u }, within=soon)').message, /within must be a relative time such as 5m/);
  t.match(failOf('correlate(a: { x=1 }, b: { y=1 | u <=> a.u }, aggregation=x)').message, /parameter aggregation is not supported in function correlate/);
  t.match(failOf('count() | correlate(a: { x=1 }, b: { y=1 | u <=> a.u })').message, /correlate\(\) cannot follow an aggregate function/);
  t.match(failOf('correlate(a: { count() }, b: { y=1 | u <=> a.u })').message, /aggregate function count cannot be used inside case or match branches|aggregate/);
  t.match(failOf('groupBy(x, function=correlate(a: { x=1 }, b: { y=1 | u <=> a.u }))').message, /correlate\(\) cannot be used inside other functions/);
  t.match(failOf('groupBy(a: { x=1 })').message, /function groupBy takes no named subqueries/);
});

const BASIC = 'correlate(login: { action=login } include: [user, src], exec: { action=exec | user <=> login.user | host <=> login.src } include: [cmd]';

t.test('links and within: one row per root event with query.field columns', async (t) => {
  const rows = rowsOf(`${BASIC}, within=10m)`, DATA);
  t.same(rows, [
    { '@timestamp': String(T0), 'login.@timestamp': String(T0), 'login.user': 'ann', 'login.src': 'h1', 'exec.@timestamp': String(T0 + 2 * MIN), 'exec.user': 'ann', 'exec.host': 'h1', 'exec.cmd': 'whoami' },
    { '@timestamp': String(T0 + 5 * MIN), 'login.@timestamp': String(T0 + 5 * MIN), 'login.user': 'bob', 'login.src': 'h2', 'exec.@timestamp': String(T0 + 4 * MIN), 'exec.user': 'bob', 'exec.host': 'h2', 'exec.cmd': 'early' },
  ].map(sortKeys));
});

function sortKeys(r: Fields): Fields {
  return r;
}

function pick(rows: Fields[], f: string): (string | undefined)[] {
  return rows.map((r) => r[f]);
}

t.test('sequence, jitterTolerance, maxPerRoot, includeMatchesOnceOnly, includeConstraintValues', async (t) => {
  // sequence=true: bob's exec at minute 4 precedes his login (minute 5): not a constellation.
  t.same(pick(rowsOf(`${BASIC}, within=10m, sequence=true)`, DATA), 'exec.cmd'), ['whoami']);
  // ...unless jitterTolerance lets it be up to 1 minute early.
  t.same(pick(rowsOf(`${BASIC}, within=10m, sequence=true, jitterTolerance=1m)`, DATA), 'exec.cmd'), ['whoami', 'early']);
  // Without within, ann's late exec also fits; maxPerRoot=1 keeps the first (oldest) one.
  t.same(pick(rowsOf(`${BASIC})`, DATA), 'exec.cmd'), ['whoami', 'early']);
  t.same(pick(rowsOf(`${BASIC}, maxPerRoot=2)`, DATA), 'exec.cmd'), ['whoami', 'late', 'early']);
  // includeConstraintValues=false: only include: fields and the timestamps.
  const r = rowsOf(`${BASIC}, within=10m, includeConstraintValues=false)`, DATA);
  t.same(Object.keys(r[0]!).sort(), ['@timestamp', 'exec.@timestamp', 'exec.cmd', 'login.@timestamp', 'login.src', 'login.user']);
  // Two logins of dan and one exec: with includeMatchesOnceOnly the exec serves only the first login.
  const two = [...DATA, e(20, { action: 'login', user: 'dan', src: 'h9' }), e(21, { action: 'login', user: 'dan', src: 'h9' }), e(22, { action: 'exec', user: 'dan', host: 'h9', cmd: 'once' })];
  t.same(pick(rowsOf(`${BASIC}, within=10m)`, two), 'login.@timestamp').slice(2), [String(T0 + 20 * MIN), String(T0 + 21 * MIN)]);
  t.same(pick(rowsOf(`${BASIC}, within=10m, includeMatchesOnceOnly=true)`, two), 'login.@timestamp').slice(2), [String(T0 + 20 * MIN)]);
});

t.test('root, globalConstraints, three subqueries, sequenceBy, no include', async (t) => {
  // root=exec: one constellation per exec event that has a login.
  t.same(pick(rowsOf(`${BASIC}, root=exec)`, DATA), 'exec.cmd'), ['whoami', 'early', 'late']);
  // globalConstraints=[user] links on user only (host ignored): bob's otherhost exec now fits too.
  const g = 'correlate(login: { action=login } include: [src], exec: { action=exec } include: [cmd], globalConstraints=[user], maxPerRoot=5)';
  const rows = rowsOf(g, DATA);
  t.same(pick(rows, 'exec.cmd'), ['whoami', 'late', 'early', 'otherhost']);
  t.same(pick(rows, 'exec.user'), ['ann', 'ann', 'bob', 'bob'], 'constraint values shown');
  // Three subqueries chained a -> b -> c.
  const chain = [e(1, { k: 'a', id: '1' }), e(2, { k: 'b', id: '1', nxt: '7' }), e(3, { k: 'c', ref: '7' }), e(4, { k: 'c', ref: '8' })];
  const q3 = 'correlate(a: { k=a }, b: { k=b | id <=> a.id }, c: { k=c | ref <=> b.nxt }, sequence=true)';
  const r3 = rowsOf(q3, chain);
  t.equal(r3.length, 1);
  t.equal(r3[0]!['c.ref'], '7');
  t.equal(r3[0]!['a.k'], 'a', 'without include: every field');
  // sequenceBy orders by a field instead of @timestamp.
  const sb = [e(5, { k: 'a', id: '1', n: '10' }), e(1, { k: 'b', id: '1', n: '20' }), e(2, { k: 'b', id: '1', n: '5' })];
  t.same(pick(rowsOf('correlate(a: { k=a }, b: { k=b | id <=> a.id }, sequence=true, sequenceBy=[n], maxPerRoot=5)', sb), 'b.n'), ['20']);
  t.same(pick(rowsOf('correlate(a: { k=a }, b: { k=b | id <=> a.id }, sequence=true, maxPerRoot=5)', sb), 'b.n'), []);
});

t.test('subquery steps may change the event; the rest of the query runs over the rows', async (t) => {
  const q = 'correlate(login: { action=login | who := upper(user) } include: [who], exec: { action=exec | user <=> login.user } include: [cmd], within=10m) | groupBy(login.who)';
  t.same(rowsOf(q, DATA), [{ 'login.who': 'ANN', _count: '1' }, { 'login.who': 'BOB', _count: '1' }]);
});

t.test('bounds: kept events (query.max_rows) and a clear error', async (t) => {
  const many = Array.from({ length: 50 }, (_, i) => e(i % 50, { action: i % 2 === 0 ? 'login' : 'exec', user: 'u', src: 'h', host: 'h' }));
  t.throws(() => rowsOf(`${BASIC})`, many, { limits: { maxGroups: 100, maxRows: 20 } }), /correlate: its subqueries matched more than 20 events to keep \(query.max_rows\); narrow the subqueries/);
});
