/**
 * How the scheduler treats alerts beyond firing: an alert whose query uses a lookup file through
 * match() is accepted and fires; webhooks that never answer do not hold up another alert;
 * problems of the query (it fails, an owner who may no longer run it) become the alert's lastError
 * and are cleared by the next clean evaluation, even one without rows; updating an orphaned alert
 * takes it over; the repository action uses the token's custom parser and the time of now.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { startBlackhole, startReceiver } from '../helpers/receiver.js';
import { uploadFile } from '../helpers/files.js';
import { api } from '../helpers/http.js';
import { createRepo, ingestStructured, mustGql, queryJson, waitForCount, type KnownEvent } from '../helpers/query.js';
import { createAlert, createWebhook, getAlert, restAlert, sleep, waitForAlert } from '../helpers/alerts.js';

t.setTimeout(180_000);

const INTERVAL_MS = 250;
const rx = await startReceiver(t);
const node = await startNode(t, {
  config: [
    '[health]',
    'grace_period_seconds = 600',
    '[digest]',
    'partitions = 2',
    'worker_threads = 1',
    '[alerts]',
    `evaluate_interval_ms = ${INTERVAL_MS}`,
    'max_concurrent_evaluations = 2',
    'action_timeout_ms = 20000',
    'action_retries = 2',
    'retry_backoff_ms = 150',
    'allow_targets = ["127.0.0.1/32"]',
    '',
  ].join('\n'),
});
const { url, adminToken: admin } = node;

const event = (attributes: Record<string, string>): KnownEvent => ({
  timestamp: Date.now(),
  rawstring: Object.entries(attributes)
    .map(([k, v]) => `${k}=${v}`)
    .join(' '),
  attributes,
  tags: { host: 'web-1' },
});

t.test('an alert whose query uses match() on an uploaded lookup file is accepted and fires with the looked-up fields', async (t) => {
  const repo = await createRepo(url, admin, 'lookups');
  const q = { queryString: 'level=ERROR | match(file="owners.csv", field=service) | owner=*', start: '1h' };
  const hook = await createWebhook(url, admin, 'lookups', 'hook', `${rx.url}/lookups`, { bodyTemplate: '{events}' });

  const missing = await restAlert(url, admin, 'lookups', 'POST', { name: 'owned', query: q, notifiers: [hook] });
  t.equal(missing.status, 400, 'without the file the query does not compile');
  t.match(missing.text, /query\.queryString: .*owners\.csv/, 'the 400 names the field and the file');

  const up = await uploadFile(url, '/api/v1/repositories/lookups/files', admin, 'owners.csv', 'service,owner\ncheckout,team-pay\nsearch,team-find\n');
  t.equal(up.status, 200, up.text);
  const alert = await createAlert(url, admin, 'lookups', { name: 'owned', query: q, throttleTimeMillis: 3_600_000, notifiers: [hook] });
  const upd = await restAlert(url, admin, 'lookups', 'PUT', { ...alert, description: 'updated' }, alert.id);
  t.equal(upd.status, 200, `an update of it is accepted too: ${upd.text}`);

  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', service: 'checkout' }), event({ level: 'ERROR', service: 'unknown' }), event({ level: 'INFO', service: 'search' })]);
  const [req] = await rx.waitFor('/lookups', 1);
  const rows = JSON.parse(req!.body) as Record<string, string>[];
  t.equal(rows.length, 1, 'only the error whose service is in the file');
  t.equal(rows[0]!.owner, 'team-pay', 'with the field match() added');
  t.equal((await getAlert(url, admin, 'lookups', alert.id)).lastError, null);
});

t.test('webhooks that never answer do not delay other alerts: deliveries have slots of their own', async (t) => {
  const hole = await startBlackhole(t);
  const repo = await createRepo(url, admin, 'isolated');
  await ingestStructured(url, repo.ingestToken, [event({ level: 'ERROR', msg: 'x' })]);
  const q = { queryString: 'level=ERROR', start: '1h' };
  // Two hung alerts, as many as there are evaluation slots (max_concurrent_evaluations = 2): each
  // attempt waits the whole action timeout (20 s), three attempts each. No hung attempt can end,
  // and so free a slot it might hold, before 20 s after this.
  const hungFrom = Date.now();
  const slotFreeAt = hungFrom + 20_000;
  for (const name of ['hung-1', 'hung-2']) {
    const hook = await createWebhook(url, admin, 'isolated', name, `${hole.url}/${name}`);
    await createAlert(url, admin, 'isolated', { name, query: q, throttleTimeMillis: 3_600_000, notifiers: [hook] });
  }
  const deadline = Date.now() + 10_000;
  while (hole.connections() < 2 && Date.now() < deadline) await sleep(50);
  t.equal(hole.connections(), 2, 'both hung deliveries are waiting on the blackhole');

  const hook = await createWebhook(url, admin, 'isolated', 'healthy', `${rx.url}/isolated/healthy`);
  const created = Date.now();
  const healthy = await createAlert(url, admin, 'isolated', { name: 'healthy', query: q, throttleTimeMillis: 0, notifiers: [hook] });
  // Measured against the hung attempts' timeout, not a fixed time: an alert that waited for a slot
  // the hung deliveries hold would fire no sooner than they time out; a busy machine only makes
  // the healthy alert's evaluations come later.
  const calls = await rx.waitFor('/isolated/healthy', 4, Math.max(1, slotFreeAt - Date.now()));
  t.ok(calls[0]!.at < slotFreeAt, `the healthy alert fired ${calls[0]!.at - created} ms after it was created, before any hung attempt could time out (${slotFreeAt - created} ms)`);
  t.ok(calls[3]!.at < slotFreeAt, `and keeps firing every evaluation while the others hang (4th call ${calls[3]!.at - created} ms after it was created)`);
  await restAlert(url, admin, 'isolated', 'PUT', { ...healthy, silenced: true }, healthy.id);
  const hung = (await restAlert(url, admin, 'isolated', 'GET')).json() as Record<string, any>[];
  t.ok(hung.filter((a) => a.name.startsWith('hung')).every((a) => typeof a.timeOfLastTrigger === 'number'), 'the hung alerts did trigger');
});

t.test('an owner who may no longer run the alert is reported; updating the alert takes it over and the error clears without a trigger', async (t) => {
  await createRepo(url, admin, 'owned');
  const hook = await createWebhook(url, admin, 'owned', 'hook', `${rx.url}/owned`);
  const u = await mustGql(url, admin, 'mutation { addUser(input: {username: "former"}) { user { id } } }');
  const a = await createAlert(url, admin, 'owned', { name: 'orphan', query: { queryString: 'nothing=here', start: '1h' }, notifiers: [hook] });
  const own = await restAlert(url, admin, 'owned', 'PUT', { ...a, runAsUserId: u.addUser.user.id, queryOwnershipType: 'User' }, a.id);
  t.equal(own.status, 200, own.text);
  const stuck = await waitForAlert(url, admin, 'owned', a.id, (x) => x.lastError !== null);
  t.match(stuck.lastError, /^not run: the alert's owner "former" is no longer a member of repository "owned"; update the alert \(as a member\) to take it over$/);

  const upd = await restAlert(url, admin, 'owned', 'PUT', { ...a, description: 'taken over' }, a.id);
  t.equal(upd.status, 200, upd.text);
  t.equal(upd.json().runAsUserId, null, 'no longer run as the former owner');
  t.equal(upd.json().queryOwnershipType, 'Organization', 'the local admin takes it over for the organization');
  await sleep(6 * INTERVAL_MS);
  const after = await getAlert(url, admin, 'owned', a.id);
  t.equal(after.lastError, null, 'it runs again; evaluations without rows keep it clean');
  t.equal(after.timeOfLastTrigger, null);
});

t.test('repository action: the ingest token\'s custom parser parses the results, and their timestamp is now', async (t) => {
  const src = await createRepo(url, admin, 'src-custom');
  await createRepo(url, admin, 'sink-custom');
  await mustGql(url, admin, 'mutation($i: CreateParserInputV2!) { createParserV2(input: $i) { id } }', {
    i: { name: 'tagged-json', script: 'parseJson()', repositoryName: 'sink-custom', testCases: [], fieldsToTag: ['code'], fieldsToBeRemovedBeforeParsing: [] },
  });
  const tok = await mustGql(url, admin, 'mutation { addIngestTokenV3(input: {repositoryName: "sink-custom", name: "parsed", parser: "tagged-json"}) { token } }');
  const act = await mustGql(url, admin, 'mutation($t: String!) { createHumioRepoAction(input: {viewName: "src-custom", name: "to-sink", ingestToken: $t}) { id } }', { t: tok.addIngestTokenV3.token });
  const old = Date.now() - 30 * 60_000;
  await ingestStructured(url, src.ingestToken, [{ ...event({ level: 'ERROR', code: 'E7' }), timestamp: old }]);
  const fired = Date.now();
  await createAlert(url, admin, 'src-custom', { name: 'copy', query: { queryString: 'level=ERROR', start: '1h' }, throttleTimeMillis: 3_600_000, notifiers: [act.createHumioRepoAction.id] });

  t.equal(await waitForCount(url, 'sink-custom', admin, 1, 15_000, '@trigger.name="copy"'), 1);
  const [e] = await queryJson(url, 'sink-custom', { queryString: '@trigger.name="copy"', start: '1h' }, { token: admin });
  t.equal(e!['#code'], 'E7', 'tagged by the custom parser (fieldsToTag), not parsed as kv');
  t.equal(e!['#type'], 'tagged-json');
  t.equal(e!.level, 'ERROR');
  t.ok(Number(e!['@timestamp']) >= fired - 1000, `the timestamp is the trigger's now (${Number(e!['@timestamp']) - fired} ms from it), not the row's (${old - fired})`);
});

t.test('a query that starts failing (its lookup file deleted) makes the error visible; it clears once the query runs cleanly again', async (t) => {
  await createRepo(url, admin, 'vanish');
  const hook = await createWebhook(url, admin, 'vanish', 'hook', `${rx.url}/vanish`);
  t.equal((await uploadFile(url, '/api/v1/repositories/vanish/files', admin, 'known.csv', 'service,owner\na,b\n')).status, 200);
  const a = await createAlert(url, admin, 'vanish', { name: 'needs-file', query: { queryString: 'level=ERROR | match(file="known.csv", field=service)', start: '1h' }, notifiers: [hook] });

  t.equal((await api(url, '/api/v1/repositories/vanish/files/known.csv', { token: admin, method: 'DELETE' })).status, 204);
  const failing = await waitForAlert(url, admin, 'vanish', a.id, (x) => x.lastError !== null);
  t.match(failing.lastError, /^the query failed: .*known\.csv/);
  t.type(failing.lastErrorTime, 'number');

  t.equal((await uploadFile(url, '/api/v1/repositories/vanish/files', admin, 'known.csv', 'service,owner\na,b\n')).status, 200);
  const clean = await waitForAlert(url, admin, 'vanish', a.id, (x) => x.lastError === null);
  t.equal(clean.timeOfLastTrigger, null, 'cleared by an evaluation without rows, not by a trigger');
  t.equal(rx.to('/vanish').length, 0);
});
