/**
 * The node's own log lines are searchable in the system repository `humio` (level, module and
 * message as fields), they go through the normal ingest path, and [self_logs] enabled = false
 * turns them off.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { queryJson } from '../helpers/query.js';
import { parsePrometheus, sumOf } from '../helpers/prometheus.js';

async function waitForRows(base: string, token: string, queryString: string, timeoutMs = 20_000): Promise<Record<string, any>[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await queryJson(base, 'humio', { queryString, start: '1h' }, { token });
    if (rows.length > 0 || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 200));
  }
}

t.test('the start-up line and a failed login are searchable in humio', async (t) => {
  const node = await startNode(t, { selfLogs: true });
  const started = await waitForRows(node.url, node.adminToken, 'message="node started"');
  t.equal(started.length, 1, 'the start-up line');
  t.equal(started[0]!.level, 'INFO');
  t.equal(started[0]!.module, 'node');
  t.match(started[0]!['@rawstring'], /INFO \[node\] node started/);

  const bad = await api(node.url, '/api/v1/repositories/humio/query', { token: 'this-is-not-a-valid-token', body: '{"queryString":""}' });
  t.equal(bad.status, 401);
  const failed = await waitForRows(node.url, node.adminToken, 'message="authentication failed" | module=http');
  t.equal(failed.length, 1, 'the failed login');
  t.equal(failed[0]!.level, 'WARN');
  t.equal(failed[0]!.path, '/api/v1/repositories/humio/query');
  t.notMatch(failed[0]!['@rawstring'], /this-is-not-a-valid-token/, 'the presented token is not logged');

  const m = await parsePrometheus((await api(node.url, '/metrics')).text);
  t.ok(sumOf(m, 'logsvc_ingest_events_total', { repository: 'humio' }) >= 2, 'through the normal ingest path (counted as ingest)');
  t.equal(sumOf(m, 'logsvc_self_log_dropped_total'), 0, 'nothing dropped');
});

t.test('self_logs.enabled = false: no humio repository, nothing ingested', async (t) => {
  const node = await startNode(t, { selfLogs: true, config: '[self_logs]\nenabled = false\n' });
  const res = await api(node.url, '/api/v1/repositories/humio/query', { token: node.adminToken, body: '{"queryString":""}', headers: { accept: 'application/json' } });
  t.equal(res.status, 404, 'no humio repository');
});
