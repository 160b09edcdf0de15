/**
 * The semantics the faster versions of selectLast, selectFromMax/Min, ipLocation, wildcard and
 * selfJoinFilter keep (issue 21, the functions that were slower than their kind): ties decided by
 * content (the same answer over 1 and 3 partitions, which rowsOf checks), the numeric IPv4 search
 * against the general parser's answers, the remembered lookups, one-field wildcard, and where=
 * clauses that extract fields run on a copy while plain filters run on the event itself; and the
 * column paths offered to the scan (paths-property.test.ts checks their answers against per event).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { compileQuery } from '../../../src/query/compile.js';
import type { Aggregator, MapStage } from '../../../src/query/runtime.js';
import { rnd } from '../../helpers/random.js';
import { ctxOf, ev, rowsOf, type Fields } from './driver.js';

t.test('selectLast: the newest event with the field; a tie in the same millisecond goes to the larger value', async (t) => {
  const E: Fields[] = [ev('a', { u: '/b', k: 'x' }, 10), ev('b', { u: '/a', k: 'x' }, 10), ev('c', { u: '/c', k: 'x' }, 9), ev('d', { k: 'x' }, 11)];
  t.strictSame(rowsOf('selectLast(u)', E), [{ u: '/b' }], 'the newest event with u: two at 10, /b > /a; d has no u');
  t.strictSame(rowsOf('selectLast([u, k])', E), [{ u: '/b', k: 'x' }]);
  t.strictSame(rowsOf('selectLast(u)', [...E].reverse()), [{ u: '/b' }], 'whatever the order of arrival');
  t.strictSame(rowsOf('selectLast(u)', [ev('x', { u: '1' }), ev('y', { u: '2' }, Number.NaN)]), [{ u: '1' }], 'an event without a time is older than any');
});

t.test('selectFromMax / selectFromMin: ties broken by the included values, a missing one first', async (t) => {
  const E: Fields[] = [ev('a', { b: '5', u: '/z', v: '1' }), ev('b', { b: '5', u: '/a', v: '2' }), ev('c', { b: '5', v: '0' }), ev('d', { b: '3', u: '/q' })];
  t.strictSame(rowsOf('selectFromMax(b, include=[u, v])', E), [{ v: '0' }], 'three at 5: c has no u, so it comes first');
  t.strictSame(rowsOf('selectFromMax(b, include=[v, u])', E), [{ v: '0' }], 'by v first: 0 < 1 < 2');
  t.strictSame(rowsOf('selectFromMax(b, include=[u])', E.slice(0, 2)), [{ u: '/a' }], '/a < /z');
  t.strictSame(rowsOf('selectFromMin(b, include=[u])', E), [{ u: '/q' }]);
  t.strictSame(rowsOf('selectFromMax(b, include=[u])', [ev('x', { u: '/n' })]), [{}], 'no number: no row values');
});

t.test('ipLocation: the numeric IPv4 search and the general parser agree; repeated addresses', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qf-fast-'));
  const geoip = join(dir, 'geo.csv');
  writeFileSync(geoip, 'network,country,city,lat,lon\n10.0.0.0/8,NO,Oslo,1,2\n10.1.0.0/16,NO,Bergen,3,4\n255.255.255.255,XX,Edge,5,6\n0.0.0.0/32,ZZ,Zero,7,8\n::ffff:0:0/96,MM,Mapped,9,9\n');
  const ctx = ctxOf({ dataFiles: { geoip } });
  const cases: [string, string | undefined][] = [
    ['10.1.2.3', 'Bergen'],
    ['10.2.0.1', 'Oslo'],
    ['010.001.002.003', 'Bergen'],
    [' 10.1.2.3 ', 'Bergen'],
    ['255.255.255.255', 'Edge'],
    ['0.0.0.0', 'Zero'],
    ['256.1.1.1', undefined],
    ['10.1.2', undefined],
    ['10.1.2.3.4', undefined],
    ['10..2.3', undefined],
    ['1000.1.1.1', undefined],
    ['::ffff:10.1.2.3', 'Mapped'],
    ['not an ip', undefined],
  ];
  const events = [...cases, ...cases].map(([ip], i) => ev(`e${i}`, { ip }, 1000 + i));
  const rows = rowsOf('ipLocation(ip)', events, { ctx });
  const got = new Map<string, Set<string | undefined>>();
  for (const r of rows) (got.get(r.ip!) ?? got.set(r.ip!, new Set()).get(r.ip!)!).add(r['ip.city']);
  for (const [ip, city] of cases) t.strictSame([...got.get(ip)!], [city], `${JSON.stringify(ip)} -> ${city} (both times)`);
});

t.test('ipLocation: more distinct addresses than remembered answers, each asked twice', async (t) => {
  // The memo holds 16,384 answers in slots chosen by a hash of the address: 40,000 addresses share
  // slots, so answers are evicted and asked again; every one must still be the address's own.
  const dir = mkdtempSync(join(tmpdir(), 'qf-memo-'));
  const geoip = join(dir, 'geo.csv');
  writeFileSync(geoip, 'network,country,city,lat,lon\n10.0.0.0/9,NO,Low,1,2\n10.128.0.0/9,NO,High,3,4\n10.200.0.0/16,NO,Inner,5,6\n');
  const ctx = ctxOf({ dataFiles: { geoip } });
  const ips = Array.from({ length: 40_000 }, (_, i) => `${i % 7 === 0 ? 11 : 10}.${(i * 37) % 256}.${(i >> 8) % 256}.${i % 256}`);
  const expected = (ip: string): string | undefined => {
    const [a, b] = ip.split('.').map(Number) as [number, number];
    if (a !== 10) return undefined;
    return b === 200 ? 'Inner' : b >= 128 ? 'High' : 'Low';
  };
  const events = [...ips, ...ips.slice().reverse()].map((ip, i) => ev(`e${i}`, { ip }, 1000 + i));
  const rows = rowsOf('ipLocation(ip) | table([ip, ip.city], limit=max)', events, { ctx, partitions: 1 });
  t.equal(rows.length, events.length);
  const wrong = rows.filter((r) => r['ip.city'] !== expected(r.ip!));
  t.strictSame(wrong.slice(0, 5), [], 'no address got another address\'s answer');
});

t.test('cidr: the numeric IPv4 test agrees with a reference over random subnets and addresses', async (t) => {
  const r = rnd(2111);
  const byte = (): number => Math.floor(r() * 256);
  const quad = (): number[] => [byte() & 0x0f, byte(), byte(), byte()];
  // The reference: the first `bits` bits of the address and of the subnet's address are equal.
  const bitsOf = (q: number[]): string => q.map((b) => b.toString(2).padStart(8, '0')).join('');
  for (let round = 0; round < 40; round++) {
    const nets = Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({ q: quad(), bits: Math.floor(r() * 33) }));
    const q = `cidr(ip, subnet=[${nets.map((n) => `"${n.q.join('.')}/${n.bits}"`).join(', ')}])`;
    const ips = Array.from({ length: 30 }, () => quad());
    const events = ips.map((ip, i) => ev(`e${i}`, { ip: ip.join('.') }));
    const want = ips.filter((ip) => nets.some((n) => bitsOf(ip).slice(0, n.bits) === bitsOf(n.q).slice(0, n.bits))).map((ip) => ip.join('.'));
    t.strictSame(rowsOf(q, events).map((x) => x.ip).sort(), want.sort(), q);
  }
  t.strictSame(rowsOf('cidr(ip, subnet=["10.0.0.0/8"])', [ev('a', { ip: ' 10.1.2.3 ' }), ev('b', { ip: '010.001.002.003' }), ev('c', { ip: '::ffff:10.1.2.3' }), ev('d', { ip: '10.1.2' })]).map((x) => x['@rawstring']).sort(), ['a', 'b'], 'forms parseIp reads (spaces, leading zeros); a mapped IPv6 address is not IPv4');
});

t.test('wildcard on one field and on several', async (t) => {
  const E: Fields[] = [ev('1', { url: '/login', u: 'x' }), ev('2', { url: '/home', u: 'login' }), ev('3', { u: 'y' })];
  t.strictSame(rowsOf('wildcard("*login*", field=url)', E).map((r) => r['@rawstring']), ['1']);
  t.strictSame(rowsOf('wildcard("*LOGIN*", field=url, ignoreCase=true)', E).map((r) => r['@rawstring']), ['1']);
  t.strictSame(rowsOf('wildcard("*login*", field=[url, u])', E).map((r) => r['@rawstring']).sort(), ['1', '2']);
  t.strictSame(rowsOf('!wildcard("*login*", field=url)', E).map((r) => r['@rawstring']).sort(), ['2', '3']);
});

t.test('selfJoinFilter: clauses that extract fields run on a copy; satisfied clauses are not run again', async (t) => {
  const S: Fields[] = [
    ev('s1 login by ann', { session: 's1', action: 'login' }, 1),
    ev('s1 view', { session: 's1', action: 'view' }, 2),
    ev('s1 logout', { session: 's1', action: 'logout' }, 3),
    ev('s2 login by bob', { session: 's2', action: 'login' }, 4),
  ];
  const rows = rowsOf('selfJoinFilter(session, where=[{@rawstring=/by (?<who>\\w+)/}, {action=logout}])', S);
  t.strictSame(rows.map((r) => r['@rawstring']).sort(), ['s1 login by ann', 's1 logout', 's1 view']);
  t.ok(rows.every((r) => r.who === undefined), 'the field a clause extracts stays out of the kept events');
  const pre = rowsOf('selfJoinFilter(session, where=[{action=login}, {action=logout}, {action=view}], prefilter=true)', [...S, ev('s1 other', { session: 's1', action: 'other' }, 5)]);
  t.strictSame(pre.map((r) => r['@rawstring']).sort(), ['s1 login by ann', 's1 logout', 's1 view'], 'prefilter still tests every clause of every event');
  const not = rowsOf('selfJoinFilter(session, where=[{action=login}, {not action=login}])', S);
  t.strictSame(not.map((r) => r['@rawstring']).sort(), ['s1 login by ann', 's1 logout', 's1 view'], 'a negated clause');
});

t.test('wildcard() with fields and selectFromMax/Min offer the scan their column paths', async (t) => {
  const stripSpans = (x: unknown): unknown => (x === undefined ? undefined : JSON.parse(JSON.stringify(x, (k, v: unknown) => (k === 'span' ? undefined : v))));
  const filtersOf = (text: string): unknown => stripSpans((compileQuery(text, { ctx: ctxOf() }).stages[0] as MapStage).filters);
  t.strictSame(filtersOf('wildcard("*login*", field=url) | count()'), filtersOf('url="*login*" | count()'), 'one field: the field filter');
  t.strictSame(filtersOf('wildcard("a*", field=[u, v]) | count()'), filtersOf('u="a*" or v="a*" | count()'), 'several fields: an or of them');
  t.strictSame(filtersOf('url =~ wildcard("*x") | count()'), filtersOf('url="*x" | count()'), 'the =~ form');
  t.equal(filtersOf('wildcard("*login*", field=url, ignoreCase=true) | count()'), undefined, 'ignoreCase: none (the per-event test folds case)');
  t.equal(filtersOf('wildcard("*login*") | count()'), undefined, 'no field (free text over the event): none');
  t.equal(filtersOf('wildcard("*", field=url) | count()'), undefined, 'pattern "*": none');
  const aggOf = (text: string): Aggregator<unknown> => (compileQuery(text, { ctx: ctxOf() }).stages[0] as { agg: Aggregator<unknown> }).agg;
  t.type(aggOf('selectFromMax(b, include=[u, v])').columns?.addRows, 'function');
  t.type(aggOf('selectFromMin(b, include=[u])').columns?.addRows, 'function');
  t.equal(aggOf('selectFromMax(b, include=[@timestamp])').columns, undefined, 'a built-in field included: per event');
});
