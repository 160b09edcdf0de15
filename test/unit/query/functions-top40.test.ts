/**
 * The most-used functions added for query-functions.md §3 (round, selectLast, selectFromMax/Min,
 * sankey, wildcard, worldMap, ipLocation, ioc:lookup, join, selfJoinFilter), over a small fixed
 * dataset, with expected answers written from the product's documented semantics. rowsOf checks
 * that 1 and 3 partitions (separately merged partial states) agree.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as pathJoin } from 'node:path';
import t from 'tap';
import { compileQuery } from '../../../src/query/compile.js';
import { MapEvent } from '../../../src/query/runtime.js';
import { preambleOf, runSubqueries } from '../../../src/query/subqueries.js';
import { ctxOf, ev, rowsOf, run, runCompiled, type Fields } from './driver.js';

const W: Fields[] = [
  ev('GET /login 200 alice', { method: 'GET', url: '/login', status: '200', user: 'alice', bytes: '512', ip: '10.1.2.3', ms: '12.5' }, 1000),
  ev('POST /api 500 bob', { method: 'POST', url: '/api', status: '500', user: 'bob', bytes: '2048', ip: '192.168.1.7', ms: '250' }, 2000),
  ev('GET /index 404', { method: 'GET', url: '/index', status: '404', bytes: '128', ip: '10.9.9.9', ms: '3' }, 3000),
  ev('GET /logout 200 alice', { method: 'GET', url: '/logout', status: '200', user: 'alice', bytes: '1024', ip: '10.1.2.4', ms: '7' }, 4000),
];

const byTs = (rows: Fields[], f: string): (string | undefined)[] => [...rows].sort((a, b) => Number(a['@timestamp']) - Number(b['@timestamp'])).map((r) => r[f]);

t.test('round: half up by default, floor and ceil, into the input field unless as=', async (t) => {
  t.strictSame(byTs(rowsOf('round(ms)', W), 'ms'), ['13', '250', '3', '7']);
  t.strictSame(byTs(rowsOf('round(ms, how=floor)', W), 'ms'), ['12', '250', '3', '7']);
  t.strictSame(byTs(rowsOf('round(ms, how=ceil, as=r)', W), 'r'), ['13', '250', '3', '7']);
  t.strictSame(byTs(rowsOf('round(ms, as=r)', W), 'ms'), ['12.5', '250', '3', '7'], 'as= leaves the input');
  t.strictSame(byTs(rowsOf('round(user)', W), 'user'), ['alice', 'bob', undefined, 'alice'], 'not a number: unchanged');
  t.strictSame(byTs(rowsOf('x := round(ms)', W), 'x'), ['13', '250', '3', '7'], 'x := round(ms) is round(ms, as=x)');
  t.strictSame(byTs(rowsOf('x := 2 * round(ms)', W), 'x'), ['26', '500', '6', '14'], 'inside expressions');
  t.throws(() => run('round(ms, how=up)', W), { code: 'E_QUERY', message: /how of function round must be one of round, floor, ceil/ });
});

t.test('selectLast: each field from the most recent event that has it; merges across partitions', async (t) => {
  t.strictSame(rowsOf('selectLast([url, user])', W), [{ url: '/logout', user: 'alice' }]);
  t.strictSame(rowsOf('groupBy(method, function=selectLast(url))', W), [
    { method: 'GET', url: '/logout' },
    { method: 'POST', url: '/api' },
  ]);
  t.strictSame(rowsOf('selectLast(nosuch)', W), [{}], 'no event has it: no value');
});

t.test('selectFromMax / selectFromMin: the included fields of the extreme event', async (t) => {
  t.strictSame(rowsOf('selectFromMax(bytes, include=[user, url])', W), [{ user: 'bob', url: '/api' }]);
  t.strictSame(rowsOf('selectFromMin(bytes, include=[user, url])', W), [{ url: '/index' }], 'the event has no user');
  t.strictSame(rowsOf('groupBy(user, function=selectFromMax(bytes, include=[url]))', W), [
    { user: 'alice', url: '/logout' },
    { user: 'bob', url: '/api' },
  ]);
  t.throws(() => run('selectFromMax(bytes)', W), { message: /requires parameter include/ });
});

t.test('sankey: the weight of each source -> target edge (count by default)', async (t) => {
  t.strictSame(rowsOf('sankey(source=method, target=status)', W), [
    { method: 'GET', status: '200', _count: '2' },
    { method: 'GET', status: '404', _count: '1' },
    { method: 'POST', status: '500', _count: '1' },
  ]);
  t.strictSame(rowsOf('sankey(source=method, target=status, weight=sum(bytes))', W), [
    { method: 'GET', status: '200', _sum: '1536' },
    { method: 'GET', status: '404', _sum: '128' },
    { method: 'POST', status: '500', _sum: '2048' },
  ]);
});

t.test('wildcard: anchored on fields, unanchored on the event; * needs the field unless includeEverythingOnAsterisk', async (t) => {
  t.strictSame(byTs(rowsOf('wildcard("*log*", field=url)', W), 'url'), ['/login', '/logout']);
  t.strictSame(byTs(rowsOf('wildcard("log*", field=url)', W), 'url'), [], 'anchored');
  t.strictSame(byTs(rowsOf('url =~ wildcard("/LOG*", ignoreCase=true)', W), 'url'), ['/login', '/logout'], 'f =~ wildcard() sets field=');
  t.strictSame(byTs(rowsOf('wildcard("ALICE")', W), 'url'), [], 'no field: case-sensitive unless ignoreCase');
  t.strictSame(byTs(rowsOf('wildcard("alice")', W), 'url'), ['/login', '/logout'], 'no field: a substring of the event');
  t.strictSame(byTs(rowsOf('wildcard("192.168*")', W), 'url'), ['/api'], 'no field: fields are searched too');
  t.strictSame(rowsOf('wildcard("*", field=user) | count()', W), [{ _count: '3' }]);
  t.strictSame(rowsOf('wildcard("*", field=user, includeEverythingOnAsterisk=true) | count()', W), [{ _count: '4' }]);
  t.strictSame(byTs(rowsOf('!wildcard("*log*", field=url)', W), 'url'), ['/api', '/index'], 'negated');
  t.strictSame(byTs(rowsOf('wildcard("*in*", field=[url, user])', W), 'url'), ['/login', '/index'], 'any of the fields');
});

function dataFiles(): { geoip: string; asn: string; ioc: string } {
  const dir = mkdtempSync(pathJoin(tmpdir(), 'qf-top40-'));
  const geoip = pathJoin(dir, 'geo.csv');
  writeFileSync(geoip, 'network,country,city,lat,lon\n10.0.0.0/8,NO,Oslo,59.91,10.75\n10.1.0.0/16,NO,Bergen,60.39,5.32\n2001:db8::/32,SE,Stockholm,59.33,18.07\n');
  const asn = pathJoin(dir, 'asn.csv');
  writeFileSync(asn, 'network,asn,org\n192.168.0.0/16,64512,Private Net\n');
  const ioc = pathJoin(dir, 'ioc.csv');
  writeFileSync(ioc, 'indicator,type,malicious_confidence,labels,published_date,last_updated\n10.1.2.3,ip_address,high,botnet,1,2\n192.168.1.7,ip_address,low,scanner,3,4\nevil.example,domain,high,phish,5,6\n');
  return { geoip, asn, ioc };
}

t.test('ipLocation / asn: from the configured CSV, most specific network; a clear error without one', async (t) => {
  const ctx = ctxOf({ dataFiles: dataFiles() });
  const rows = rowsOf('ipLocation(ip)', W, { ctx });
  t.strictSame(byTs(rows, 'ip.city'), ['Bergen', undefined, 'Oslo', 'Bergen']);
  t.strictSame(byTs(rows, 'ip.country'), ['NO', undefined, 'NO', 'NO']);
  t.strictSame(byTs(rows, 'ip.lat'), ['60.39', undefined, '59.91', '60.39']);
  t.strictSame(byTs(rowsOf('ipLocation(ip, as=geo)', W, { ctx }), 'geo.lon'), ['5.32', undefined, '10.75', '5.32']);
  t.strictSame(rowsOf('ipLocation(field=a)', [ev('x', { a: '2001:db8::1' })], { ctx })[0]!['a.city'], 'Stockholm', 'IPv6');
  t.strictSame(byTs(rowsOf('asn(ip)', W, { ctx }), 'ip.org'), [undefined, 'Private Net', undefined, undefined]);
  t.strictSame(byTs(rowsOf('asn(ip)', W, { ctx }), 'ip.asn'), [undefined, '64512', undefined, undefined]);
  t.throws(() => run('ipLocation(ip)', W), { code: 'E_QUERY', message: /ipLocation needs query\.geoip_file/ });
  t.throws(() => run('asn(ip)', W), { code: 'E_QUERY', message: /asn needs query\.asn_file/ });
  t.throws(() => run('worldMap(ip=ip)', W), { code: 'E_QUERY', message: /worldMap needs query\.geoip_file/ });
  t.throws(() => run('ioc:lookup(ip, type=ip_address)', W), { code: 'E_QUERY', message: /ioc:lookup needs query\.ioc_file/ });
  t.throws(() => run('ipLocation(ip)', W, { ctx: ctxOf({ dataFiles: { geoip: '/nonexistent/geo.csv' } }) }), { message: /cannot read query\.geoip_file/ });
});

t.test('worldMap and geohash: geohash cells with a magnitude', async (t) => {
  // The geohash of (57.64911, 10.40744) is u4pruydqqvj (the format's standard example).
  const P = [ev('a', { lat: '57.64911', lon: '10.40744' }), ev('b', { lat: '57.649', lon: '10.407' }), ev('c', { lat: '0', lon: '0' }), ev('d', { lat: 'x' })];
  const h = rowsOf('geohash(lat=lat, lon=lon, precision=11)', P);
  const of = (raw: string): string | undefined => h.find((r) => r['@rawstring'] === raw)?.['_geohash'];
  t.equal(of('a'), 'u4pruydqqvj');
  t.equal(of('c'), 's0000000000', '(0, 0): the first cell east and north of the origin');
  t.equal(of('d'), undefined, 'not a number: no geohash');
  t.strictSame(rowsOf('worldMap(lat=lat, lon=lon)', P), [
    { _geohash: 's000', _count: '1' },
    { _geohash: 'u4pr', _count: '2' },
  ]);
  const ctx = ctxOf({ dataFiles: dataFiles() });
  t.strictSame(rowsOf('worldMap(ip=ip, precision=2, magnitude=sum(bytes))', W, { ctx }), [{ _geohash: 'u4', _sum: '1664' }]);
});

t.test('ioc:lookup: marks listed indicators at the confidence threshold; strict keeps only them', async (t) => {
  const ctx = ctxOf({ dataFiles: dataFiles() });
  const rows = rowsOf('ioc:lookup(ip, type=ip_address)', W, { ctx });
  t.strictSame(byTs(rows, 'ioc.detected'), ['true', undefined, undefined, undefined]);
  t.strictSame(byTs(rows, 'ioc[0].labels'), ['botnet', undefined, undefined, undefined]);
  t.strictSame(byTs(rowsOf('ioc:lookup(ip, type=ip_address, confidenceThreshold=low)', W, { ctx }), 'ioc.detected'), ['true', 'true', undefined, undefined]);
  t.strictSame(byTs(rowsOf('ioc:lookup(ip, type=ip_address, strict=true)', W, { ctx }), 'url'), ['/login']);
  t.strictSame(rowsOf('ioc:lookup(d, type=domain, include=[labels])', [ev('x', { d: 'EVIL.example' })], { ctx })[0]!['ioc[0].labels'], 'phish', 'domains match ignoring case');
});

/** Runs `q` as the query service does: its subqueries first (over the same events), then the query. */
async function withSubqueries(q: string, events: Fields[]): Promise<Fields[]> {
  const ctx = ctxOf();
  const pre = preambleOf(q, {});
  const tables = await runSubqueries(pre, ctx, q, {}, 200_000, async (text, c) => ({ rows: run(text, events, { ctx: c }).rows.map((r) => new MapEvent(r)) }));
  const one = runCompiled(compileQuery(q, { ctx, files: tables }), events, 1).rows;
  const three = runCompiled(compileQuery(q, { ctx, files: tables }), events, 3).rows;
  if (JSON.stringify(one) !== JSON.stringify(three)) throw new Error(`1 and 3 partitions differ for ${q}`);
  return three;
}

const USERS: Fields[] = [ev('u1', { '#type': 'users', name: 'alice', dept: 'ops' }, 500), ev('u2', { '#type': 'users', name: 'carol', dept: 'dev' }, 600)];

t.test('join: inner and left, key and include, max rows per key, limits', async (t) => {
  const all = [...W, ...USERS];
  const inner = await withSubqueries('#type=kv | join({#type=users}, field=user, key=name, include=[dept])', all);
  t.strictSame(byTs(inner, 'url'), ['/login', '/logout'], 'inner: only events with a matching row');
  t.strictSame(byTs(inner, 'dept'), ['ops', 'ops']);
  const left = await withSubqueries('#type=kv | join({#type=users}, field=user, key=name, include=[dept], mode=left)', all);
  t.strictSame(byTs(left, 'dept'), ['ops', undefined, undefined, 'ops'], 'left: every event, enriched where a row matches');
  const none = await withSubqueries('#type=kv | join({#type=nosuch}, field=user, key=name, include=[dept])', all);
  t.strictSame(none, [], 'an empty subquery: inner keeps nothing');
  const sameKey = await withSubqueries('#type=kv | join({#type=kv user=bob | rename(url, as=bobsurl)}, field=user, include=[bobsurl])', all);
  t.strictSame(byTs(sameKey, 'bobsurl'), ['/api'], 'key defaults to field');
  const agg = await withSubqueries('#type=kv | join({#type=kv | groupBy(user)}, field=user, include=[_count]) | groupBy([user, _count], function=[])', all);
  t.strictSame(agg, [{ user: 'alice', _count: '2' }, { user: 'bob', _count: '1' }], 'an aggregate subquery');
  await t.rejects(withSubqueries('#type=kv | join({#type=kv}, field=user, limit=2)', all), { message: /join: the subquery gave more than 2 rows/ });
  t.throws(() => preambleOf('join({x}, field=a, limit=200001)', {}), { message: /limit must be a whole number from 1 to 200000/ });
  t.throws(() => preambleOf('join({x}, field=a, repo=other)', {}), { message: /repo= \(another repository\) is not supported/ });
  t.throws(() => compileQuery('join({x}, field=a)', { ctx: ctxOf() }), { message: /the join subquery was not run/ });
});

t.test('defineTable + match(table=) / !match / readFile; preamble and combination rules', async (t) => {
  const all = [...W, ...USERS];
  const q = 'defineTable(name="ops", query={#type=users dept=ops}, include=[name, dept]) | #type=kv | match(table="ops", field=user, column=name)';
  t.strictSame(byTs(await withSubqueries(q, all), 'dept'), ['ops', 'ops']);
  const anti = 'defineTable(name="ops", query={#type=users dept=ops}, include=[name]) | #type=kv | !match(table="ops", field=user, column=name)';
  t.strictSame(byTs(await withSubqueries(anti, all), 'url'), ['/api', '/index'], 'anti-join');
  const listed = 'defineTable(name="t", query={#type=users}, include=*) | readFile("t") | sort(name, order=asc)';
  t.strictSame((await withSubqueries(listed, all)).map((r) => r['name']), ['alice', 'carol']);
  t.throws(() => compileQuery('count() | defineTable(name="t", query={x}, include=[a])', { ctx: ctxOf() }), { message: /must be in the query's preamble/ });
  t.throws(() => compileQuery('x=1 | setTimeInterval(start=1d)', { ctx: ctxOf() }), { message: /must be in the query's preamble/ });
  t.throws(() => preambleOf('defineTable(name="t", query={x}, include=[a]) | join({y}, field=a)', {}), { message: /cannot be combined with join/ });
  t.throws(() => preambleOf('defineTable(name="t", query={x}) | count()', {}), { message: /requires parameter include/ });
});

t.test('selfJoinFilter / selfJoin: keys with an event for every where clause', async (t) => {
  const S: Fields[] = [
    ev('s1 login', { session: 's1', action: 'login', user: 'a' }, 1),
    ev('s1 view', { session: 's1', action: 'view', user: 'a' }, 2),
    ev('s1 logout', { session: 's1', action: 'logout', user: 'a' }, 3),
    ev('s2 login', { session: 's2', action: 'login', user: 'b' }, 4),
    ev('s2 view', { session: 's2', action: 'view', user: 'b' }, 5),
    ev('s3 logout', { session: 's3', action: 'logout', user: 'c' }, 6),
  ];
  const raws = (rows: Fields[]): string[] => rows.map((r) => r['@rawstring']!).sort();
  t.strictSame(raws(rowsOf('selfJoinFilter(session, where=[{action=login}, {action=logout}])', S)), ['s1 login', 's1 logout', 's1 view']);
  t.strictSame(raws(rowsOf('selfJoinFilter(session, where=[{action=login}, {action=logout}], prefilter=true)', S)), ['s1 login', 's1 logout'], 'prefilter: only events matching a clause');
  t.strictSame(raws(rowsOf('selfJoinFilter(session, where=[{action=login}])', S)), ['s1 login', 's1 logout', 's1 view', 's2 login', 's2 view']);
  t.strictSame(rowsOf('selfJoinFilter(session, where=[{action=login}, {action=logout}]) | groupBy(user)', S), [{ user: 'a', _count: '3' }]);
  t.strictSame(rowsOf('selfJoin(session, where=[{action=login}, {action=view}], collect=[action])', S), [
    { session: 's1', action: 'login\nlogout\nview' },
    { session: 's2', action: 'login\nview' },
  ]);
  t.throws(() => run('selfJoinFilter(session, where=[{action=login}], limit=1)', S), { message: /selfJoinFilter: more than 1 distinct keys/ });
  t.throws(() => run('selfJoinFilter(session, where=[{action=login}])', S, { limits: { maxGroups: 100, maxRows: 2 } }), { message: /more than 2 events to keep \(query\.max_rows\)/ });
});
