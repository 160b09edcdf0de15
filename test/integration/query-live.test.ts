/**
 * Live queries of a real node (api-facts §1.2–1.4): a live filter query on `/query` streams its
 * historical part and then every new matching event as it is digested, as chunked NDJSON, until the
 * client leaves (the node keeps serving and frees the stream); live aggregates are refused on
 * `/query` and served by live query jobs, whose polls answer a fresh full result; a live query needs
 * a relative start and an end of now.
 */
import t, { type Test } from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import {
  countOf,
  createJob,
  createRepo,
  deleteJob,
  ingestStructured,
  openNdjsonStream,
  pollOnce,
  pollUntilDone,
  postQuery,
  sleep,
  waitForCount,
  type JobPoll,
  type KnownEvent,
  type NdjsonStream,
} from '../helpers/query.js';

t.setTimeout(240_000);

/** Two live streams at most (query.max_concurrent), so that freeing a stream can be observed. */
const MAX_STREAMS = 2;
const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 2', 'worker_threads = 1', '[query]', `max_concurrent = ${MAX_STREAMS}`, ''].join('\n');

const node = await startNode(t, { config: CONFIG });
const repo = await createRepo(node.url, node.adminToken, 'live');
const token = node.adminToken;

let seq = 0;
/** An event tagged `kind` (the live query matches kind=match), stamped `agoMs` before now. */
function ev(kind: 'match' | 'other', agoMs = 0): KnownEvent {
  const n = seq++;
  return { timestamp: Date.now() - agoMs, rawstring: `live-${n} kind=${kind}`, attributes: { kind, n: String(n) }, tags: { host: 'live-host' } };
}

const LIVE_BODY = { queryString: 'kind=match', isLive: true, start: '1m' };

function isError(t: Test, status: number, text: string, contentType: string | null, expected: number, what: string, mention?: RegExp): void {
  t.equal(status, expected, `${what}: ${expected} (got ${status}: ${text.trim().slice(0, 300)})`);
  t.match(contentType, /^text\/plain/, `${what}: text/plain`);
  if (mention !== undefined) t.match(text, mention, `${what}: names ${mention}`);
}

/** Reads until every raw string in `want` arrived or `ms` passed; returns everything read. */
async function readUntil(s: NdjsonStream, want: string[], ms: number): Promise<Record<string, any>[]> {
  const got: Record<string, any>[] = [];
  const missing = new Set(want);
  const deadline = Date.now() + ms;
  while (missing.size > 0 && Date.now() < deadline) {
    const e = await s.next(deadline - Date.now());
    if (e === null) break;
    got.push(e);
    missing.delete(e['@rawstring']);
  }
  return got;
}

t.test('a live filter query streams new matching events as NDJSON', async (t) => {
  // Before the stream: one match inside the 1-minute window, one outside it, one non-match.
  const pre = ev('match', 20_000);
  const tooOld = ev('match', 2 * 60 * 60_000);
  const preOther = ev('other', 10_000);
  await ingestStructured(node.url, repo.ingestToken, [pre, tooOld, preOther]);
  if ((await waitForCount(node.url, 'live', token, 3, undefined, '')) !== 3) t.fail('the first events did not become searchable');

  const s = await openNdjsonStream(node.url, 'live', token, LIVE_BODY, 60_000);
  t.teardown(() => s.close());
  t.equal(s.status, 200, 'live /query: 200');
  t.match(s.headers.get('content-type'), /^application\/x-ndjson/, 'live /query: application/x-ndjson');
  t.ok((s.headers.get('humio-query-id') ?? '') !== '', 'live /query: humio-query-id header');

  const historical = await readUntil(s, [pre.rawstring], 30_000);
  t.same(
    historical.map((e) => e['@rawstring']),
    [pre.rawstring],
    'the historical part: the matching event of the last minute only (not the 2-hour-old one, not the non-match)',
  );
  t.equal(s.ended, false, 'the stream stays open after the historical part');

  // New events after the stream started: matches and non-matches in one request, then another.
  const m1 = ev('match');
  const o1 = ev('other');
  const m2 = ev('match');
  const o2 = ev('other');
  const staleMatch = ev('match', 3 * 60 * 60_000);
  const sentAt = Date.now();
  await ingestStructured(node.url, repo.ingestToken, [o1, m1, o2, m2, staleMatch]);
  const m3 = ev('match');
  const o3 = ev('other');
  await ingestStructured(node.url, repo.ingestToken, [m3, o3]);
  const live = await readUntil(s, [m1.rawstring, m2.rawstring, m3.rawstring], 20_000);
  const took = Date.now() - sentAt;
  const rest = await s.collectFor(1_500);
  const all = [...live, ...rest];
  t.same(
    all.map((e) => e['@rawstring']).sort(),
    [m1.rawstring, m2.rawstring, m3.rawstring].sort(),
    'exactly the three new matching events arrive on the stream (no non-match, no out-of-window event, none twice)',
  );
  t.ok(took < 20_000, `they arrive within seconds (${took} ms)`);
  const i1 = all.findIndex((e) => e['@rawstring'] === m1.rawstring);
  const i2 = all.findIndex((e) => e['@rawstring'] === m2.rawstring);
  t.ok(i1 !== -1 && i1 < i2, 'events of one request arrive in their order');
  for (const e of all) {
    t.equal(typeof e['@timestamp'], 'number', `${e['@rawstring']}: @timestamp is a number`);
    const nonString = Object.entries(e).filter(([k, v]) => k !== '@timestamp' && typeof v !== 'string');
    t.same(nonString, [], `${e['@rawstring']}: every other value is a string`);
    t.equal(e['#repo'], 'live', `${e['@rawstring']}: #repo is the repository name`);
    t.equal(e['#host'], 'live-host', `${e['@rawstring']}: #host tag`);
    t.equal(e.kind, 'match', `${e['@rawstring']}: kind field`);
    t.match(e['@id'], /^\S+$/, `${e['@rawstring']}: @id`);
  }
  const m1Row = all.find((e) => e['@rawstring'] === m1.rawstring);
  t.equal(m1Row?.['@timestamp'], m1.timestamp, 'the streamed event carries its own @timestamp');
  t.equal(s.partial, '', 'nothing half-written: every chunk ends at a line end');

  // The same events are found by a static query afterwards, with the same @ids.
  const stat = await postQuery(node.url, 'live', { queryString: 'kind=match', start: '1m' }, { token, format: 'json' });
  const statRows = stat.json() as Record<string, any>[];
  const statIds = new Map(statRows.map((r) => [r['@rawstring'], r['@id']] as const));
  t.same(
    all.map((e) => e['@id']),
    all.map((e) => statIds.get(e['@rawstring'])),
    'a static query afterwards returns the streamed events with the same @ids',
  );

  await s.close();
  const after = await postQuery(node.url, 'live', { queryString: 'count()' }, { token, format: 'json' });
  t.equal(after.status, 200, 'the node keeps serving after the client left');
  t.equal(after.text, `[{"_count":"${seq}"}]`, `count() sees all ${seq} events`);
});

t.test('closing live streams frees them on the server', async (t) => {
  const open: NdjsonStream[] = [];
  t.teardown(async () => {
    for (const s of open) await s.close();
  });
  for (let i = 0; i < MAX_STREAMS; i++) {
    const s = await openNdjsonStream(node.url, 'live', token, LIVE_BODY, 60_000);
    open.push(s);
    t.equal(s.status, 200, `stream ${i + 1} of ${MAX_STREAMS}: 200`);
  }
  const extra = await openNdjsonStream(node.url, 'live', token, LIVE_BODY, 10_000);
  t.equal(extra.status, 429, `stream ${MAX_STREAMS + 1} while ${MAX_STREAMS} are open: 429 (query.max_concurrent)`);
  if (extra.status !== 200) await extra.errorText();
  else open.push(extra);

  // Both readers see a new event, then leave.
  const m = ev('match');
  await ingestStructured(node.url, repo.ingestToken, [m]);
  for (const [i, s] of open.slice(0, MAX_STREAMS).entries()) {
    const got = await readUntil(s, [m.rawstring], 30_000);
    t.ok(
      got.some((e) => e['@rawstring'] === m.rawstring),
      `stream ${i + 1} received the new event`,
    );
  }
  for (const s of open) await s.close();
  open.length = 0;

  // The server noticed: new streams are accepted again (bounded wait for the disconnects).
  const deadline = Date.now() + 10_000;
  let reopened: NdjsonStream[] = [];
  let statuses: number[] = [];
  while (Date.now() < deadline) {
    reopened = [];
    for (let i = 0; i < MAX_STREAMS; i++) reopened.push(await openNdjsonStream(node.url, 'live', token, LIVE_BODY, 30_000));
    statuses = reopened.map((s) => s.status);
    if (statuses.every((st) => st === 200)) break;
    for (const s of reopened) await s.close();
    await sleep(250);
  }
  open.push(...reopened);
  t.same(statuses, Array(MAX_STREAMS).fill(200), `after closing, ${MAX_STREAMS} new streams are accepted`);
  const m2 = ev('match');
  await ingestStructured(node.url, repo.ingestToken, [m2]);
  const got = await readUntil(reopened[0]!, [m2.rawstring], 30_000);
  t.ok(got.some((e) => e['@rawstring'] === m2.rawstring), 'a reopened stream streams');
});

t.test('live requests that are refused', async (t) => {
  const agg = await postQuery(node.url, 'live', { queryString: 'count()', isLive: true, start: '1m' }, { token, format: 'ndjson' });
  isError(t, agg.status, agg.text, agg.headers.get('content-type'), 400, 'a live aggregate on /query');
  const agg2 = await postQuery(node.url, 'live', { queryString: 'kind=match | groupBy(kind)', isLive: true }, { token, format: 'json' });
  isError(t, agg2.status, agg2.text, agg2.headers.get('content-type'), 400, 'a live groupBy on /query');

  const abs = await postQuery(node.url, 'live', { queryString: 'kind=match', isLive: true, start: Date.now() - 60_000 }, { token, format: 'ndjson' });
  isError(t, abs.status, abs.text, abs.headers.get('content-type'), 400, 'isLive with an absolute start on /query', /start/);
  const absJob = await createJob(node.url, 'live', token, { queryString: 'count()', isLive: true, start: Date.now() - 60_000 });
  isError(t, absJob.status, absJob.text, absJob.headers.get('content-type'), 400, 'isLive with an absolute start on /queryjobs', /start/);
  const endJob = await createJob(node.url, 'live', token, { queryString: 'count()', isLive: true, start: '1h', end: '5m' });
  isError(t, endJob.status, endJob.text, endJob.headers.get('content-type'), 400, 'isLive with a relative end other than now', /end/);
  const badQ = await postQuery(node.url, 'live', { queryString: 'cuont()', isLive: true, start: '1m' }, { token, format: 'ndjson' });
  isError(t, badQ.status, badQ.text, badQ.headers.get('content-type'), 400, 'a live query with a bad query string');
  t.match(badQ.text, /```/, 'a live query with a bad query string: a fenced block');

  const nowEnd = await openNdjsonStream(node.url, 'live', token, { ...LIVE_BODY, end: 'now' }, 10_000);
  t.equal(nowEnd.status, 200, 'isLive with end "now": 200');
  await nowEnd.close();
  const noStart = await openNdjsonStream(node.url, 'live', token, { queryString: 'kind=match', isLive: true }, 10_000);
  t.equal(noStart.status, 200, 'isLive without start (24 hours): 200');
  await noStart.close();

  const ingestTok = await openNdjsonStream(node.url, 'live', repo.ingestToken, LIVE_BODY, 10_000);
  t.equal(ingestTok.status, 403, 'a live query with an ingest token: 403');
  await ingestTok.errorText();
});

t.test('a live count() query job grows with new events', async (t) => {
  const already = await countOf(node.url, 'live', token, '', { start: '1h' });
  const created = await createJob(node.url, 'live', token, { queryString: 'count()', isLive: true, start: '1h' });
  t.equal(created.status, 200, 'create a live job: 200');
  const id = created.json().id as string;
  t.teardown(() => deleteJob(node.url, 'live', token, id).then(() => undefined));
  const first = (await pollUntilDone(node.url, 'live', token, id, { timeoutMs: 15_000 })).at(-1)!;
  t.equal(first.done, true, 'a live job answers done:true once its first result is complete');
  t.equal(first.metaData.isAggregate, true, 'isAggregate true');
  t.same(first.events, [{ _count: String(already) }], `the first result counts the ${already} events of the last hour`);
  t.equal(first.metaData.queryEnd - first.metaData.queryStart, 60 * 60_000, 'a 1-hour window');

  const more = [ev('other'), ev('match'), ev('other'), ev('match'), ev('other')];
  await ingestStructured(node.url, repo.ingestToken, more);
  const deadline = Date.now() + 30_000;
  let last: JobPoll | null = null;
  const seen: string[] = [];
  while (Date.now() < deadline) {
    const res = await pollOnce(node.url, 'live', token, id);
    if (res.status !== 200) {
      t.fail(`live poll: ${res.status} ${res.text}`);
      break;
    }
    last = res.json() as JobPoll;
    seen.push(String(last.events[0]?._count));
    if (last.events[0]?._count === String(already + more.length)) break;
    await sleep(Math.min(Math.max(last.metaData.pollAfter ?? 200, 50), 1000));
  }
  t.equal(last?.done, true, 'later polls: done:true');
  t.same(last?.events, [{ _count: String(already + more.length) }], `the count grows by ${more.length} (seen ${seen.join(', ')})`);
  t.ok(
    seen.every((c, i) => i === 0 || Number(c) >= Number(seen[i - 1])),
    'the count never goes down between polls',
  );
  t.ok(last !== null && last.metaData.queryEnd >= first.metaData.queryEnd, 'the window moved forward');

  const del = await deleteJob(node.url, 'live', token, id);
  t.equal(del.status, 204, 'DELETE a live job: 204');
  t.equal((await pollOnce(node.url, 'live', token, id)).status, 404, 'then 404');
});

t.test('a live filter query job answers the matching events', async (t) => {
  const created = await createJob(node.url, 'live', token, { queryString: 'kind=match', isLive: true, start: '1m' });
  t.equal(created.status, 200, 'create: 200');
  const id = created.json().id as string;
  t.teardown(() => deleteJob(node.url, 'live', token, id).then(() => undefined));
  await pollUntilDone(node.url, 'live', token, id, { timeoutMs: 30_000 });
  const m = ev('match');
  await ingestStructured(node.url, repo.ingestToken, [m, ev('other')]);
  const deadline = Date.now() + 30_000;
  let found = false;
  let last: JobPoll | null = null;
  while (!found && Date.now() < deadline) {
    const res = await pollOnce(node.url, 'live', token, id);
    if (res.status !== 200) break;
    last = res.json() as JobPoll;
    found = last.events.some((e) => e['@rawstring'] === m.rawstring);
    if (!found) await sleep(300);
  }
  t.ok(found, 'a new matching event shows up in a later poll');
  t.equal(last?.metaData.isAggregate, false, 'isAggregate false');
  t.equal(last?.metaData.extraData?.hasMoreEvents, 'false', 'hasMoreEvents "false"');
  t.equal(last?.events.filter((e) => e.kind !== 'match').length, 0, 'only matching events');
});

t.test('stopping the node ends open live streams', async (t) => {
  const s = await openNdjsonStream(node.url, 'live', token, LIVE_BODY, 30_000);
  t.equal(s.status, 200, 'a live stream is open');
  await s.collectFor(300);
  const code = await node.stop();
  t.equal(code, 0, 'SIGTERM with a live stream open: a clean exit');
  const deadline = Date.now() + 5_000;
  while (!s.ended && Date.now() < deadline) await s.next(200);
  t.equal(s.ended, true, 'the stream ended');
  await s.close();
  const refused = await api(node.url, '/api/v1/status', { timeoutMs: 2_000 }).then(
    (r) => r.status,
    () => -1,
  );
  t.equal(refused, -1, 'the node is gone');
});
