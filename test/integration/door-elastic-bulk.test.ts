/**
 * The Elasticsearch bulk door against a real node: the probes shippers make, `_bulk` bodies of
 * every shape, per-item statuses (a bad item fails alone), request-level refusals in
 * Elasticsearch's error shape, bounds and gzip bombs; events read back through the query API.
 */
import t from 'tap';

// Real nodes and clients on a shared, loaded machine: more than the default per-file timeout.
t.setTimeout(300_000);
import { gzipSync } from 'node:zlib';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { countOf, createRepo, queryJson, sleep } from '../helpers/query.js';

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'worker_threads = 1', '[ingest]', 'max_events_per_request = 1000', '[http]', 'max_decompressed_bytes = 1048576', ''].join('\n');
const node = await startNode(t, { config: CONFIG });
const repo = await createRepo(node.url, node.adminToken, 'es');
const BASE = '/api/v1/ingest/elastic-bulk';
const basic = `Basic ${Buffer.from(`anyuser:${repo.ingestToken}`).toString('base64')}`;

const bulk = (body: string | Buffer, headers: Record<string, string> = {}, path = `${BASE}/_bulk`, method = 'POST') =>
  api(node.url, path, { method, body, headers: { authorization: basic, 'content-type': 'application/x-ndjson', ...headers } });

async function waitCount(filter: string, n: number, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await countOf(node.url, 'es', node.adminToken, filter, { start: '10y' });
    if (c === n || Date.now() > deadline) return c;
    await sleep(100);
  }
}
const rows = (filter: string) => queryJson(node.url, 'es', { queryString: filter, start: '10y' }, { token: node.adminToken });
const ndjson = (...lines: unknown[]) => `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;

t.test('probes: info, license, templates, cluster health; X-Elastic-Product on every answer', async (t) => {
  const info = await api(node.url, `${BASE}/`, { headers: { authorization: basic } });
  t.equal(info.status, 200);
  t.equal(info.headers.get('x-elastic-product'), 'Elasticsearch');
  t.match(info.json(), { version: { number: /^8\./ }, tagline: 'You Know, for Search' });
  const compat = await api(node.url, BASE, { headers: { authorization: basic, accept: 'application/vnd.elasticsearch+json; compatible-with=9' } });
  t.match(compat.json(), { version: { number: /^9\./ } }, 'answers the major version the client asks compatibility with');
  t.equal(compat.headers.get('content-type'), 'application/vnd.elasticsearch+json;compatible-with=9');
  const head = await api(node.url, BASE, { method: 'HEAD', headers: { authorization: basic } });
  t.equal(head.status, 200, 'HEAD /');
  const lic = await api(node.url, `${BASE}/_license`, { headers: { authorization: basic } });
  t.equal(lic.json().license.status, 'active');
  const tmpl = await api(node.url, `${BASE}/_index_template/filebeat-8`, { method: 'PUT', body: '{}', headers: { authorization: basic } });
  t.same(tmpl.json(), { acknowledged: true });
  // Logstash's ILM set-up: is ILM there, does the rollover alias exist, create its first index.
  t.equal((await api(node.url, `${BASE}/_ilm/policy`, { headers: { authorization: basic } })).status, 200, 'GET _ilm/policy');
  t.equal((await api(node.url, `${BASE}/_ilm/policy/logstash-policy`, { headers: { authorization: basic } })).status, 200);
  const alias = await api(node.url, `${BASE}/logstash`, { method: 'HEAD', headers: { authorization: basic } });
  t.equal(alias.status, 200, 'HEAD /<rollover alias>: it exists');
  t.equal(alias.headers.get('x-elastic-product'), 'Elasticsearch');
  const created = await api(node.url, `${BASE}/%3Clogstash-%7Bnow%2Fd%7D-000001%3E`, { method: 'PUT', body: '{"aliases":{"logstash":{"is_write_index":true}}}', headers: { authorization: basic, 'content-type': 'application/json' } });
  t.equal(created.status, 200, created.text);
  t.match(created.json(), { acknowledged: true, index: '<logstash-{now/d}-000001>' });
  t.equal((await api(node.url, `${BASE}/logstash`, { method: 'PUT', body: '{}' })).status, 401, 'creating an index needs the token too');
  const cat = await api(node.url, `${BASE}/_cat/health`, { headers: { authorization: basic } });
  t.match(cat.text, /green/);
  const noAuth = await api(node.url, BASE);
  t.equal(noAuth.status, 401);
  t.equal(noAuth.json().error.type, 'security_exception');
  t.equal(noAuth.headers.get('x-elastic-product'), 'Elasticsearch');
});

t.test('index and create actions; documents as fields; message as @rawstring; @timestamp', async (t) => {
  const body = ndjson(
    { index: { _index: 'logs', _id: 'a1' } },
    { '@timestamp': '2026-11-01T10:00:00.250Z', message: 'doc=1 user=alice', host: { name: 'beat-host' }, log: { file: { path: '/var/log/x.log' } }, level: 'info' },
    { create: {} },
    { '@timestamp': 1790000000000, event: 'doc2', nested: { a: [1, 2] } },
    { index: {} },
    { message: 'doc=3 status=200', type: 'kv', service: 'api', '@tags': ['service'] },
  );
  const r = await bulk(body);
  t.equal(r.status, 200, r.text);
  t.equal(r.headers.get('x-elastic-product'), 'Elasticsearch');
  const j = r.json();
  t.equal(j.errors, false);
  t.type(j.took, 'number');
  t.equal(j.items.length, 3);
  t.match(j.items[0], { index: { _index: 'logs', _id: 'a1', status: 201, result: 'created' } });
  t.match(j.items[1], { create: { status: 201 } });
  t.equal(await waitCount('doc=*', 2), 2);
  const [d1] = await rows('doc=1');
  t.equal(d1!['@rawstring'], 'doc=1 user=alice', 'message is @rawstring');
  t.equal(d1!.user, 'alice', 'message parsed by kv');
  t.equal(d1!.level, 'info', 'document members are fields');
  t.equal(d1!['@host'], 'beat-host');
  t.equal(d1!['@source'], '/var/log/x.log');
  t.equal(d1!['@timestamp'], Date.UTC(2026, 10, 1, 10, 0, 0, 250), '@timestamp of the document');
  const [d2] = await rows('event=doc2');
  t.equal(d2!['@timestamp'], 1790000000000);
  t.equal(d2!['nested.a[1]'], '2');
  t.same(JSON.parse(d2!['@rawstring']), { '@timestamp': 1790000000000, event: 'doc2', nested: { a: [1, 2] } }, 'no message: the document JSON is @rawstring');
  const [d3] = await rows('#service=api');
  t.equal(d3!.status, '200', '@tags made service a tag');
});

t.test('a bad item fails alone', async (t) => {
  const body = ndjson(
    { index: {} },
    { message: 'item=good1' },
    { index: {} },
    '{"message": not json}',
    { index: {} },
    '[1,2]',
    { index: {} },
    { message: 'item=badtime', '@timestamp': 'last tuesday' },
    { update: { _id: 'x' } },
    { doc: { a: 1 } },
    { delete: { _id: 'y' } },
    { create: {} },
    { message: 'item=good2' },
  );
  const r = await bulk(body);
  t.equal(r.status, 200, r.text);
  const j = r.json();
  t.equal(j.errors, true);
  t.same(
    j.items.map((i: Record<string, { status: number }>) => Object.values(i)[0]!.status),
    [201, 400, 400, 400, 400, 400, 201],
  );
  t.equal(j.items[1].index.error.type, 'document_parsing_exception');
  t.equal(j.items[4].update.error.type, 'action_request_validation_exception');
  t.equal(await waitCount('item=*', 2), 2, 'only the good items are stored');
});

t.test('gzip, PUT, an index in the path, the root /_bulk, Bearer', async (t) => {
  let r = await bulk(gzipSync(ndjson({ index: {} }, { message: 'way=gzip' })), { 'content-encoding': 'gzip' });
  t.equal(r.status, 200, r.text);
  r = await bulk(ndjson({ index: {} }, { message: 'way=put' }), {}, `${BASE}/_bulk`, 'PUT');
  t.equal(r.status, 200);
  r = await bulk(ndjson({ index: {} }, { message: 'way=path' }), {}, `${BASE}/myindex/_bulk`);
  t.equal(r.json().items[0].index._index, 'myindex');
  r = await bulk(ndjson({ index: {} }, { message: 'way=root' }), {}, '/_bulk');
  t.equal(r.status, 200);
  r = await bulk(ndjson({ index: {} }, { message: 'way=bearer' }), { authorization: `Bearer ${repo.ingestToken}` });
  t.equal(r.status, 200);
  r = await bulk(ndjson({ index: {} }, { message: 'way=compat' }), { 'content-type': 'application/vnd.elasticsearch+x-ndjson; compatible-with=8', accept: 'application/vnd.elasticsearch+json; compatible-with=8' });
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/vnd.elasticsearch+json;compatible-with=8');
  t.equal(await waitCount('way=*', 6), 6);
});

t.test('request-level refusals in Elasticsearch shape; nothing stored; node serves on', async (t) => {
  const cases: [string, string | Buffer, Record<string, string>, number, string][] = [
    ['bad token', ndjson({ index: {} }, { message: 'bad=1' }), { authorization: `Basic ${Buffer.from('u:00000000-0000-0000-0000-000000000000').toString('base64')}` }, 401, 'security_exception'],
    ['malformed action', ndjson({ index: {} }, { message: 'bad=2' }, 'nope', { message: 'bad=3' }), {}, 400, 'illegal_argument_exception'],
    ['unknown action', ndjson({ upsert: {} }, { message: 'bad=4' }), {}, 400, 'illegal_argument_exception'],
    ['no document', ndjson({ index: {} }), {}, 400, 'illegal_argument_exception'],
    ['empty', '\n\n', {}, 400, 'action_request_validation_exception'],
    ['too many items', ndjson(...Array.from({ length: 1001 }, () => [{ index: {} }, { message: 'bad=5' }]).flat()), {}, 400, 'illegal_argument_exception'],
    ['gzip bomb', gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x0a)), { 'content-encoding': 'gzip' }, 413, 'content_too_long_exception'],
  ];
  for (const [name, body, headers, status, type] of cases) {
    const r = await bulk(body, headers);
    t.equal(r.status, status, `${name} (${r.text.slice(0, 200)})`);
    t.equal(r.json().error?.type, type, name);
    t.equal(r.json().status, status, name);
  }
  const ok = await bulk(ndjson({ index: {} }, { message: 'after=1' }));
  t.equal(ok.status, 200);
  t.equal(await waitCount('after=1', 1), 1, 'the node serves on');
  t.equal(await waitCount('bad=*', 0, 2000), 0, 'nothing of a refused request was stored');
});
