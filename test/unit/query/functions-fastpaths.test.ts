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
import { BlockView, ColumnEvent } from '../../../src/query/block-view.js';
import { compileQuery } from '../../../src/query/compile.js';
import { chainStages } from '../../../src/query/pipeline.js';
import { entriesOf, MapEvent, type Aggregator, type Ev, type MapStage } from '../../../src/query/runtime.js';
import { appendEvent, assembleBlock, assembleBlockV4, assembleBlockV5, emptyColumns, encodeBlockContent, encodedBlockAt, readBlockMeta } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
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

/** A query context whose query.geoip_file holds `networks` (lines of network,country,city,lat,lon) under the header. */
function geoContext(networks: string): ReturnType<typeof ctxOf> {
  const geoip = join(mkdtempSync(join(tmpdir(), 'qf-geo-')), 'geo.csv');
  writeFileSync(geoip, `network,country,city,lat,lon\n${networks}`);
  return ctxOf({ dataFiles: { geoip } });
}

t.test('ipLocation: the numeric IPv4 search and the general parser agree; repeated addresses', async (t) => {
  const ctx = geoContext('10.0.0.0/8,NO,Oslo,1,2\n10.1.0.0/16,NO,Bergen,3,4\n255.255.255.255,XX,Edge,5,6\n0.0.0.0/32,ZZ,Zero,7,8\n::ffff:0:0/96,MM,Mapped,9,9\n');
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

t.test('ipLocation: the innermost network, however networks nest and start together', async (t) => {
  // Networks starting at the same address (the search once met the wider first), and an address
  // in a /8 behind more than 64 networks inside it (the search once gave up after 64).
  const inner = Array.from({ length: 100 }, (_, i) => `10.${i}.0.0/16,X,In${i},0,0`);
  const ctx = geoContext(`10.0.0.0/8,NO,Outer,1,1\n10.0.0.0/24,NO,Inner,1,1\n${inner.join('\n')}\n2001:db8::/32,SE,Outer6,1,1\n2001:db8::/48,SE,Inner6,1,1\n`);
  const cases: [string, string | undefined][] = [
    ['10.0.0.5', 'Inner'],
    ['10.0.1.5', 'In0'],
    ['10.5.0.1', 'In5'],
    ['10.150.0.1', 'Outer'],
    ['11.0.0.1', undefined],
    ['2001:db8::1', 'Inner6'],
    ['2001:db8:1::1', 'Outer6'],
  ];
  const rows = rowsOf('ipLocation(ip)', cases.map(([ip], i) => ev(`e${i}`, { ip }, 1000 + i)), { ctx });
  for (const [ip, city] of cases) t.strictSame(rows.find((r) => r.ip === ip)?.['ip.city'], city, `${ip} -> ${city}`);
});

t.test('ipLocation: random nested networks give the longest prefix holding the address (the later row of two equal)', async (t) => {
  const r = rnd(21);
  for (let round = 0; round < 20; round++) {
    // Networks under a few roots, so that they nest, start together and repeat.
    const nets = Array.from({ length: 1 + Math.floor(r() * 150) }, () => {
      const bits = [8, 12, 16, 20, 24, 28, 32][Math.floor(r() * 7)]!;
      const addr = ((10 + Math.floor(r() * 2)) * 2 ** 24 + Math.floor(r() * 4) * 2 ** 16 + Math.floor(r() * 4) * 2 ** 8 + Math.floor(r() * 4)) >>> 0;
      const first = bits === 0 ? 0 : Math.floor(addr / 2 ** (32 - bits)) * 2 ** (32 - bits);
      return { first, last: first + 2 ** (32 - bits) - 1, bits };
    });
    const dotted = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
    const ctx = geoContext(`${nets.map((n, i) => `${dotted(n.first)}/${n.bits},C,R${i},0,0`).join('\n')}\n`);
    const ips = Array.from({ length: 200 }, () => dotted(((10 + Math.floor(r() * 2)) * 2 ** 24 + Math.floor(r() * 4) * 2 ** 16 + Math.floor(r() * 4) * 2 ** 8 + Math.floor(r() * 4)) >>> 0));
    const expected = (ip: string): string | undefined => {
      const n = ip.split('.').reduce((v, p) => v * 256 + Number(p), 0);
      let best = -1;
      nets.forEach((x, i) => {
        if (x.first <= n && n <= x.last && (best < 0 || x.bits >= nets[best]!.bits)) best = i;
      });
      return best < 0 ? undefined : `R${best}`;
    };
    const rows = rowsOf('ipLocation(ip) | table([ip, ip.city], limit=max)', ips.map((ip, i) => ev(`e${i}`, { ip }, 1000 + i)), { ctx, partitions: 1 });
    const wrong = rows.filter((x) => x['ip.city'] !== expected(x.ip!)).map((x) => [x.ip, x['ip.city'], expected(x.ip!)]);
    t.strictSame(wrong.slice(0, 3), [], `round ${round}: ${nets.length} networks`);
  }
});

t.test('ipLocation: more distinct addresses than remembered answers, each asked twice', async (t) => {
  // The memo holds 16,384 answers in slots chosen by a hash of the address: 40,000 addresses share
  // slots, so answers are evicted and asked again; every one must still be the address's own.
  const ctx = geoContext('10.0.0.0/9,NO,Low,1,2\n10.128.0.0/9,NO,High,3,4\n10.200.0.0/16,NO,Inner,5,6\n');
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

/**
 * A block (segment format 4, 5 or 6) of 80 rows with an address field `ip` and a field `k`: every
 * `ip` a plain dotted quad ('typed': the column is stored IPv4-typed), or some not one or absent
 * ('text'); with the same rows as field maps.
 */
function addressBlock(r: () => number, format: 4 | 5 | 6, kind: 'typed' | 'text'): { view: BlockView; rows: Record<string, string>[] } {
  const dotted = (): string => `${r() < 0.8 ? 10 : 11}.${Math.floor(r() * 4)}.${Math.floor(r() * 4)}.${Math.floor(r() * 4)}`;
  const odd = ['010.1.2.3', ' 10.1.2.3', 'not an ip', '::ffff:10.1.2.3', '10.1.2'];
  const c = emptyColumns();
  const rows: Record<string, string>[] = [];
  for (let i = 0; i < 80; i++) {
    const f: Record<string, string> = { k: r() < 0.2 ? dotted() : String(i % 3) };
    if (kind === 'typed' || r() < 0.7) f['ip'] = dotted();
    else if (r() < 0.8) f['ip'] = odd[Math.floor(r() * odd.length)]!;
    rows.push(f);
    appendEvent(c, 1000 + i, 'Z', `e${i}`, f, 5, i, 0);
  }
  const content = encodeBlockContent(c);
  const bytes = format === 6 ? assembleBlock(content, lz4Codec) : format === 5 ? assembleBlockV5(content, lz4Codec) : assembleBlockV4(content, lz4Codec);
  return { view: BlockView.fromEncoded(encodedBlockAt(bytes, 0, readBlockMeta(bytes, 0)!, lz4Codec), { repoName: 'r', partition: 0, tags: {} }), rows };
}

/** The fields whose names `keep` accepts, per event out of the query's stages: over the block's rows (ColumnEvents) and over MapEvents of the same fields. */
function bothPaths(text: string, ctx: ReturnType<typeof ctxOf>, block: { view: BlockView; rows: Record<string, string>[] }, keep: RegExp): [string[], string[]] {
  const maps = compileQuery(text, { ctx }).stages.filter((s) => s.kind !== 'agg') as MapStage[];
  const outputs = (evs: Ev[]): string[] => {
    const got: string[] = [];
    const feed = chainStages(maps, (e) => got.push(JSON.stringify(entriesOf(e).filter(([n]) => keep.test(n)))));
    for (const e of evs) feed(e);
    return got;
  };
  return [outputs(Array.from({ length: block.view.n }, (_, i) => new ColumnEvent(block.view, i))), outputs(block.rows.map((f) => new MapEvent(Object.entries(f))))];
}

t.test('ipLocation: an IPv4-typed stored column read as numbers gives what its text gives', async (t) => {
  const r = rnd(2111);
  const ctx = geoContext('10.0.0.0/8,NO,Oslo,1,2\n10.1.0.0/16,NO,Bergen,3,4\n10.1.2.0/24,NO,Inner,5,6\n10.3.3.3/32,NO,One,7,8\n::ffff:0:0/96,MM,Mapped,9,9\n');
  for (const format of [4, 5, 6] as const) {
    for (const kind of ['typed', 'text'] as const) {
      const block = addressBlock(r, format, kind);
      t.equal(block.view.encoding('ip') === '4', kind === 'typed', `format ${format}, ${kind}: the column is ${kind === 'typed' ? '' : 'not '}IPv4-typed`);
      for (const text of ['ipLocation(ip)', 'ipLocation(ip, as=g)', 'x := 1 | ipLocation(ip)', 'ipLocation(ip) | ipLocation(ip, as=h)']) {
        const [fromColumns, fromMaps] = bothPaths(text, ctx, block, /^(ip|g|h)\.|^x$/);
        t.strictSame(fromColumns, fromMaps, `format ${format}, ${kind}: ${text}`);
        if (kind === 'typed' && text === 'ipLocation(ip)') t.ok(fromColumns.some((x) => x.includes('Inner')) && fromColumns.some((x) => x === '[]'), 'hits and misses both seen');
      }
    }
  }
});

t.test('ioc:lookup: IP addresses of an IPv4-typed stored column looked up as numbers give what their text gives', async (t) => {
  const r = rnd(2112);
  const dir = mkdtempSync(join(tmpdir(), 'qf-ioc-'));
  const ioc = join(dir, 'ioc.csv');
  // Plain dotted quads, one written with leading zeros (it matches that text only), one twice (the later row wins).
  const lines = ['10.1.2.3,ip_address,high,a', '10.0.0.1,ip_address,low,b', '010.1.2.1,ip_address,high,c', '11.2.2.2,ip_address,medium,d', '11.2.2.2,ip_address,high,e', '10.1.2,ip_address,high,f', '10.3.3.3,domain,high,g'];
  writeFileSync(ioc, `indicator,type,malicious_confidence,labels\n${lines.join('\n')}\n`);
  const ctx = ctxOf({ dataFiles: { ioc } });
  let hits = 0;
  for (const format of [4, 5, 6] as const) {
    for (const kind of ['typed', 'text'] as const) {
      const block = addressBlock(r, format, kind);
      for (const text of ['ioc:lookup(ip, type=ip_address, confidenceThreshold=low)', 'ioc:lookup([ip, k], type=ip_address, confidenceThreshold=medium)', 'x := 1 | ioc:lookup(ip, type=ip_address, strict=true)', 'ioc:lookup(ip, type=domain)']) {
        const [fromColumns, fromMaps] = bothPaths(text, ctx, block, /^ioc|^x$/);
        t.strictSame(fromColumns, fromMaps, `format ${format}, ${kind}: ${text}`);
        hits += fromColumns.filter((x) => x.includes('ioc.detected')).length;
      }
    }
  }
  t.ok(hits > 20, `${hits} events found in the IOC file`);
});
