/**
 * The OTLP/HTTP logs door against a real node: protobuf and JSON encodings, gzip, resource, scope
 * and record attributes, severity, body, trace and span ids, timeUnixNano / observedTimeUnixNano,
 * partial success, refusals as google.rpc.Status in the request's encoding, bounds and gzip bombs;
 * events read back through the query API.
 */
import t from 'tap';

// Real nodes and clients on a shared, loaded machine: more than the default per-file timeout.
t.setTimeout(300_000);
import { gzipSync } from 'node:zlib';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { countOf, createRepo, queryJson, sleep } from '../helpers/query.js';
import { decodeLogsResponse, decodeRpcStatus, encodeLogsRequest } from '../../src/ingest/doors/otlp-proto.js';

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'worker_threads = 1', '[ingest]', 'max_events_per_request = 1000', '[http]', 'max_decompressed_bytes = 1048576', ''].join('\n');
const node = await startNode(t, { config: CONFIG });
const repo = await createRepo(node.url, node.adminToken, 'otel');
const PATH = '/api/v1/ingest/otlp/v1/logs';

const send = (body: string | Buffer, contentType: string, headers: Record<string, string> = {}) =>
  api(node.url, PATH, { method: 'POST', body, token: repo.ingestToken, headers: { 'content-type': contentType, ...headers } });

async function waitCount(filter: string, n: number, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await countOf(node.url, 'otel', node.adminToken, filter, { start: '10y' });
    if (c === n || Date.now() > deadline) return c;
    await sleep(100);
  }
}
const rows = (filter: string) => queryJson(node.url, 'otel', { queryString: filter, start: '10y' }, { token: node.adminToken });

const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';
const request = (marker: string, ids: 'hex' | 'base64') => ({
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }, { key: 'host.cpu', value: { intValue: '8' } }] },
      scopeLogs: [
        {
          scope: { name: 'my.logger', version: '1.2.3', attributes: [{ key: 'lib', value: { boolValue: true } }] },
          logRecords: [
            {
              timeUnixNano: '1790000000123456789',
              observedTimeUnixNano: '1790000000200000000',
              severityNumber: 9,
              severityText: 'INFO',
              body: { stringValue: `${marker} order placed` },
              attributes: [
                { key: 'order.id', value: { stringValue: 'o-17' } },
                { key: 'amount', value: { doubleValue: 12.5 } },
                { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: 'b' }] } } },
              ],
              traceId: ids === 'hex' ? TRACE : Buffer.from(TRACE, 'hex').toString('base64'),
              spanId: ids === 'hex' ? SPAN : Buffer.from(SPAN, 'hex').toString('base64'),
              flags: 1,
            },
            { observedTimeUnixNano: '1790000001000000000', body: { kvlistValue: { values: [{ key: 'marker', value: { stringValue: `${marker}-kv` } }, { key: 'n', value: { intValue: 3 } }] } } },
          ],
        },
      ],
    },
  ],
});

t.test('protobuf: every member mapped; the answer is an ExportLogsServiceResponse', async (t) => {
  const r = await send(encodeLogsRequest(request('pb1', 'base64')), 'application/x-protobuf');
  t.equal(r.status, 200, r.text);
  t.equal(r.headers.get('content-type'), 'application/x-protobuf');
  t.same(decodeLogsResponse(Buffer.from(r.text, 'latin1')), {}, 'full success');
  t.equal(await waitCount('pb1*', 2), 2);
  const [e] = await rows('"pb1 order placed"');
  t.equal(e!['@rawstring'], 'pb1 order placed');
  t.equal(e!['@timestamp'], 1790000000123);
  t.equal(e!['@timestamp.nanos'], '456789');
  t.equal(e!['resource.attributes.service.name'], 'checkout');
  t.equal(e!['resource.attributes.host.cpu'], '8');
  t.equal(e!['scope.name'], 'my.logger');
  t.equal(e!['scope.version'], '1.2.3');
  t.equal(e!['scope.attributes.lib'], 'true');
  t.equal(e!['attributes.order.id'], 'o-17');
  t.equal(e!['attributes.amount'], '12.5');
  t.equal(e!['attributes.tags[1]'], 'b');
  t.equal(e!.severityText, 'INFO');
  t.equal(e!.severityNumber, '9');
  t.equal(e!.traceId, TRACE);
  t.equal(e!.spanId, SPAN);
  t.equal(e!.flags, '1');
  t.equal(e!['#type'], 'otlp');
  const [kv] = await rows('body.marker="pb1-kv"');
  t.equal(kv!['@timestamp'], 1790000001000, 'observedTimeUnixNano when timeUnixNano is absent');
  t.equal(kv!['body.n'], '3');
  t.same(JSON.parse(kv!['@rawstring']), { marker: 'pb1-kv', n: 3 });
});

t.test('JSON encoding, gzip; partial success for records that cannot be read', async (t) => {
  const req = request('js1', 'hex');
  (req.resourceLogs[0]!.scopeLogs[0]!.logRecords as unknown[]).push({ timeUnixNano: 'soon', body: { stringValue: 'js1 bad time' } }, 'not a record');
  const r = await send(gzipSync(JSON.stringify(req)), 'application/json', { 'content-encoding': 'gzip' });
  t.equal(r.status, 200, r.text);
  const j = r.json();
  t.equal(j.partialSuccess.rejectedLogRecords, '2');
  t.match(j.partialSuccess.errorMessage, /timeUnixNano/);
  t.equal(await waitCount('js1*', 2), 2, 'the readable records are stored');
  const [e] = await rows('"js1 order placed"');
  t.equal(e!.traceId, TRACE, 'hex ids in JSON');
});

t.test('refusals as google.rpc.Status; nothing stored; node serves on', async (t) => {
  let r = await api(node.url, PATH, { method: 'POST', body: encodeLogsRequest(request('bad1', 'base64')), headers: { 'content-type': 'application/x-protobuf', authorization: 'Bearer 00000000-0000-0000-0000-000000000000' } });
  t.equal(r.status, 401);
  t.equal(decodeRpcStatus(Buffer.from(await (await fetch(new URL(PATH, node.url), { method: 'POST', body: Buffer.from('x'), headers: { 'content-type': 'application/x-protobuf', authorization: 'Bearer nope' } })).arrayBuffer())).code, 16, 'UNAUTHENTICATED');
  r = await send(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), 'application/x-protobuf');
  t.equal(r.status, 400, 'malformed protobuf');
  r = await send('{"resourceLogs": [', 'application/json');
  t.equal(r.status, 400);
  t.equal(r.json().code, 3, 'INVALID_ARGUMENT');
  r = await send('[]', 'application/json');
  t.equal(r.status, 400);
  r = await send('{}', 'text/plain');
  t.equal(r.status, 415);
  const many = request('bad2', 'hex');
  many.resourceLogs[0]!.scopeLogs[0]!.logRecords = Array.from({ length: 1001 }, () => ({ body: { stringValue: 'bad2' } })) as never;
  r = await send(JSON.stringify(many), 'application/json');
  t.equal(r.status, 400, 'more records than ingest.max_events_per_request');
  r = await send(gzipSync(Buffer.alloc(8 * 1024 * 1024)), 'application/x-protobuf', { 'content-encoding': 'gzip' });
  t.equal(r.status, 413, 'gzip bomb');
  // Deeply nested values: refused, not a crash.
  let v: Record<string, unknown> = { stringValue: 'deep' };
  for (let i = 0; i < 3000; i++) v = { arrayValue: { values: [v] } };
  r = await send(encodeLogsRequest({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: v }] }] }] }), 'application/x-protobuf');
  t.ok(r.status === 200 || r.status === 400, `deep nesting answered (${r.status})`);
  r = await send(encodeLogsRequest(request('after1', 'base64')), 'application/x-protobuf');
  t.equal(r.status, 200);
  t.equal(await waitCount('after1*', 2), 2, 'the node serves on');
  t.equal(await waitCount('bad*', 0, 2000), 0, 'nothing of a refused request was stored');
});
