/**
 * What the product's schema documents for aggregate alerts and scheduled searches, on a real node
 * with a real webhook receiver: `triggerMode` (CompleteMode waits for a complete result;
 * ImmediateMode triggers on an incomplete one at once) and `queryTimestampType: IngestTimestamp`
 * (the search interval is over @ingesttimestamp: events that arrive late, with old timestamps, are
 * seen when they arrive, and consecutive scheduled runs count each event exactly once).
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { startReceiver } from '../helpers/receiver.js';
import { createRepo, ingestStructured, mustGql, type KnownEvent } from '../helpers/query.js';
import { createWebhook, sleep } from '../helpers/alerts.js';
import { HUMIOCTL_DOCUMENTS } from '../fixtures/humioctl/documents.js';

t.setTimeout(240_000);

const doc = (operation: string): string => HUMIOCTL_DOCUMENTS.find((x) => x.operation === operation)!.document;
const CONFIG = ['[health]', 'grace_period_seconds = 600', '[alerts]', 'evaluate_interval_ms = 300', 'allow_targets = ["127.0.0.1/32"]', ''].join('\n');

const rx = await startReceiver(t);
const node = await startNode(t, { config: CONFIG });
const admin = node.adminToken;
const repo = await createRepo(node.url, admin, 'modes');
await createWebhook(node.url, admin, 'modes', 'complete', `${rx.url}/complete`, { bodyTemplate: '{event_count} warnings={warnings}' });
await createWebhook(node.url, admin, 'modes', 'immediate', `${rx.url}/immediate`, { bodyTemplate: '{event_count} warnings={warnings}' });
await createWebhook(node.url, admin, 'modes', 'ingest', `${rx.url}/ingest`, { bodyTemplate: '{field:_count}' });
await createWebhook(node.url, admin, 'modes', 'event', `${rx.url}/event`, { bodyTemplate: '{field:_count}' });
await createWebhook(node.url, admin, 'modes', 'sched', `${rx.url}/sched`, { bodyTemplate: '{field:_count}' });

const ev = (raw: string, ageMs: number, host: string): KnownEvent => ({ timestamp: Date.now() - ageMs, rawstring: raw, attributes: { host }, tags: { src: 'modes' } });

const aggregate = (name: string, query: string, action: string, extra: Record<string, unknown>) => ({
  SearchDomainName: 'modes',
  Name: name,
  QueryString: query,
  SearchIntervalSeconds: 3600,
  ActionIdsOrNames: [action],
  Labels: [],
  Enabled: true,
  ThrottleTimeSeconds: 3600,
  TriggerMode: 'CompleteMode',
  QueryTimestampMode: 'EventTimestamp',
  QueryOwnershipType: 'Organization',
  ...extra,
});

t.test('triggerMode: an incomplete result triggers an ImmediateMode alert at once, a CompleteMode one waits', async (t) => {
  await ingestStructured(node.url, repo.ingestToken, [ev('a', 60_000, 'h1'), ev('b', 60_000, 'h2'), ev('c', 60_000, 'h3')]);
  // collect() with limit=1 over three hosts: one row, with a warning that values were left out.
  const query = 'collect(host, limit=1)';
  const complete = (await mustGql(node.url, admin, doc('CreateAggregateAlert'), aggregate('complete', query, 'complete', {}))).createAggregateAlert;
  t.equal(complete.triggerMode, 'CompleteMode');
  const immediate = (await mustGql(node.url, admin, doc('CreateAggregateAlert'), aggregate('immediate', query, 'immediate', { TriggerMode: 'ImmediateMode' }))).createAggregateAlert;
  t.equal(immediate.triggerMode, 'ImmediateMode');
  const got = await rx.waitFor('/immediate', 1, 20_000);
  t.match(got[0]!.body, /^1 warnings=collect: more than 1 distinct values/, 'ImmediateMode triggered on the incomplete result, its warning in the notification');
  let lastError: string | null = null;
  for (let i = 0; i < 100 && lastError === null; i++) {
    await sleep(200);
    lastError = (await mustGql(node.url, admin, 'query($id: String!) { searchDomain(name: "modes") { aggregateAlert(id: $id) { lastError } } }', { id: complete.id })).searchDomain.aggregateAlert.lastError;
  }
  t.match(lastError, /not triggered because the query produced warnings \(an incomplete result\).*CompleteMode the alert waits up to 20 minutes/);
  t.equal(rx.to('/complete').length, 0, 'CompleteMode has not triggered');
  // A complete result triggers a CompleteMode alert as usual.
  const whole = (await mustGql(node.url, admin, doc('CreateAggregateAlert'), aggregate('whole', 'collect(host)', 'complete', {}))).createAggregateAlert;
  t.match((await rx.waitFor('/complete', 1, 20_000))[0]!.body, /^1 warnings=$/, 'a complete result triggers without warnings');
  for (const a of [complete, immediate, whole]) await mustGql(node.url, admin, doc('DeleteAggregateAlert'), { SearchDomainName: 'modes', AggregateAlertID: a.id });
});

t.test('IngestTimestamp: an aggregate alert sees late events (old timestamps) when they arrive', async (t) => {
  await ingestStructured(node.url, repo.ingestToken, [ev('early late-arrival', 30 * 60_000, 'x')]);
  await sleep(6000);
  const vars = { SearchIntervalSeconds: 5, ThrottleTimeSeconds: 0 };
  const byIngest = (await mustGql(node.url, admin, doc('CreateAggregateAlert'), aggregate('by-ingest', 'host=y | count() | _count > 0', 'ingest', { ...vars, QueryTimestampMode: 'IngestTimestamp' }))).createAggregateAlert;
  t.equal(byIngest.queryTimestampType, 'IngestTimestamp');
  const shown = (await mustGql(node.url, admin, doc('GetAggregateAlertByID'), { SearchDomainName: 'modes', AggregateAlertID: byIngest.id })).searchDomain.aggregateAlert;
  t.equal(shown.queryTimestampType, 'IngestTimestamp', 'shown as stored');
  const byEvent = (await mustGql(node.url, admin, doc('CreateAggregateAlert'), aggregate('by-event', 'host=y | count() | _count > 0', 'event', vars))).createAggregateAlert;
  await sleep(1500);
  t.equal(rx.to('/ingest').length, 0, 'nothing ingested in the interval yet');
  // Three events stamped half an hour ago arrive now.
  await ingestStructured(node.url, repo.ingestToken, [ev('late 1', 30 * 60_000, 'y'), ev('late 2', 31 * 60_000, 'y'), ev('late 3', 32 * 60_000, 'y')]);
  const got = await rx.waitFor('/ingest', 1, 20_000);
  t.equal(got[0]!.body, '3', 'the ingest-time alert counts the three late events');
  await sleep(2000);
  t.equal(rx.to('/event').length, 0, 'an event-time alert with the same 5 s interval never sees them');
  for (const a of [byIngest, byEvent]) await mustGql(node.url, admin, doc('DeleteAggregateAlert'), { SearchDomainName: 'modes', AggregateAlertID: a.id });
});

t.test('IngestTimestamp: consecutive runs of a scheduled search count each arriving event once', async (t) => {
  const created = (
    await mustGql(node.url, admin, doc('CreateScheduledSearchV2'), {
      SearchDomainName: 'modes',
      Name: 'arrivals',
      QueryString: 'host=z | count()',
      SearchIntervalSeconds: 2,
      SearchIntervalOffsetSeconds: null,
      MaxWaitTimeSeconds: null,
      Schedule: '*/2 * * * * *',
      TimeZone: 'UTC',
      // Room to catch up: a loaded machine can fall a run or more behind, and with no backfill
      // the scheduler skips those runs (by design, with a warning), losing their events here.
      BackfillLimit: 10,
      Enabled: true,
      ActionIdsOrNames: ['sched'],
      Labels: [],
      QueryTimestampType: 'IngestTimestamp',
      QueryOwnershipType: 'Organization',
    })
  ).createScheduledSearchV2;
  t.equal(created.queryTimestampType, 'IngestTimestamp');
  await rx.waitFor('/sched', 1, 20_000);
  const startAt = rx.to('/sched').length;
  let sent = 0;
  for (let i = 0; i < 6; i++) {
    const n = 1 + (i % 3);
    await ingestStructured(node.url, repo.ingestToken, Array.from({ length: n }, (_, j) => ev(`arrival ${i}.${j}`, (10 + i) * 60_000, 'z')));
    sent += n;
    await sleep(700);
  }
  // Runs go on every 2 s: wait (however busy the machine) until the runs have counted every event
  // sent, then for two runs more, whose windows would count an event again if one were counted twice.
  const counted = (): number => rx.to('/sched').slice(startAt).reduce((a, r) => a + Number(r.body), 0);
  const deadline = Date.now() + 60_000;
  while (counted() < sent && Date.now() < deadline) await sleep(200);
  await rx.waitFor('/sched', rx.to('/sched').length + 2, 30_000);
  const counts = rx.to('/sched').slice(startAt).map((r) => Number(r.body));
  t.equal(counts.reduce((a, b) => a + b, 0), sent, `the runs' counts (${counts.join(' ')}) add up to the ${sent} events sent, old timestamps and all: no event counted twice or missed`);
  t.ok(counts.filter((c) => c > 0).length >= 2, 'spread over several runs');
  const bad = await mustGql(node.url, admin, '{ searchDomain(name: "modes") { scheduledSearches { name queryTimestampType backfillLimitV2 } } }');
  t.match(bad.searchDomain.scheduledSearches, [{ name: 'arrivals', queryTimestampType: 'IngestTimestamp' }]);
  await mustGql(node.url, admin, doc('DeleteScheduledSearchV2ByID'), { SearchDomainName: 'modes', ScheduledSearchID: created.id });
});
