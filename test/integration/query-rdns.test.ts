/**
 * reverseDns() on a real node (query-functions.md §1): the node's configured name server
 * (query.rdns_server, here a test name server on loopback) is asked after the aggregate, on the
 * coordinator, through /query and query jobs; query.rdns_enabled = false makes it a 400 naming the
 * setting, and `config check` rejects a bad rdns_server.
 */
import t from 'tap';
import { runCli, startNode, tempDir } from '../helpers/node-process.js';
import { createRepo, ingestStructured, postQuery, queryJson, runJob, waitForCount } from '../helpers/query.js';
import { startPtrServer } from '../helpers/ptr-server.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

t.setTimeout(300_000);

const dns = await startPtrServer({ '8.8.8.8': 'dns.google', '1.1.1.1': 'one.one.one.one' });
t.teardown(() => dns.close());
const config = (enabled: boolean): string =>
  ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'worker_threads = 1', '[query]', `rdns_enabled = ${enabled}`, `rdns_server = "127.0.0.1:${dns.port}"`, 'rdns_timeout_ms = 3000', ''].join('\n');

const node = await startNode(t, { config: config(true) });
const token = node.adminToken;
const repo = await createRepo(node.url, token, 'net');
const now = Date.now();
const ips = ['8.8.8.8', '1.1.1.1', '8.8.8.8', '192.0.2.1', '10.0.0.1'];
await ingestStructured(node.url, repo.ingestToken, ips.map((ip, i) => ({ timestamp: now - 60_000 - i, rawstring: `conn from ${ip}`, attributes: { ip }, tags: { host: 'fw' } })));
t.equal(await waitForCount(node.url, 'net', token, ips.length, 30_000), ips.length);

t.test('/query and query jobs annotate the rows after the aggregate', async (t) => {
  const rows = await queryJson(node.url, 'net', { queryString: 'groupBy(ip, function=count()) | reverseDns(ip)', start: '1d' }, { token });
  const byIp = Object.fromEntries(rows.map((r) => [r.ip, r._hostname ?? null]));
  t.strictSame(byIp, { '8.8.8.8': 'dns.google', '1.1.1.1': 'one.one.one.one', '192.0.2.1': null, '10.0.0.1': null });
  const res = await postQuery(node.url, 'net', { queryString: 'groupBy(ip) | reverseDns(ip)', start: '1d' }, { token, format: 'json' });
  t.match(res.headers.get('warning'), /addresses in loopback, private or other internal ranges were not looked up/, 'the warning for the internal addresses (192.0.2.1 and 10.0.0.1)');
  t.notOk(dns.asked.includes('10.0.0.1'), 'an internal address is never asked');
  const job = await runJob(node.url, 'net', token, { queryString: 'rdns(ip, as=dnsName)', start: '1d' });
  const names = job.final.events.map((e: Record<string, string>) => e.dnsName ?? null).sort();
  t.strictSame(names, [null, null, 'dns.google', 'dns.google', 'one.one.one.one'].sort(), 'rdns() alone: tail() then the lookups, in a query job');
});

t.test('errors a client sees', async (t) => {
  const before = await postQuery(node.url, 'net', { queryString: 'reverseDns(ip)', start: '1d' }, { token, format: 'json' });
  t.equal(before.status, 400);
  t.match(before.text, /function reverseDns can only be used after an aggregate function/);
  t.match(before.text, /at line 1, column 1/);
  const refused = await postQuery(node.url, 'net', { queryString: 'tail(5) | reverseDns(ip, server="127.0.0.1")', start: '1d' }, { token, format: 'json' });
  t.equal(refused.status, 400);
  t.match(refused.text, /alerts\.allow_targets/);

  const off = await startNode(t, { config: config(false) });
  const offRepo = await createRepo(off.url, off.adminToken, 'net2');
  const d = await postQuery(off.url, offRepo.name, { queryString: 'tail(5) | reverseDns(ip)' }, { token: off.adminToken, format: 'json' });
  t.equal(d.status, 400);
  t.match(d.text, /function reverseDns is disabled on this node \(query\.rdns_enabled = false\)/);
});

t.test('config check names a bad rdns_server', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'bad.toml');
  await writeFile(file, '[query]\nrdns_server = "dns.example.com"\nrdns_timeout_ms = 0\n');
  const r = await runCli(['config', 'check', '--config', file]);
  t.not(r.code, 0);
  t.match(r.stdout + r.stderr, /query\.rdns_server/);
  t.match(r.stdout + r.stderr, /query\.rdns_timeout_ms/);
});
