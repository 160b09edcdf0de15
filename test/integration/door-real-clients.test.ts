/**
 * Real, unmodified shipper clients from PyPI against a real node: the `elasticsearch` package's
 * bulk helper, the OpenTelemetry SDK with its OTLP/HTTP protobuf log exporter, and the
 * `splunk-handler` HEC logging handler (test/fixtures/doors/clients.py). .ci/run installs them in
 * a virtual environment (LOGSVC_DOORS_PYTHON, default /opt/logsvc-doors-venv/bin/python); outside
 * CI a missing environment skips these tests with a message, in CI (CI=true) it fails them.
 * Events are read back through the query API.
 */
import t from 'tap';

// Real nodes and clients on a shared, loaded machine: more than the default per-file timeout.
t.setTimeout(300_000);
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startNode } from '../helpers/node-process.js';
import { countOf, createRepo, queryJson, sleep } from '../helpers/query.js';

const PYTHON = process.env.LOGSVC_DOORS_PYTHON ?? '/opt/logsvc-doors-venv/bin/python';
const SCRIPT = fileURLToPath(new URL('../fixtures/doors/clients.py', import.meta.url));
const absent = existsSync(PYTHON) || process.env.CI === 'true' ? false : `the Python clients are not installed here (${PYTHON}; .ci/run makes it)`;

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'worker_threads = 1', ''].join('\n');

function client(name: string, base: string, token: string, repo: string, marker: string, count: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, [SCRIPT, name, base, token, repo, marker, String(count)], { timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? 1), out: `${stdout}${stderr}` });
    });
  });
}

t.test('real clients', { skip: absent }, async (t) => {
  const node = await startNode(t, { config: CONFIG });
  const repo = await createRepo(node.url, node.adminToken, 'clients');
  const waitCount = async (filter: string, n: number): Promise<number> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const c = await countOf(node.url, 'clients', node.adminToken, filter, { start: '10y' });
      if (c === n || Date.now() > deadline) return c;
      await sleep(200);
    }
  };
  const rows = (filter: string) => queryJson(node.url, 'clients', { queryString: filter, start: '10y' }, { token: node.adminToken });

  t.test('elasticsearch bulk helper', async (t) => {
    const r = await client('elasticsearch', node.url, repo.ingestToken, 'clients', 'esclient', 250);
    t.equal(r.code, 0, r.out);
    t.equal(await waitCount('esclient', 250), 250);
    const [e] = await rows('esclient n=7');
    t.equal(e!['@timestamp'], Date.UTC(2026, 10, 1, 10));
    t.equal(e!.n, '7');
  });

  t.test('OpenTelemetry SDK, OTLP/HTTP protobuf exporter', async (t) => {
    const r = await client('otlp', node.url, repo.ingestToken, 'clients', 'otelclient', 50);
    t.equal(r.code, 0, r.out);
    t.equal(await waitCount('otelclient', 50), 50);
    const [e] = await rows('@rawstring="otelclient n=3"');
    t.equal(e!['resource.attributes.service.name'], 'pyclient');
    t.equal(e!.severityText, 'WARN');
    t.equal(e!['attributes.item'], '3');
    t.equal(e!['scope.name'], 'otlp-client');
  });

  t.test('splunk-handler (HEC)', async (t) => {
    const r = await client('splunk', node.url, repo.ingestToken, 'clients', 'splunkclient', 60);
    t.equal(r.code, 0, r.out);
    t.equal(await waitCount('splunkclient', 60), 60);
    const [e] = await rows('@rawstring="splunkclient n=5"');
    t.equal(e!['#type'], 'pyapp');
    t.equal(e!['@source'], 'clients.py');
  });
});
