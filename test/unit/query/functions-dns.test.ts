/**
 * reverseDns() and rdns() (query-functions.md §1, the product's reference pages) against a real
 * name server on loopback (a small UDP responder in this test answering PTR questions): the
 * documented output fields and defaults, only after an aggregate (rdns() alone is
 * tail(limit) | rdns()), the limit of distinct addresses, internal addresses not looked up, the
 * server= parameter under the alerts' outbound guard, a server that never answers (the rows stay
 * unannotated, with a warning), the node-wide rate, the cache, and the errors when reverse DNS is
 * disabled or not configured. The post-aggregate stages run as the executor runs them
 * (runRowsAsync).
 */
import t from 'tap';
import { compileQuery } from '../../../src/query/compile.js';
import { runRowsAsync } from '../../../src/query/pipeline.js';
import type { RdnsSettings } from '../../../src/query/rdns.js';
import { MapEvent, type Aggregator, type Ev } from '../../../src/query/runtime.js';
import { ctxOf, ev, type Fields } from './driver.js';
import { startPtrServer } from '../../helpers/ptr-server.js';

/** PTR answers by address; addresses not listed get NXDOMAIN; those in `silent` get no answer. */
const NAMES: Record<string, string> = {
  '8.8.8.8': 'dns.google',
  '1.1.1.1': 'one.one.one.one',
  '9.9.9.9': 'dns9.quad9.net',
  '4.4.4.4': 'four.example',
  '5.5.5.5': 'five.example',
  '6.6.6.6': 'six.example',
  '10.1.2.3': 'internal.example',
  '7.7.7.1': 'r1.example',
  '7.7.7.2': 'r2.example',
  '7.7.7.3': 'r3.example',
  '3.3.3.3': 'cached.example',
};
const dns = await startPtrServer(NAMES);
t.teardown(() => dns.close());
const PORT = dns.port;
const silent = dns.silent;
silent.add('2.2.2.2');

const base = (over: Partial<RdnsSettings> = {}): RdnsSettings => ({
  enabled: true,
  server: `127.0.0.1:${PORT}`,
  timeoutMs: 1500,
  concurrency: 4,
  perSecond: 10_000,
  maxLimit: 100,
  allowTargets: [],
  ...over,
});

async function run(q: string, events: readonly Fields[], rdns: RdnsSettings | null = base()): Promise<{ rows: Fields[]; warnings: string[] }> {
  const ctx = ctxOf();
  if (rdns !== null) ctx.rdns = rdns;
  const query = compileQuery(q, { ctx });
  const at = query.stages.findIndex((s) => s.kind === 'agg');
  const agg = (query.stages[at] as { agg: Aggregator<unknown> }).agg;
  const st = agg.init();
  for (const f of events) {
    let cur: Ev[] = [new MapEvent(f)];
    for (const s of query.stages.slice(0, at)) {
      const next: Ev[] = [];
      if (s.kind === 'map') for (const e of cur) s.run(e, (x) => next.push(x));
      cur = next;
    }
    for (const e of cur) agg.add(st, e);
  }
  const warnings: string[] = [];
  const rows = await runRowsAsync(query.stages.slice(at + 1), agg.finish(st), (w) => warnings.push(w));
  return { rows: rows.map((r) => Object.fromEntries(r.names().map((n) => [n, r.get(n)!]))), warnings };
}

const ipEvents = (ips: string[]): Fields[] => ips.map((ip, i) => ev(`ip=${ip} n=${i}`, { ip, n: String(i) }));

t.test('reverseDns after an aggregate: _hostname, distinct addresses asked once', async (t) => {
  dns.asked.length = 0;
  const r = await run('groupBy(ip, function=count()) | reverseDns(ip)', ipEvents(['8.8.8.8', '1.1.1.1', '8.8.8.8', '192.0.2.300', 'nonsense']));
  const byIp = Object.fromEntries(r.rows.map((x) => [x.ip, x._hostname]));
  t.strictSame(byIp, { '8.8.8.8': 'dns.google', '1.1.1.1': 'one.one.one.one', '192.0.2.300': undefined, nonsense: undefined });
  t.strictSame([...dns.asked].sort(), ['1.1.1.1', '8.8.8.8'], 'each distinct address asked once; non-addresses never');
  t.strictSame(r.warnings, []);
  const named = await run('tail(10) | reverseDns(field=ip, as=dnsName)', ipEvents(['9.9.9.9']));
  t.equal(named.rows[0]!.dnsName, 'dns9.quad9.net', 'as=');
});

t.test('an address without a name, one never answered, one internal: kept, not annotated', async (t) => {
  const r = await run('tail(10) | reverseDns(ip)', ipEvents(['4.4.4.4', '203.0.113.9', '2.2.2.2', '10.1.2.3']), base({ timeoutMs: 400 }));
  t.equal(r.rows.length, 4, 'every row kept');
  t.strictSame(r.rows.map((x) => x._hostname ?? null).sort(), ['four.example', null, null, null].sort());
  t.match(r.warnings.join('\n'), /1 lookups were not answered within 400 ms \(query\.rdns_timeout_ms\)/);
  t.match(r.warnings.join('\n'), /1 addresses in loopback, private or other internal ranges were not looked up \(alerts\.allow_targets/);
  t.notMatch(r.warnings.join('\n'), /failed at the name server/, 'NXDOMAIN is no failure');
  const allowed = await run('tail(10) | reverseDns(ip)', ipEvents(['10.1.2.3']), base({ allowTargets: ['10.0.0.0/8'] }));
  t.equal(allowed.rows[0]!._hostname, 'internal.example', 'alerts.allow_targets opens an internal range');
});

t.test('limit: distinct addresses past it are not looked up, with a warning', async (t) => {
  const r = await run('tail(10) | reverseDns(ip, limit=2)', ipEvents(['5.5.5.5', '6.6.6.6', '5.5.5.5', '7.7.7.7']));
  t.strictSame(r.rows.filter((x) => x._hostname === undefined).map((x) => x.ip), ['7.7.7.7'], 'the first two distinct addresses are asked (both 5.5.5.5 rows annotated)');
  t.match(r.warnings.join('\n'), /1 more distinct addresses than the limit of 2 were not looked up/);
});

t.test('the node-wide rate: requests past it within the time budget are not sent', async (t) => {
  dns.asked.length = 0;
  const r = await run('tail(10) | reverseDns(ip)', ipEvents(['7.7.7.1', '7.7.7.2', '7.7.7.3']), base({ perSecond: 1, concurrency: 1, timeoutMs: 300 }));
  t.equal(dns.asked.length, 1, 'one request in the first second');
  t.equal(r.rows.filter((x) => x._hostname !== undefined).length, 1);
  t.match(r.warnings.join('\n'), /2 lookups were not answered within 300 ms/);
});

t.test('answers are cached: a later run finds them with the server gone quiet', async (t) => {
  const first = await run('tail(10) | reverseDns(ip)', ipEvents(['3.3.3.3']));
  t.equal(first.rows[0]!._hostname, 'cached.example');
  silent.add('3.3.3.3');
  dns.asked.length = 0;
  const again = await run('tail(10) | reverseDns(ip)', ipEvents(['3.3.3.3']), base({ timeoutMs: 300 }));
  t.equal(again.rows[0]!._hostname, 'cached.example');
  t.strictSame(dns.asked, [], 'not asked again');
});

t.test('rdns(): output hostname; alone it is tail(limit) | rdns()', async (t) => {
  const events = ipEvents(['8.8.8.8', '1.1.1.1', '9.9.9.9']);
  const r = await run('rdns(ip)', events);
  t.strictSame(r.rows.map((x) => x.hostname).sort(), ['dns.google', 'dns9.quad9.net', 'one.one.one.one']);
  const two = await run('rdns(ip, as=dnsName, limit=2)', events);
  t.equal(two.rows.length, 2, 'limit= also bounds the events (the tail)');
  t.ok(two.rows.every((x) => x.dnsName !== undefined), 'as=');
});

t.test('errors: placement, disabled, not configured, server= under the guard, bad parameters', async (t) => {
  const err = async (q: string, rdns: RdnsSettings | null = base()): Promise<string> => {
    try {
      await run(q, [], rdns);
    } catch (e) {
      return (e as Error).message;
    }
    return 'ran';
  };
  t.match(await err('reverseDns(ip)'), /function reverseDns can only be used after an aggregate function/);
  t.match(await err('groupBy(x, function={ tail(3) | reverseDns(ip) })'), /can only be used after an aggregate function .*at the top level/);
  t.match(await err('tail(3) | reverseDns(ip)', base({ enabled: false })), /function reverseDns is disabled on this node \(query\.rdns_enabled = false\)/);
  t.match(await err('tail(3) | rdns(ip)', null), /function rdns is not available here/);
  t.match(await err('tail(3) | reverseDns(ip, server="127.0.0.1")'), /server of function reverseDns: 127\.0\.0\.1 is refused: .*alerts\.allow_targets/);
  t.match(await err('tail(3) | reverseDns(ip, server="dns.example")'), /must be an IP address, optionally with a port/);
  t.match(await err('tail(3) | reverseDns(ip, limit=101)'), /limit of function reverseDns must be a whole number from 1 to 100 \(query\.rdns_max_limit\)/);
  t.match(await err('tail(3)\n| reverseDns()'), /field/, 'the field is required');
  const viaServer = await run('tail(10) | reverseDns(ip, server="127.0.0.1:' + PORT + '")', ipEvents(['8.8.8.8']), base({ server: '', allowTargets: ['127.0.0.1/32'] }));
  t.equal(viaServer.rows[0]!._hostname, 'dns.google', 'server= allowed by alerts.allow_targets is asked');
});
