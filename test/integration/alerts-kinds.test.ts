/**
 * The product's filter alerts and aggregate alerts, through humioctl's own GraphQL operations,
 * evaluated by the alert scheduler of a real node and delivered to a real webhook receiver: a
 * filter alert notifies about each newly ingested matching event once, an aggregate alert about
 * its query's result over the search interval, both throttled, and both kept across a restart.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { startReceiver } from '../helpers/receiver.js';
import { gql } from '../helpers/http.js';
import { createRepo, ingestStructured, mustGql, type KnownEvent } from '../helpers/query.js';
import { createWebhook, sleep } from '../helpers/alerts.js';
import { HUMIOCTL_DOCUMENTS } from '../fixtures/humioctl/documents.js';

t.setTimeout(180_000);

const doc = (operation: string): string => HUMIOCTL_DOCUMENTS.find((x) => x.operation === operation)!.document;
const CONFIG = ['[health]', 'grace_period_seconds = 600', '[alerts]', 'evaluate_interval_ms = 300', 'allow_targets = ["127.0.0.1/32"]', ''].join('\n');

const rx = await startReceiver(t);
let node = await startNode(t, { config: CONFIG });
const repo = await createRepo(node.url, node.adminToken, 'alerting');
const hook = await createWebhook(node.url, node.adminToken, 'alerting', 'hook', `${rx.url}/filter`, { bodyTemplate: '{events_str}' });
const aggHook = await createWebhook(node.url, node.adminToken, 'alerting', 'agg-hook', `${rx.url}/aggregate`, { bodyTemplate: '{event_count} {field:_count}' });

const ev = (raw: string, attributes: Record<string, string>): KnownEvent => ({ timestamp: Date.now(), rawstring: raw, attributes, tags: { host: 'h1' } });

t.test("filter alerts: humioctl's create, list, show; each new matching event notified once", async (t) => {
  await ingestStructured(node.url, repo.ingestToken, [ev('before the alert status=500', { status: '500' })]);
  await sleep(500);
  const created = (
    await mustGql(node.url, node.adminToken, doc('CreateFilterAlert'), {
      SearchDomainName: 'alerting',
      Name: 'errors',
      Description: 'each 500',
      QueryString: 'status=500',
      ActionIdsOrNames: ['hook'],
      Labels: ['ops'],
      Enabled: true,
      ThrottleTimeSeconds: null,
      ThrottleField: null,
      QueryOwnershipType: 'Organization',
    })
  ).createFilterAlert;
  t.match(created, { name: 'errors', description: 'each 500', queryString: 'status=500', actions: [{ name: 'hook' }], labels: ['ops'], enabled: true, throttleTimeSeconds: null, queryOwnership: { id: 'organization' } });
  const listed = (await mustGql(node.url, node.adminToken, doc('ListFilterAlerts'), { SearchDomainName: 'alerting' })).searchDomain.filterAlerts;
  t.strictSame(listed.map((a: { id: string }) => a.id), [created.id]);
  const shown = (await mustGql(node.url, node.adminToken, doc('GetFilterAlertByID'), { SearchDomainName: 'alerting', FilterAlertID: created.id })).searchDomain.filterAlert;
  t.equal(shown.name, 'errors');
  const legacy = (await mustGql(node.url, node.adminToken, '{ searchDomain(name: "alerting") { alerts { id } } }')).searchDomain.alerts;
  t.strictSame(legacy, [], 'filter alerts are not listed as legacy alerts');

  await sleep(1500);
  await ingestStructured(node.url, repo.ingestToken, [ev('first status=500', { status: '500' }), ev('fine status=200', { status: '200' })]);
  const first = await rx.waitFor('/filter', 1, 15_000);
  t.match(first[0]!.body, /first status=500/);
  t.notMatch(first[0]!.body, /before the alert|fine/, 'only events ingested since the alert started, only matching ones');
  await ingestStructured(node.url, repo.ingestToken, [ev('second status=500', { status: '500' })]);
  const two = await rx.waitFor('/filter', 2, 15_000);
  t.match(two[1]!.body, /second status=500/, JSON.stringify(two.map((r) => r.body)));
  t.notMatch(two[1]!.body, /first/, 'an event is notified once');
  await sleep(3000);
  t.equal(rx.to('/filter').length, 2, 'no repeats while nothing new arrives');

  const bad = await gql(node.url, node.adminToken, doc('CreateFilterAlert'), { SearchDomainName: 'alerting', Name: 'x', QueryString: 'status=500', ActionIdsOrNames: ['nope'], Labels: [], Enabled: true, QueryOwnershipType: 'Organization' });
  t.match(bad.errors?.[0]?.message, /actionIdsOrNames/);
  const dup = await gql(node.url, node.adminToken, doc('CreateFilterAlert'), { SearchDomainName: 'alerting', Name: 'errors', QueryString: 'x', ActionIdsOrNames: ['hook'], Labels: [], Enabled: true, QueryOwnershipType: 'Organization' });
  t.match(dup.errors?.[0]?.message, /already exists/);
});

t.test("aggregate alerts: humioctl's create; triggers on the interval's result, throttled", async (t) => {
  const created = (
    await mustGql(node.url, node.adminToken, doc('CreateAggregateAlert'), {
      SearchDomainName: 'alerting',
      Name: 'many-errors',
      QueryString: 'status=500 | count() | _count >= 2',
      SearchIntervalSeconds: 3600,
      ActionIdsOrNames: ['agg-hook'],
      Labels: [],
      Enabled: true,
      ThrottleTimeSeconds: 3600,
      TriggerMode: 'CompleteMode',
      QueryTimestampMode: 'EventTimestamp',
      QueryOwnershipType: 'Organization',
    })
  ).createAggregateAlert;
  t.match(created, { name: 'many-errors', searchIntervalSeconds: 3600, throttleTimeSeconds: 3600, triggerMode: 'CompleteMode', queryTimestampType: 'EventTimestamp', actions: [{ name: 'agg-hook' }] });
  const got = await rx.waitFor('/aggregate', 1, 15_000);
  t.match(got[0]!.body, /^1 3$/, 'one row: the three 500s of the last hour');
  await sleep(2000);
  t.equal(rx.to('/aggregate').length, 1, 'held off for the throttle time');
  const shown = (await mustGql(node.url, node.adminToken, doc('GetAggregateAlertByID'), { SearchDomainName: 'alerting', AggregateAlertID: created.id })).searchDomain.aggregateAlert;
  t.equal(shown.name, 'many-errors');
  const last = (await mustGql(node.url, node.adminToken, 'query($id: String!) { searchDomain(name: "alerting") { aggregateAlert(id: $id) { lastTriggered lastError } } }', { id: created.id })).searchDomain.aggregateAlert;
  t.ok(typeof last.lastTriggered === 'number' && last.lastError === null, `lastTriggered recorded: ${JSON.stringify(last)}`);
  // Over ingest time (alerts-trigger-modes.test.ts runs one); made disabled here, so it stays quiet.
  const ingestTime = (await mustGql(node.url, node.adminToken, doc('CreateAggregateAlert'), { SearchDomainName: 'alerting', Name: 'i', QueryString: 'count()', SearchIntervalSeconds: 60, ActionIdsOrNames: ['agg-hook'], Labels: [], Enabled: false, ThrottleTimeSeconds: 60, TriggerMode: 'ImmediateMode', QueryTimestampMode: 'IngestTimestamp', QueryOwnershipType: 'Organization' })).createAggregateAlert;
  t.match(ingestTime, { queryTimestampType: 'IngestTimestamp', triggerMode: 'ImmediateMode', enabled: false });
  await mustGql(node.url, node.adminToken, doc('DeleteAggregateAlert'), { SearchDomainName: 'alerting', AggregateAlertID: ingestTime.id });
});

t.test('both kinds survive a restart, with their throttle state; deletes take the id', async (t) => {
  t.equal(await node.stop(), 0);
  node = await startNode(t, { dataDir: node.dataDir, config: CONFIG });
  const filters = (await mustGql(node.url, node.adminToken, doc('ListFilterAlerts'), { SearchDomainName: 'alerting' })).searchDomain.filterAlerts;
  const aggs = (await mustGql(node.url, node.adminToken, doc('ListAggregateAlerts'), { SearchDomainName: 'alerting' })).searchDomain.aggregateAlerts;
  t.equal(filters.length, 1);
  t.equal(aggs.length, 1);
  await sleep(2000);
  t.equal(rx.to('/aggregate').length, 1, 'the aggregate alert stays throttled after the restart');
  t.equal(rx.to('/filter').length, 2, 'old events are not notified again after the restart');
  t.equal((await mustGql(node.url, node.adminToken, doc('DeleteFilterAlert'), { SearchDomainName: 'alerting', FilterAlertID: filters[0].id })).deleteFilterAlert, true);
  t.equal((await mustGql(node.url, node.adminToken, doc('DeleteAggregateAlert'), { SearchDomainName: 'alerting', AggregateAlertID: aggs[0].id })).deleteAggregateAlert, true);
  const gone = await gql(node.url, node.adminToken, doc('GetFilterAlertByID'), { SearchDomainName: 'alerting', FilterAlertID: filters[0].id });
  t.match(gone.errors?.[0]?.message, /filter alert .* does not exist/);
  t.equal(await node.stop(), 0);
});
void hook;
void aggHook;
