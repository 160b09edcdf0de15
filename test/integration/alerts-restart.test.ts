/**
 * Throttle state survives a restart: an alert that triggered (as a whole, and per throttle-field
 * value) does not trigger again after the node is stopped and started on the same data dir while
 * its throttle time runs, although its query still finds rows; after a SIGKILL too. A control
 * alert created after the restart fires, so the scheduler is running.
 */
import t from 'tap';
import { startNode, type TestNode } from '../helpers/node-process.js';
import { startReceiver } from '../helpers/receiver.js';
import { createRepo, ingestStructured, type KnownEvent } from '../helpers/query.js';
import { createAlert, createWebhook, getAlert, sleep } from '../helpers/alerts.js';

t.setTimeout(180_000);

const INTERVAL_MS = 250;
const rx = await startReceiver(t);
const config = ['[digest]', 'partitions = 2', 'worker_threads = 1', '[alerts]', `evaluate_interval_ms = ${INTERVAL_MS}`, 'allow_targets = ["127.0.0.1/32"]', ''].join('\n');
let node: TestNode = await startNode(t, { config });
const repo = await createRepo(node.url, node.adminToken, 'r');

const ev = (attributes: Record<string, string>): KnownEvent => ({ timestamp: Date.now(), rawstring: JSON.stringify(attributes), attributes, tags: { host: 'h' } });

const whole = await createWebhook(node.url, node.adminToken, 'r', 'whole', `${rx.url}/whole`);
const perField = await createWebhook(node.url, node.adminToken, 'r', 'per-field', `${rx.url}/per-field`, { bodyTemplate: '{events}' });
const wholeAlert = await createAlert(node.url, node.adminToken, 'r', { name: 'whole', query: { queryString: 'level=ERROR', start: '1h' }, throttleTimeMillis: 3_600_000, notifiers: [whole] });
const fieldAlert = await createAlert(node.url, node.adminToken, 'r', { name: 'per-server', query: { queryString: 'level=ERROR', start: '1h' }, throttleTimeMillis: 3_600_000, throttleField: 'server', notifiers: [perField] });

await ingestStructured(node.url, repo.ingestToken, [ev({ level: 'ERROR', server: 'a' }), ev({ level: 'ERROR', server: 'b' })]);
await rx.waitFor('/whole', 1);
await rx.waitFor('/per-field', 1);
const before = await getAlert(node.url, node.adminToken, 'r', wholeAlert.id);
t.type(before.timeOfLastTrigger, 'number');

async function restart(how: 'stop' | 'kill'): Promise<void> {
  if (how === 'stop') t.equal(await node.stop(), 0, 'stopped cleanly');
  else await node.kill();
  node = await startNode(t, { dataDir: node.dataDir, config });
}

for (const how of ['stop', 'kill'] as const) {
  t.test(`after a ${how === 'stop' ? 'graceful restart' : 'SIGKILL and restart'} the throttle still holds`, async (t) => {
    await restart(how);
    const after = await getAlert(node.url, node.adminToken, 'r', wholeAlert.id);
    t.equal(after.timeOfLastTrigger, before.timeOfLastTrigger, 'the last trigger time is kept');
    await ingestStructured(node.url, repo.ingestToken, [ev({ level: 'ERROR', server: 'a' }), ev({ level: 'ERROR', server: 'b' })]);
    await sleep(16 * INTERVAL_MS);
    t.equal(rx.to('/whole').length, 1, 'the whole-alert throttle held across the restart');
    t.equal(rx.to('/per-field').length, 1, 'the held field values held across the restart');
  });
}

t.test('the scheduler runs after the restart: a new value and a new alert fire', async (t) => {
  await ingestStructured(node.url, repo.ingestToken, [ev({ level: 'ERROR', server: 'c' })]);
  const [, second] = await rx.waitFor('/per-field', 2);
  t.strictSame((JSON.parse(second!.body) as { server: string }[]).map((e) => e.server), ['c'], 'only the new value c');
  const control = await createWebhook(node.url, node.adminToken, 'r', 'control', `${rx.url}/control`);
  await createAlert(node.url, node.adminToken, 'r', { name: 'control', query: { queryString: 'level=ERROR', start: '1h' }, notifiers: [control] });
  await rx.waitFor('/control', 1);
  t.equal(rx.to('/whole').length, 1);
  t.equal((await getAlert(node.url, node.adminToken, 'r', fieldAlert.id)).lastError, null);
});

t.test('a graceful stop lets a delivery under way finish, and the actions after it run', async (t) => {
  const g = await createRepo(node.url, node.adminToken, 'graceful');
  rx.answer('/graceful/slow', { status: 200, delayMs: 1500 });
  const slow = await createWebhook(node.url, node.adminToken, 'graceful', 'slow', `${rx.url}/graceful/slow`);
  const after = await createWebhook(node.url, node.adminToken, 'graceful', 'after', `${rx.url}/graceful/after`);
  await createAlert(node.url, node.adminToken, 'graceful', { name: 'slow-first', query: { queryString: 'level=ERROR', start: '1h' }, throttleTimeMillis: 3_600_000, notifiers: [slow, after] });
  await ingestStructured(node.url, g.ingestToken, [ev({ level: 'ERROR' })]);
  const [slowReq] = await rx.waitFor('/graceful/slow', 1);
  t.equal(await node.stop(), 0, 'stopped cleanly');
  // Measured from the request's arrival, when the receiver's 1.5 s delay began (100 ms of timer
  // slack), not from the SIGTERM: on a busy machine this process may notice the request late.
  const answeredAt = slowReq!.at + 1500;
  t.ok(Date.now() >= answeredAt - 100, `the stop waited for the slow answer (ended ${Date.now() - answeredAt} ms after it was sent)`);
  t.equal(rx.to('/graceful/after').length, 1, 'the second action ran before the node exited');
});
