/**
 * Alerts and scheduled searches of a view, on a real node, delivered to a real webhook receiver:
 * created by a member of the view who belongs to none of its repositories, they search the view's
 * connections each through its filter, as their owner's search of the view would; they stop (with
 * a lastError that says why) when the owner loses access to the view, and go with the view.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { startReceiver } from '../helpers/receiver.js';
import { createUser, gql } from '../helpers/http.js';
import { createRepo, ingestStructured, mustGql, type KnownEvent } from '../helpers/query.js';
import { createWebhook, sleep } from '../helpers/alerts.js';
import { HUMIOCTL_DOCUMENTS } from '../fixtures/humioctl/documents.js';

t.setTimeout(240_000);

const doc = (operation: string): string => HUMIOCTL_DOCUMENTS.find((x) => x.operation === operation)!.document;
const CONFIG = ['[health]', 'grace_period_seconds = 600', '[alerts]', 'evaluate_interval_ms = 300', 'allow_targets = ["127.0.0.1/32"]', ''].join('\n');

const rx = await startReceiver(t);
const node = await startNode(t, { config: CONFIG });
const admin = node.adminToken;
const web = await createRepo(node.url, admin, 'web');
const db = await createRepo(node.url, admin, 'db');
const ev = (raw: string, attributes: Record<string, string>, ageMs = 0): KnownEvent => ({ timestamp: Date.now() - ageMs, rawstring: raw, attributes, tags: { host: 'h1' } });
// Already there: 3 web 500s, 4 web 200s, 2 db events.
await ingestStructured(node.url, web.ingestToken, [
  ...[1, 2, 3].map((i) => ev(`old web error ${i}`, { status: '500' }, 60_000)),
  ...[1, 2, 3, 4].map((i) => ev(`old web ok ${i}`, { status: '200' }, 60_000)),
]);
await ingestStructured(node.url, db.ingestToken, [ev('old db slow 1', { kind: 'slow' }, 60_000), ev('old db slow 2', { kind: 'slow' }, 60_000)]);
await mustGql(node.url, admin, 'mutation { createView(name: "ops", connections: [{repositoryName: "web", filter: "status=500 // errors only"}, {repositoryName: "db", filter: "*"}]) { name } }');
const vera = await createUser(node.url, admin, 'vera');
await mustGql(node.url, admin, 'mutation { addMember(searchDomainName: "ops", username: "vera") { clientMutationId } }');
await createWebhook(node.url, vera.token, 'ops', 'agg-hook', `${rx.url}/aggregate`, { bodyTemplate: '{event_count} {field:_count}' });
await createWebhook(node.url, vera.token, 'ops', 'filter-hook', `${rx.url}/filter`, { bodyTemplate: '{events_str}' });
await createWebhook(node.url, vera.token, 'ops', 'sched-hook', `${rx.url}/sched`, { bodyTemplate: '{event_count} {field:_count}' });

t.test('the view\'s actions belong to the view', async (t) => {
  const actions = (await mustGql(node.url, vera.token, '{ searchDomain(name: "ops") { actions { name } } }')).searchDomain.actions.map((a: { name: string }) => a.name);
  t.strictSame(actions, ['agg-hook', 'filter-hook', 'sched-hook']);
  t.strictSame((await mustGql(node.url, admin, '{ searchDomain(name: "web") { actions { name } } }')).searchDomain.actions, [], 'not the repository\'s');
  const outsider = await createUser(node.url, admin, 'olga');
  const refused = await gql(node.url, outsider.token, doc('CreateFilterAlert'), { SearchDomainName: 'ops', Name: 'x', QueryString: '*', ActionIdsOrNames: ['filter-hook'], Labels: [], Enabled: true, QueryOwnershipType: 'User' });
  t.match(refused.errors?.[0]?.message, /view "ops" does not exist or you have no access to it/, 'a user outside the view can neither see nor add its alerts');
});

let aggId = '';

t.test('an aggregate alert of the view searches the connections through their filters, as its owner', async (t) => {
  const created = (
    await mustGql(node.url, vera.token, doc('CreateAggregateAlert'), {
      SearchDomainName: 'ops',
      Name: 'view-count',
      QueryString: 'count()',
      SearchIntervalSeconds: 3600,
      ActionIdsOrNames: ['agg-hook'],
      Labels: [],
      Enabled: true,
      ThrottleTimeSeconds: 3600,
      TriggerMode: 'CompleteMode',
      QueryTimestampMode: 'EventTimestamp',
      QueryOwnershipType: 'User',
    })
  ).createAggregateAlert;
  aggId = created.id;
  t.match(created, { name: 'view-count', queryOwnership: { id: vera.id } });
  const got = await rx.waitFor('/aggregate', 1, 20_000);
  t.equal(got[0]!.body, '1 5', 'one row: the 3 web errors (the 200s filtered out) and the 2 db events');
  const listed = (await mustGql(node.url, vera.token, doc('ListAggregateAlerts'), { SearchDomainName: 'ops' })).searchDomain.aggregateAlerts.map((a: { name: string }) => a.name);
  t.strictSame(listed, ['view-count']);
  t.strictSame((await mustGql(node.url, admin, doc('ListAggregateAlerts'), { SearchDomainName: 'web' })).searchDomain.aggregateAlerts, [], 'the repository has none');
});

t.test('a filter alert of the view notifies each new event its connections let through, once', async (t) => {
  await mustGql(node.url, vera.token, doc('CreateFilterAlert'), { SearchDomainName: 'ops', Name: 'each', QueryString: '*', ActionIdsOrNames: ['filter-hook'], Labels: [], Enabled: true, ThrottleTimeSeconds: null, ThrottleField: null, QueryOwnershipType: 'User' });
  await sleep(1500);
  await ingestStructured(node.url, web.ingestToken, [ev('new web error', { status: '500' }), ev('new web ok', { status: '200' })]);
  await ingestStructured(node.url, db.ingestToken, [ev('new db slow', { kind: 'slow' })]);
  const deadline = Date.now() + 20_000;
  let bodies = '';
  while (Date.now() < deadline) {
    bodies = rx.to('/filter').map((r) => r.body).join('\n');
    if (bodies.includes('new web error') && bodies.includes('new db slow')) break;
    await sleep(200);
  }
  t.match(bodies, /new web error/, 'a web event the connection lets through');
  t.match(bodies, /new db slow/, 'a db event');
  t.notMatch(bodies, /new web ok/, 'not a web event the connection filters out');
  t.notMatch(bodies, /old /, 'not events from before the alert');
  const n = rx.to('/filter').length;
  await sleep(2500);
  t.equal(rx.to('/filter').length, n, 'nothing notified twice');
});

t.test('a scheduled search of the view runs over the connections', async (t) => {
  const created = (
    await mustGql(node.url, vera.token, doc('CreateScheduledSearchV2'), {
      SearchDomainName: 'ops',
      Name: 'sched',
      QueryString: 'count()',
      SearchIntervalSeconds: 3600,
      SearchIntervalOffsetSeconds: 0,
      MaxWaitTimeSeconds: null,
      Schedule: '*/2 * * * * *',
      TimeZone: 'UTC',
      BackfillLimit: 0,
      Enabled: true,
      ActionIdsOrNames: ['sched-hook'],
      Labels: [],
      QueryTimestampType: 'EventTimestamp',
      QueryOwnershipType: 'User',
    })
  ).createScheduledSearchV2;
  const got = await rx.waitFor('/sched', 1, 20_000);
  t.equal(got[0]!.body, '1 7', 'the 4 web errors and the 3 db events of the last hour');
  await mustGql(node.url, vera.token, doc('DeleteScheduledSearchV2ByID'), { SearchDomainName: 'ops', ScheduledSearchID: created.id });
});

t.test("the owner's access decides: out of the view, the alert does not run and says why", async (t) => {
  await mustGql(node.url, admin, 'mutation { removeMember(searchDomainName: "ops", username: "vera") { clientMutationId } }');
  const deadline = Date.now() + 20_000;
  let lastError: string | null = null;
  while (Date.now() < deadline) {
    lastError = (await mustGql(node.url, admin, 'query($id: String!) { searchDomain(name: "ops") { filterAlerts { name lastError } aggregateAlert(id: $id) { lastError } } }', { id: aggId })).searchDomain.filterAlerts[0].lastError;
    if (lastError !== null) break;
    await sleep(300);
  }
  t.match(lastError, /the alert's owner "vera" is no longer a member of view "ops"/);
  const before = rx.to('/filter').length;
  await ingestStructured(node.url, web.ingestToken, [ev('after removal', { status: '500' })]);
  await sleep(3000);
  t.equal(rx.to('/filter').length, before, 'nothing is notified for an owner without access');
});

t.test('deleting the view deletes its alerts and actions', async (t) => {
  await mustGql(node.url, admin, 'mutation { deleteSearchDomain(name: "ops") { __typename } }');
  await mustGql(node.url, admin, 'mutation { createView(name: "ops", connections: [{repositoryName: "db", filter: "*"}]) { name } }');
  const d = (await mustGql(node.url, admin, '{ searchDomain(name: "ops") { actions { name } filterAlerts { name } aggregateAlerts { name } } }')).searchDomain;
  t.strictSame(d, { actions: [], filterAlerts: [], aggregateAlerts: [] }, 'a new view of the same name starts empty');
});
