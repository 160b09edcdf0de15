/**
 * The Splunk HEC door against a real node: every path and body shape, read back through the query
 * API; HEC's answers for bad tokens, malformed bodies, bounds and gzip bombs, after which the node
 * still serves; indexer acknowledgement ids and the ack endpoint; the health probe.
 */
import t from 'tap';

// Real nodes and clients on a shared, loaded machine: more than the default per-file timeout.
t.setTimeout(300_000);
import { gzipSync } from 'node:zlib';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { countOf, createRepo, mustGql, queryJson, sleep } from '../helpers/query.js';

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'worker_threads = 1', '[ingest]', 'max_events_per_request = 1000', '[http]', 'max_decompressed_bytes = 1048576', ''].join('\n');
const node = await startNode(t, { config: CONFIG });
const repo = await createRepo(node.url, node.adminToken, 'hec');
const token = repo.ingestToken;

const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
  api(node.url, path, { method: 'POST', body, headers: { authorization: `Splunk ${token}`, 'content-type': 'application/json', ...headers } });

/** Polls the count of `filter` over ten years until it is `n` (bounded); returns the last count. */
async function waitCount(filter: string, n: number, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await countOf(node.url, 'hec', node.adminToken, filter, { start: '10y' });
    if (c === n || Date.now() > deadline) return c;
    await sleep(100);
  }
}

async function rows(filter: string): Promise<Record<string, any>[]> {
  return queryJson(node.url, 'hec', { queryString: filter, start: '10y' }, { token: node.adminToken });
}

t.test('concatenated objects, with and without whitespace, on every event path', async (t) => {
  const paths = ['/services/collector', '/services/collector/event', '/services/collector/event/1.0', '/api/v1/ingest/hec'];
  for (const [i, p] of paths.entries()) {
    const body = `{"event":"path=${i} a=1","time":1700000000.123}{"event":"path=${i} a=2"}\n  {"event":"path=${i} a=3"}\r\n`;
    const r = await post(p, body);
    t.equal(r.status, 200, p);
    t.same(r.json(), { text: 'Success', code: 0 });
  }
  t.equal(await waitCount('path=*', 12), 12);
  const first = await rows('path=0 a=1');
  t.equal(first.length, 1);
  t.equal(first[0]!['@timestamp'], 1700000000123, 'time in seconds with a fraction, kept to the millisecond');
  t.equal(first[0]!.a, '1', 'a string event is parsed by kv');
  t.equal(first[0]!['#type'], 'none', 'no sourcetype: #type none');
});

t.test('members: object event, host, source, sourcetype, index, timezone, fields and #tags', async (t) => {
  const body = JSON.stringify({
    event: { msg: 'hello obj', nested: { n: 5 }, list: [1, 2] },
    time: '1700000001.5',
    host: 'web-1',
    source: '/var/log/app.log',
    sourcetype: 'app',
    index: 'hec',
    timezone: 'Europe/Copenhagen',
    fields: { '#env': 'prod', team: 'core', multi: ['x', 'y'] },
  });
  const r = await post('/services/collector/event', body);
  t.equal(r.status, 200, r.text);
  await waitCount('"hello obj"', 1);
  const [e] = await rows('msg="hello obj"');
  t.ok(e, 'stored');
  t.equal(e!.msg, 'hello obj');
  t.equal(e!['nested.n'], '5');
  t.equal(e!['list[1]'], '2');
  t.equal(e!['@host'], 'web-1');
  t.equal(e!['@source'], '/var/log/app.log');
  t.equal(e!['#type'], 'app');
  t.equal(e!['#env'], 'prod', '#name in fields is a tag');
  t.equal(e!.team, 'core');
  t.equal(e!['multi[0]'], 'x');
  t.equal(e!['@timestamp'], 1700000001500, 'time as a string');
  t.equal(e!['@timezone'], 'Europe/Copenhagen');
  t.same(JSON.parse(e!['@rawstring']), { msg: 'hello obj', nested: { n: 5 }, list: [1, 2] }, 'the event JSON is @rawstring');
  const tagged = await queryJson(node.url, 'hec', { queryString: '#env=prod | count()', start: '10y' }, { token: node.adminToken });
  t.equal(tagged[0]!._count, '1', 'searchable by the tag');
});

t.test('sourcetype names a built-in parser; gzip; Bearer and Basic tokens', async (t) => {
  const line = '127.0.0.1 - - [21/Nov/2026:12:00:00 +0000] "GET /gz HTTP/1.1" 200 512 "-" "curl/8"';
  let r = await post('/services/collector', gzipSync(JSON.stringify({ event: line, sourcetype: 'accesslog' })), { 'content-encoding': 'gzip' });
  t.equal(r.status, 200, r.text);
  r = await api(node.url, '/services/collector', { method: 'POST', body: '{"event":"auth=bearer"}', token });
  t.equal(r.status, 200, 'Bearer');
  r = await api(node.url, '/services/collector', { method: 'POST', body: '{"event":"auth=basic"}', headers: { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` } });
  t.equal(r.status, 200, 'Basic with the token as password');
  await waitCount('url="/gz"', 1);
  const [e] = await rows('url="/gz"');
  t.equal(e!['#type'], 'accesslog');
  t.equal(e!.statuscode ?? e!.status, '200');
  t.equal(e!['@timestamp'], Date.UTC(2026, 10, 21, 12), 'the parser found the time');
  t.equal(await waitCount('auth=*', 2), 2);
});

t.test('sourcetype names a custom parser of the repository', async (t) => {
  await mustGql(node.url, node.adminToken, 'mutation { createParserV2(input: {name: "hecjson", repositoryName: "hec", script: "parseJson() | parsed := \\"yes\\"", testCases: [], fieldsToTag: ["svc"], fieldsToBeRemovedBeforeParsing: []}) { id } }');
  const r = await post('/services/collector/event', JSON.stringify({ event: '{"svc":"billing","custom":"c1"}', sourcetype: 'hecjson', host: 'h9' }));
  t.equal(r.status, 200, r.text);
  t.equal(await waitCount('custom=c1', 1), 1);
  const [e] = await rows('custom=c1');
  t.equal(e!.parsed, 'yes', 'the custom parser ran');
  t.equal(e!['#svc'], 'billing', 'its fieldsToTag made a tag');
  t.equal(e!['#type'], 'hecjson');
  t.equal(e!['@host'], 'h9', 'HEC metadata kept');
});

t.test('raw endpoint: one event per line, query parameters, channel field', async (t) => {
  const r = await post('/services/collector/raw?sourcetype=rawtype&host=h2&source=s2', 'raw=1 x\nraw=2 y\r\n\nraw=3 z', { 'x-splunk-request-channel': '11111111-2222-3333-4444-555555555555' });
  t.equal(r.status, 200, r.text);
  t.ok(Number.isSafeInteger(r.json().ackId), `a channel gets an ack id: ${r.text}`);
  const r2 = await post('/api/v1/ingest/hec/raw?channel=chan-2', 'raw=4');
  t.equal(r2.status, 200);
  t.equal(await waitCount('raw=*', 4), 4);
  const [e] = await rows('raw=2');
  t.equal(e!['@rawstring'], 'raw=2 y');
  t.equal(e!['#type'], 'rawtype');
  t.equal(e!['@host'], 'h2');
  t.equal(e!['@source'], 's2');
  t.equal(e!.channel, '11111111-2222-3333-4444-555555555555');
});

t.test('indexer acknowledgement', async (t) => {
  const ch = { 'x-splunk-request-channel': 'abcd-ef' };
  const a = await post('/services/collector/event', '{"event":"ack=1"}', ch);
  const b = await post('/services/collector/event', '{"event":"ack=2"}', ch);
  const [ia, ib] = [a.json().ackId as number, b.json().ackId as number];
  t.ok(Number.isSafeInteger(ia) && Number.isSafeInteger(ib) && ia !== ib, `two ack ids: ${ia} ${ib}`);
  const acks = await post('/services/collector/ack', JSON.stringify({ acks: [ia, ib] }), ch);
  t.equal(acks.status, 200, acks.text);
  t.same(acks.json(), { acks: { [ia]: true, [ib]: true } });
  // An id next to a real one differs from it in its check bits only (src/ingest/doors/hec-ack.ts).
  const near = ia % 2 ** 20 === 2 ** 20 - 1 ? ia - 1 : ia + 1;
  const made = await post('/services/collector/ack', JSON.stringify({ acks: [ia, near] }), ch);
  t.same(made.json(), { acks: { [ia]: true, [near]: false } }, 'an id not handed out is not acknowledged');
  const other = await post('/services/collector/ack', JSON.stringify({ acks: [ia] }), { 'x-splunk-request-channel': 'never-used-1' });
  t.same(other.json(), { acks: { [ia]: false } }, 'nor an id asked about on another channel');
  const noChannel = await post('/services/collector/ack', '{"acks":[0]}');
  t.equal(noChannel.status, 400);
  t.equal(noChannel.json().code, 10);
  const bad = await post('/services/collector/ack', '{"acks":"x"}', ch);
  t.equal(bad.status, 400);
  t.equal(bad.json().code, 6);
});

t.test('health', async (t) => {
  for (const p of ['/services/collector/health', '/services/collector/health/1.0']) {
    const r = await api(node.url, p);
    t.equal(r.status, 200);
    t.same(r.json(), { text: 'HEC is healthy', code: 17 });
  }
  const bad = await api(node.url, '/services/collector/health', { headers: { authorization: 'Splunk 00000000-0000-0000-0000-000000000000' } });
  t.equal(bad.status, 400);
  t.equal(bad.json().code, 4);
});

t.test('refusals in HEC shape; nothing of a refused request is stored; the node serves on', async (t) => {
  const cases: [string, string | Buffer, Record<string, string>, number, number, number?][] = [
    ['missing token', '{"event":"bad=1"}', { authorization: '' }, 401, 2],
    ['unknown token', '{"event":"bad=2"}', { authorization: 'Splunk 00000000-0000-0000-0000-000000000000' }, 401, 4],
    ['no data', '  \n', {}, 400, 5],
    ['not JSON', '{"event":"bad=3"}{"event": nope}', {}, 400, 6, 1],
    ['not an object', '{"event":"bad=4"} [1]', {}, 400, 6, 1],
    ['unterminated', '{"event":"bad=5"}{"event":"x', {}, 400, 6, 1],
    ['event missing', '{"event":"bad=6"}{"time":1}', {}, 400, 12, 1],
    ['event null', '{"event":null}', {}, 400, 13, 0],
    ['wrong index', '{"event":"bad=7","index":"elsewhere"}', {}, 400, 7, 0],
    ['bad time', '{"event":"bad=8","time":"yesterday"}', {}, 400, 6, 0],
    ['bad fields', '{"event":"bad=9","fields":{"a":{"b":1}}}', {}, 400, 15, 0],
    ['bad tag', '{"event":"bad=10","fields":{"#repo":"x"}}', {}, 400, 15, 0],
    ['too deep', `{"event":${'['.repeat(500)}${']'.repeat(500)}}`, {}, 400, 6],
    ['too many events', '{"event":"bad=11"}'.repeat(1001), {}, 400, 6],
    ['gzip bomb', gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20)), { 'content-encoding': 'gzip' }, 413, 6],
    ['not gzip', Buffer.from('{"event":"bad=12"}'), { 'content-encoding': 'gzip' }, 400, 6],
  ];
  for (const [name, body, headers, status, code, n] of cases) {
    const h = { ...headers };
    if (h.authorization === '') delete h.authorization;
    const r = await api(node.url, '/services/collector/event', { method: 'POST', body, headers: { 'content-type': 'application/json', ...(headers.authorization === undefined ? { authorization: `Splunk ${token}` } : {}), ...h } });
    t.equal(r.status, status, `${name}: status (${r.text.slice(0, 200)})`);
    const j = r.json();
    t.equal(j.code, code, `${name}: HEC code`);
    t.type(j.text, 'string', `${name}: HEC text`);
    if (n !== undefined) t.equal(j['invalid-event-number'], n, `${name}: event number`);
  }
  const ok = await post('/services/collector', '{"event":"after=1"}');
  t.equal(ok.status, 200, 'the node serves on');
  t.equal(await waitCount('after=1', 1), 1);
  t.equal(await waitCount('bad=*', 0, 2_000), 0, 'nothing of a refused request was stored');
});
