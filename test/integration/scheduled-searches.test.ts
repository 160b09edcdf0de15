/**
 * Scheduled searches through humioctl's own GraphQL documents (v1 and v2), run by the alert
 * scheduler of a real node on a cron schedule and delivered to a real webhook receiver: each run
 * time is searched once, over its own window; runs missed while the node was down are made up to
 * the backfill limit and no further, none twice (also after kill -9); errors are recorded and shown.
 * Schedules use logsvc's six-field form (seconds first) so a run comes every two seconds.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { startReceiver, type Received } from '../helpers/receiver.js';
import { gql } from '../helpers/http.js';
import { createRepo, ingestStructured, mustGql } from '../helpers/query.js';
import { createWebhook, sleep } from '../helpers/alerts.js';
import { HUMIOCTL_DOCUMENTS } from '../fixtures/humioctl/documents.js';

t.setTimeout(240_000);

const doc = (operation: string): string => HUMIOCTL_DOCUMENTS.find((x) => x.operation === operation)!.document;
const CONFIG = ['[health]', 'grace_period_seconds = 600', '[alerts]', 'evaluate_interval_ms = 300', 'allow_targets = ["127.0.0.1/32"]', ''].join('\n');
const EVERY_2S = '*/2 * * * * *';

/**
 * The window of each delivery: the body template is "{query_start_ms} {query_end_ms} {event_count}";
 * a query's range includes its end, so a window [T - interval, T) ends at T - 1 ms.
 */
const windows = (rs: Received[]): { start: number; end: number; count: number }[] =>
  rs.map((r) => {
    const [start, end, count] = r.body.trim().split(' ').map(Number);
    return { start: start!, end: end! + 1, count: count! };
  });

const rx = await startReceiver(t);
let node = await startNode(t, { config: CONFIG });
const repo = await createRepo(node.url, node.adminToken, 'sched');
await createWebhook(node.url, node.adminToken, 'sched', 'v2-hook', `${rx.url}/v2`, { bodyTemplate: '{query_start_ms} {query_end_ms} {event_count}' });
await createWebhook(node.url, node.adminToken, 'sched', 'v1-hook', `${rx.url}/v1`, { bodyTemplate: '{query_start_ms} {query_end_ms} {event_count}' });
await createWebhook(node.url, node.adminToken, 'sched', 'rows-hook', `${rx.url}/rows`, { bodyTemplate: '{events_str}' });

const v2Vars = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  SearchDomainName: 'sched',
  Name: name,
  Description: 'every two seconds',
  QueryString: 'count()',
  SearchIntervalSeconds: 2,
  SearchIntervalOffsetSeconds: 0,
  MaxWaitTimeSeconds: null,
  Schedule: EVERY_2S,
  TimeZone: 'UTC',
  BackfillLimit: 0,
  Enabled: true,
  ActionIdsOrNames: ['v2-hook'],
  Labels: ['ops'],
  QueryTimestampType: 'EventTimestamp',
  QueryOwnershipType: 'Organization',
  ...extra,
});

t.test("v2: humioctl's create, list; each run time searched once over its own window", async (t) => {
  const created = (await mustGql(node.url, node.adminToken, doc('CreateScheduledSearchV2'), v2Vars('counter'))).createScheduledSearchV2;
  t.match(created, { name: 'counter', schedule: EVERY_2S, timeZone: 'UTC', searchIntervalSeconds: 2, searchIntervalOffsetSeconds: 0, backfillLimitV2: 0, enabled: true, actionsV2: [{ name: 'v2-hook' }], labels: ['ops'], queryTimestampType: 'EventTimestamp', queryOwnership: { id: 'organization' } });
  const listed = (await mustGql(node.url, node.adminToken, doc('ListScheduledSearchesV2'), { SearchDomainName: 'sched' })).searchDomain.scheduledSearches;
  t.strictSame(listed.map((s: { id: string }) => s.id), [created.id]);
  const alerts = (await mustGql(node.url, node.adminToken, '{ searchDomain(name: "sched") { alerts { id } aggregateAlerts { id } } }')).searchDomain;
  t.strictSame(alerts, { alerts: [], aggregateAlerts: [] }, 'a scheduled search is no alert of another kind');

  const got = windows(await rx.waitFor('/v2', 4, 30_000));
  for (const w of got) {
    t.equal(w.end - w.start, 2000, 'the window is the search interval');
    t.equal(w.end % 2000, 0, 'it ends at a run time of the schedule');
  }
  // With no backfill, a machine so busy that the scheduler falls a whole run behind skips runs
  // (by design), and then says so in its log: a gap only there; never a run time repeated.
  const gaps = got.slice(1).map((w, i) => w.end - got[i]!.end);
  t.ok(gaps.every((g) => g > 0 && g % 2000 === 0), `runs in order on the 2 s grid, no run time repeated: ${gaps.join(',')}`);
  if (gaps.some((g) => g !== 2000)) t.match(node.stderr(), /runs missed past its backfill limit are skipped/, `a gap (${gaps.join(',')}) only where the log says runs were skipped`);
  const shown = (await mustGql(node.url, node.adminToken, 'query($id: String!) { searchDomain(name: "sched") { scheduledSearch(id: $id) { lastExecuted lastTriggered lastScheduledSearch timeOfNextPlannedExecution lastError } } }', { id: created.id })).searchDomain.scheduledSearch;
  t.ok(shown.lastExecuted >= got.at(-1)!.end && shown.lastExecuted % 2000 === 0, `lastExecuted is a run time: ${JSON.stringify(shown)}`);
  t.ok(shown.timeOfNextPlannedExecution > shown.lastExecuted, 'the next run is planned after the last');
  t.equal(shown.lastError, null);
  t.equal((await mustGql(node.url, node.adminToken, doc('DeleteScheduledSearchV2ByID'), { SearchDomainName: 'sched', ScheduledSearchID: created.id })).deleteScheduledSearch, true);
  // A run under way at the delete may still deliver (late on a busy machine): count once none has
  // come for 1 s; then a fixed wait longer than the 2 s schedule proves that no further run comes.
  await rx.quiet(['/v2'], 1000);
  const n = rx.to('/v2').length;
  await sleep(2500);
  t.equal(rx.to('/v2').length, n, 'a deleted scheduled search runs no more');
});

t.test('the results of a run reach its actions; bad input is refused naming the field', async (t) => {
  const now = Date.now();
  await ingestStructured(node.url, repo.ingestToken, [
    { timestamp: now, rawstring: 'late event status=500', attributes: { status: '500' }, tags: { host: 'a' } },
    { timestamp: now - 3 * 3600_000, rawstring: 'old event status=500', attributes: { status: '500' }, tags: { host: 'a' } },
  ]);
  const created = (
    await mustGql(node.url, node.adminToken, doc('CreateScheduledSearch'), {
      SearchDomainName: 'sched',
      Name: 'errors',
      Description: null,
      QueryString: 'status=500',
      QueryStart: '1h',
      QueryEnd: 'now',
      Schedule: EVERY_2S,
      TimeZone: 'UTC+01:00',
      BackfillLimit: 0,
      Enabled: true,
      ActionIdsOrNames: ['rows-hook'],
      RunAsUserID: null,
      Labels: [],
      QueryOwnershipType: 'Organization',
    })
  ).createScheduledSearch;
  t.match(created, { start: '1h', end: 'now', timeZone: 'UTC+01:00', backfillLimit: 0 });
  const [first] = await rx.waitFor('/rows', 1, 20_000);
  t.match(first!.body, /late event/);
  t.notMatch(first!.body, /old event/, 'only the run\'s window is searched');
  await mustGql(node.url, node.adminToken, doc('DeleteScheduledSearchByID'), { SearchDomainName: 'sched', ScheduledSearchID: created.id });

  const bad = async (vars: Record<string, unknown>): Promise<string> => (await gql(node.url, node.adminToken, doc('CreateScheduledSearchV2'), v2Vars('bad', vars))).errors?.[0]?.message ?? '';
  t.match(await bad({ Schedule: '61 * * * *' }), /schedule: .*not a cron expression/);
  t.match(await bad({ Schedule: '* * *' }), /schedule: .*3 fields/);
  t.match(await bad({ TimeZone: 'Mars/Olympus' }), /timeZone: .*not a time zone/);
  t.match(await bad({ SearchIntervalSeconds: 0 }), /searchIntervalSeconds/);
  t.match(await bad({ BackfillLimit: -1 }), /backfillLimit/);
  t.match(await bad({ ActionIdsOrNames: ['nope'] }), /actionIdsOrNames/);
  t.match(await bad({ QueryString: 'count(' }), /queryString|query/i);
  const ingestTime = await gql(node.url, node.adminToken, doc('CreateScheduledSearchV2'), v2Vars('i', { QueryTimestampType: 'IngestTimestamp', SearchIntervalOffsetSeconds: 5 }));
  t.match(ingestTime.errors?.[0], { message: /searchIntervalOffsetSeconds: only goes with queryTimestampType EventTimestamp/, extensions: { code: 'E_VALIDATION' } });
});

t.test('a failing run is recorded and its error shown; an update fixes it', async (t) => {
  const created = (await mustGql(node.url, node.adminToken, doc('CreateScheduledSearchV2'), v2Vars('failing', { QueryString: 'count()', ActionIdsOrNames: ['v2-hook'] }))).createScheduledSearchV2;
  // An action whose receiver fails: the run is made once, its error shown.
  rx.answer('/v2', { status: 400 }, { status: 400 }, { status: 400 }, { status: 400 }, { status: 400 }, { status: 400 });
  const q = 'query($id: String!) { searchDomain(name: "sched") { scheduledSearch(id: $id) { lastError lastExecuted } } }';
  let shown: { lastError: string | null; lastExecuted: number | null } = { lastError: null, lastExecuted: null };
  for (let i = 0; i < 100 && shown.lastError === null; i++) {
    await sleep(200);
    shown = (await mustGql(node.url, node.adminToken, q, { id: created.id })).searchDomain.scheduledSearch;
  }
  t.match(shown.lastError, /action "v2-hook" \(webhook\) failed/);
  const updated = (
    await mustGql(
      node.url,
      node.adminToken,
      `mutation($id: String!) { updateScheduledSearchV2(input: { viewName: "sched", id: $id, name: "fixed", queryString: "count()", schedule: "*/2 * * * * *",
        timeZone: "UTC", searchIntervalSeconds: 4, queryTimestampType: EventTimestamp, enabled: false, actionIdsOrNames: ["v2-hook"], labels: [], queryOwnershipType: Organization }) { name searchIntervalSeconds enabled lastError timeOfNextPlannedExecution } }`,
      { id: created.id },
    )
  ).updateScheduledSearchV2;
  t.match(updated, { name: 'fixed', searchIntervalSeconds: 4, enabled: false, lastError: null, timeOfNextPlannedExecution: null });
  await mustGql(node.url, node.adminToken, doc('DeleteScheduledSearchV2ByID'), { SearchDomainName: 'sched', ScheduledSearchID: created.id });
});

t.test('runs missed while the node was down (kill -9) are made up to the backfill limit, none twice', async (t) => {
  const created = (await mustGql(node.url, node.adminToken, doc('CreateScheduledSearchV2'), v2Vars('backfill', { BackfillLimit: 2, ActionIdsOrNames: ['v1-hook'] }))).createScheduledSearchV2;
  await rx.waitFor('/v1', 2, 20_000);
  await node.kill();
  const killedAt = Date.now();
  const before = windows(rx.to('/v1'));
  await sleep(12_000);
  node = await startNode(t, { dataDir: node.dataDir, config: CONFIG });
  const readyAt = Date.now();
  // Three runs after the restart (made up and new), however busy the machine (a bound, not a speed).
  await rx.waitFor('/v1', before.length + 3, 60_000).catch(() => undefined);
  const after = windows(rx.to('/v1')).slice(before.length);
  const ends = windows(rx.to('/v1')).map((w) => w.end);
  t.equal(new Set(ends).size, ends.length, `no run time delivered twice: ${ends.join(',')}`);
  const lastBefore = before.at(-1)!.end;
  t.ok(after.length >= 3, 'runs resume after the restart');
  t.ok(after[0]!.end > lastBefore + 2000, `older missed runs were skipped (last before ${lastBefore}, first after ${after[0]!.end}, killed at ${killedAt})`);
  // The first run made up is at most the backfill limit (2) before the run due at the restart.
  t.ok(after[0]!.end > readyAt - 3 * 2000 - 500, `nothing older than the backfill limit was made up (first ${after[0]!.end}, ready at ${readyAt})`);
  t.ok(after[0]!.end < readyAt, 'runs missed while down were made up');
  // Made-up and new runs follow one another, 2 s apart; a machine so busy that the scheduler falls
  // more than the backfill limit behind skips runs, and then says so in its log.
  const gaps = after.slice(1).map((w, i) => w.end - after[i]!.end);
  t.ok(gaps.every((g) => g > 0 && g % 2000 === 0), `runs in order on the 2 s grid: ${gaps.join(',')}`);
  if (gaps.some((g) => g !== 2000)) t.match(node.stderr(), /runs missed past its backfill limit are skipped/, `a gap (${gaps.join(',')}) only where the log says runs were skipped`);
  await mustGql(node.url, node.adminToken, doc('DeleteScheduledSearchV2ByID'), { SearchDomainName: 'sched', ScheduledSearchID: created.id });
  t.equal(await node.stop(), 0);
});
