/**
 * An alert whose query cannot run within the bounds (issue 24, defect 1): saved by an ordinary
 * repository member, its query (replace() blowing ten ~900 KB events up to gigabytes, or values
 * adding up past the query's memory budget) killed the node with a heap OOM at every evaluation,
 * and again after each restart. Now each evaluation ends with an error the alert's lastError
 * shows, the evaluations back off, and the node keeps serving, before and after a restart.
 */
import t, { type Test } from 'tap';
import { startNode, type TestNode } from '../helpers/node-process.js';
import { api, createUser } from '../helpers/http.js';
import { startReceiver } from '../helpers/receiver.js';
import { addMember, countOf, createRepo, ingestStructured, type KnownEvent } from '../helpers/query.js';
import { createAlert, createWebhook, getAlert, sleep, waitForAlert } from '../helpers/alerts.js';

t.setTimeout(300_000);

const INTERVAL_MS = 250;
const rx = await startReceiver(t);
const config = [
  '[health]',
  'grace_period_seconds = 600',
  '[digest]',
  'partitions = 1',
  'worker_threads = 1',
  '[query]',
  `max_query_memory_bytes = ${64 * 1024 * 1024}`,
  '[alerts]',
  `evaluate_interval_ms = ${INTERVAL_MS}`,
  'allow_targets = ["127.0.0.1/32"]',
  '',
].join('\n');
let node: TestNode = await startNode(t, { config });
const repo = await createRepo(node.url, node.adminToken, 'r');
const member = await createUser(node.url, node.adminToken, 'member');
await addMember(node.url, node.adminToken, 'r', 'member');

const now = Date.now();
const ev = (i: number, rawstring: string): KnownEvent => ({ timestamp: now - 1000 - i, rawstring, attributes: { kind: rawstring.startsWith('eeee') && rawstring.endsWith('e') ? 'all-e' : 'some-e' }, tags: { host: 'h' } });
const events: KnownEvent[] = [];
for (let i = 0; i < 10; i++) events.push(ev(i, 'e'.repeat(900_000)));
for (let i = 0; i < 10; i++) events.push(ev(10 + i, 'e'.repeat(20_000) + 'x'.repeat(880_000)));
await ingestStructured(node.url, repo.ingestToken, events, 2);

const E500 = 'E'.repeat(500);
const hook = await createWebhook(node.url, member.token, 'r', 'hook', `${rx.url}/hook`);
const expand = await createAlert(node.url, member.token, 'r', { name: 'expand', query: { queryString: `kind="all-e" | replace("e", with="${E500}")`, start: '1h' }, notifiers: [hook] });
const budget = await createAlert(node.url, member.token, 'r', { name: 'budget', query: { queryString: `kind="some-e" | replace("e", with="${E500}")`, start: '1h' }, notifiers: [hook] });

async function serving(t: Test, what: string): Promise<void> {
  t.equal(node.proc.exitCode, null, `${what}: the node process is alive`);
  t.equal((await api(node.url, '/api/v1/status', { timeoutMs: 10_000 })).status, 200, `${what}: /api/v1/status answers`);
  t.equal(await countOf(node.url, 'r', node.adminToken), 20, `${what}: queries run`);
}

t.test('each failing evaluation records its error; the node serves on', async (t) => {
  const a = await waitForAlert(node.url, member.token, 'r', expand.id, (x) => x.lastError !== null, 60_000);
  t.match(a.lastError, /^the query failed: replace: the result would be at least \d+ characters long, more than the 16777216 characters a query function may make.*; while it keeps failing it is evaluated less often/);
  const b = await waitForAlert(node.url, member.token, 'r', budget.id, (x) => x.lastError !== null, 60_000);
  t.match(b.lastError, /^the query failed: the query needs more than its memory budget of 64 MiB \(query\.max_query_memory_bytes\)/);
  await sleep(20 * INTERVAL_MS);
  await serving(t, 'after 20 intervals');
  t.equal(rx.to('/hook').length, 0, 'nothing triggered');
});

t.test('after a restart the saved alerts do not take the node down', async (t) => {
  t.equal(await node.stop(), 0, 'stopped cleanly');
  node = await startNode(t, { dataDir: node.dataDir, config });
  await sleep(40 * INTERVAL_MS);
  await serving(t, 'after 40 intervals past the restart');
  const a = await getAlert(node.url, member.token, 'r', expand.id);
  t.match(a.lastError, /^the query failed: replace:/);
  const b = await getAlert(node.url, member.token, 'r', budget.id);
  t.match(b.lastError, /memory budget/);
});
