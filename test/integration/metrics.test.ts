/**
 * GET /metrics against a real node: the exposition parses with the reference Prometheus parser,
 * the numbers move with ingest and queries, and access follows [metrics] (open on loopback by
 * default; otherwise metrics.token or a root API token).
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api, createUser } from '../helpers/http.js';
import { createRepo, ingestUnstructured, queryJson, waitForCount } from '../helpers/query.js';
import { parsePrometheus, sumOf } from '../helpers/prometheus.js';

t.test('metrics move with ingest and queries, and parse with prometheus_client', async (t) => {
  const node = await startNode(t);
  const repo = await createRepo(node.url, node.adminToken, 'metered');
  const scrape = async (): Promise<Map<string, { labels: Record<string, string>; value: number }[]>> => {
    const res = await api(node.url, '/metrics');
    t.equal(res.status, 200, 'open on loopback without a token');
    t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    return parsePrometheus(res.text);
  };

  const before = await scrape();
  t.equal(sumOf(before, 'logsvc_ingest_events_total', { repository: 'metered' }), 0, 'nothing ingested yet');
  t.ok(sumOf(before, 'logsvc_process_resident_memory_bytes') > 0, 'process metrics');
  t.ok((before.get('logsvc_queue_lag_bytes') ?? []).length > 0, 'a lag gauge per partition');
  t.ok((before.get('logsvc_worker_pool_utilization') ?? []).some((s) => s.labels.pool === 'foreground'), 'worker pool utilisation');

  const lines = Array.from({ length: 50 }, (_, i) => `level=info n=${i} msg="metered line ${i}"`);
  await ingestUnstructured(node.url, repo.ingestToken, lines.slice(0, 30));
  await ingestUnstructured(node.url, repo.ingestToken, lines.slice(30));
  t.equal(await waitForCount(node.url, repo.name, node.adminToken, 50, 20_000), 50, 'all searchable');
  const rows = await queryJson(node.url, repo.name, { queryString: 'n=7' }, { token: node.adminToken });
  t.equal(rows.length, 1);

  const after = await scrape();
  t.equal(sumOf(after, 'logsvc_ingest_events_total', { repository: 'metered' }), 50, 'ingested events by repository');
  t.ok(sumOf(after, 'logsvc_ingest_bytes_total', { repository: 'metered' }) > 50 * 20, 'ingested bytes by repository');
  t.equal(sumOf(after, 'logsvc_http_requests_total', { route: '/api/v1/ingest/humio-unstructured', method: 'POST', status: '200' }), 2, 'requests by route and status');
  t.equal(sumOf(after, 'logsvc_http_request_duration_seconds_count', { route: '/api/v1/ingest/humio-unstructured', method: 'POST' }), 2, 'latency histogram by route');
  t.ok(sumOf(after, 'logsvc_http_requests_total', { route: '/metrics', status: '200' }) >= 1, 'the scrape itself is counted');
  const q0 = sumOf(before, 'logsvc_queries_total', { outcome: 'ok' });
  const q1 = sumOf(after, 'logsvc_queries_total', { outcome: 'ok' });
  t.ok(q1 >= q0 + 2, `queries counted (${q0} -> ${q1})`);
  t.ok(sumOf(after, 'logsvc_query_scanned_events_total') >= 50, 'events scanned by queries');
  t.ok(sumOf(after, 'logsvc_query_scanned_bytes_total') > 0, 'bytes scanned by queries');
  t.equal(sumOf(after, 'logsvc_query_duration_seconds_count'), q1 + sumOf(after, 'logsvc_queries_total', { outcome: 'error' }) + sumOf(after, 'logsvc_queries_total', { outcome: 'cancelled' }), 'one duration per finished query');
  t.ok(sumOf(after, 'logsvc_digest_latency_seconds_count') >= 1, 'digest latency observed');
  t.ok(sumOf(after, 'logsvc_queue_end_offset_bytes') > 0, 'queue offsets moved');

  const bad = await api(node.url, '/api/v1/repositories/metered/query', { token: 'not-a-token', body: '{"queryString":"x"}' });
  t.equal(bad.status, 401);
  const third = await scrape();
  t.equal(sumOf(third, 'logsvc_http_requests_total', { route: '/api/v1/repositories/:repo/query', status: '401' }), 1, 'a refused request is counted with its status');
  t.equal(sumOf(third, 'logsvc_http_requests_total', { route: '(unmatched)', status: '404' }), 0);
  await api(node.url, '/no/such/thing');
  const fourth = await scrape();
  t.equal(sumOf(fourth, 'logsvc_http_requests_total', { route: '(unmatched)', status: '404' }), 1, 'unmatched paths share one series');
});

t.test('metrics access: closed to loopback, open with metrics.token or a root API token', async (t) => {
  const token = 'scrape-secret-0123456789';
  const node = await startNode(t, { config: `[metrics]\nopen_on_loopback = false\ntoken = "${token}"\n` });
  const none = await api(node.url, '/metrics');
  t.equal(none.status, 401, 'no token: 401');
  t.equal((await api(node.url, '/metrics', { token: 'wrong-token-wrong-token' })).status, 401, 'a wrong token: 401');
  t.equal((await api(node.url, '/metrics', { token })).status, 200, 'metrics.token');
  t.equal((await api(node.url, '/metrics', { token: node.adminToken })).status, 200, 'a root API token');
  const user = await createUser(node.url, node.adminToken, 'plain-user');
  t.equal((await api(node.url, '/metrics', { token: user.token })).status, 403, 'a non-root user: 403');
});

t.test('metrics.enabled = false: no endpoint', async (t) => {
  const node = await startNode(t, { config: '[metrics]\nenabled = false\n' });
  t.equal((await api(node.url, '/metrics')).status, 404);
});
