/**
 * The REST query API of a real node (api-facts §1): `POST .../query` in its three output formats,
 * both path spellings, every matching event streamed (no implicit tail(200) on /query), aggregates (count, groupBy, timechart), time ranges,
 * errors and access; query jobs (create, poll to done, metaData, delete, ownership); and exactly
 * once across storage: the same answer from memory, from segments after a graceful restart, from
 * both together, and after a SIGKILL and replay.
 *
 * The data is known exactly: 300 structured events one minute apart (the newest 5.5 minutes old),
 * with attributes {status, ms, user} and tag {host}; kv-parsed unstructured events in a second
 * repository.
 */
import t, { type Test } from 'tap';
import { startNode, tempDir, type TestNode } from '../helpers/node-process.js';
import { api, createUser, type ApiResponse } from '../helpers/http.js';
import { readAllEvents, segmentFiles } from '../helpers/segments.js';
import {
  addMember,
  countOf,
  createJob,
  createRepo,
  deleteJob,
  ingestStructured,
  ingestUnstructured,
  METADATA_INTEGER_KEYS,
  METADATA_KEYS,
  parseNdjson,
  pollOnce,
  pollUntilDone,
  postQuery,
  queryJson,
  runJob,
  sleep,
  until,
  waitForCount,
  type JobPoll,
  type KnownEvent,
} from '../helpers/query.js';

t.setTimeout(300_000);

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 2', 'worker_threads = 1', ''].join('\n');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SPAN = 15 * MINUTE;

const node = await startNode(t, { config: CONFIG });
const web = await createRepo(node.url, node.adminToken, 'web');
const kvRepo = await createRepo(node.url, node.adminToken, 'kvlogs');
const member = await createUser(node.url, node.adminToken, 'member');
const member2 = await createUser(node.url, node.adminToken, 'member2');
const outsider = await createUser(node.url, node.adminToken, 'outsider');
await addMember(node.url, node.adminToken, 'web', 'member');
await addMember(node.url, node.adminToken, 'web', 'member2');
await addMember(node.url, node.adminToken, 'kvlogs', 'member');

// --- the known events ----------------------------------------------------------------------------------

/** Newest event: 5.5 minutes before the test started; then one per minute, back about 5 hours. */
const T0 = Math.floor(Date.now() / 1000) * 1000 - 5 * MINUTE - 30_000;
const N = 300;
const statusOf = (i: number): string => (i % 10 === 0 ? '500' : i % 3 === 0 ? '404' : '200');
/** EVENTS[i] is the i-th newest. */
const EVENTS: KnownEvent[] = Array.from({ length: N }, (_, i) => {
  const status = statusOf(i);
  const user = `user-${i % 7}`;
  const ms = i * 3;
  return {
    timestamp: T0 - i * MINUTE,
    rawstring: `ev=${i} status=${status} user=${user} ms=${ms}`,
    // ms is a JSON number on the way in: it must come back as a string.
    attributes: { status, ms, user },
    tags: { host: i % 2 === 0 ? 'web-1' : 'web-2' },
  };
});
const byRaw = new Map(EVENTS.map((e) => [e.rawstring, e] as const));
// Sent in shuffled batches, so storage order is not time order.
{
  const order = EVENTS.map((e, i) => ({ e, k: (i * 7919) % N }));
  order.sort((a, b) => a.k - b.k);
  await ingestStructured(node.url, web.ingestToken, order.map((o) => o.e), 70);
}
if ((await waitForCount(node.url, 'web', node.adminToken, N)) !== N) throw new Error(`the ${N} ingested events did not all become searchable`);

/** kv-parsed lines, each with its own leading ISO timestamp. */
const KV_T0 = T0 - 30_000;
const KV_LINES = Array.from({ length: 5 }, (_, j) => `${new Date(KV_T0 - j * 1000).toISOString()} level=warn user=alice n=${j} msg="hello world ${j}"`);
await ingestUnstructured(node.url, kvRepo.ingestToken, KV_LINES, { tags: { host: 'kv-host' } });

// --- checks ------------------------------------------------------------------------------------------

/** Every value a string except @timestamp, a number; the built-ins present. */
function checkShape(t: Test, row: Record<string, unknown>, what: string): void {
  for (const [k, v] of Object.entries(row)) {
    if (k === '@timestamp') t.equal(typeof v, 'number', `${what}: @timestamp is a JSON number`);
    else if (typeof v !== 'string') t.fail(`${what}: ${k} is a ${typeof v} (${JSON.stringify(v)}), not a string`);
  }
  for (const k of ['@id', '@timestamp', '@rawstring', '@timezone', '#repo']) t.ok(k in row, `${what}: has ${k}`);
}

/** A returned event against the event sent. */
function checkEvent(t: Test, row: Record<string, any>, expected: KnownEvent | undefined, what: string): void {
  checkShape(t, row, what);
  if (expected === undefined) {
    t.fail(`${what}: not an event that was sent: ${JSON.stringify(row)}`);
    return;
  }
  t.same(
    { ts: row['@timestamp'], raw: row['@rawstring'], tz: row['@timezone'], repo: row['#repo'], host: row['#host'], status: row.status, ms: row.ms, user: row.user },
    {
      ts: expected.timestamp,
      raw: expected.rawstring,
      tz: 'Z',
      repo: 'web',
      host: expected.tags.host,
      status: expected.attributes.status,
      ms: String(expected.attributes.ms),
      user: expected.attributes.user,
    },
    `${what}: fields as sent`,
  );
  t.match(row['@id'], /^\S+$/, `${what}: @id is a non-empty token`);
}

/** Rows are exactly `expected` (by raw string), in that order, with distinct @ids. */
function checkEventList(t: Test, rows: Record<string, any>[], expected: KnownEvent[], what: string): void {
  t.same(
    rows.map((r) => r['@rawstring']),
    expected.map((e) => e.rawstring),
    `${what}: exactly the expected ${expected.length} events, newest first`,
  );
  t.equal(new Set(rows.map((r) => r['@id'])).size, rows.length, `${what}: distinct @ids`);
  let bad = 0;
  rows.forEach((r) => {
    const e = byRaw.get(r['@rawstring']);
    if (e === undefined || r['@timestamp'] !== e.timestamp || r.status !== e.attributes.status || r.ms !== String(e.attributes.ms) || r['#host'] !== e.tags.host || r['#repo'] !== 'web') bad++;
  });
  t.equal(bad, 0, `${what}: every row carries the fields it was sent with`);
}

/** Events with start <= ts <= end, newest first. */
const inRange = (start: number, end: number): KnownEvent[] => EVENTS.filter((e) => e.timestamp >= start && e.timestamp <= end);

function isError(t: Test, res: ApiResponse, status: number, what: string, mention?: RegExp): void {
  t.equal(res.status, status, `${what}: ${status} (got ${res.status}: ${res.text.trim().slice(0, 300)})`);
  t.match(res.headers.get('content-type'), /^text\/plain/, `${what}: text/plain`);
  if (mention !== undefined) t.match(res.text, mention, `${what}: the message names ${mention}`);
}

const asAdmin = { token: node.adminToken };

// --- /query ------------------------------------------------------------------------------------------

t.test('output formats of /query', async (t) => {
  // /query streams every matching event (api-facts §1.3), newest first when the answer is small.
  const all = EVENTS;

  const text = await postQuery(node.url, 'web', { queryString: '' }, asAdmin);
  t.equal(text.status, 200, 'no Accept: 200');
  t.match(text.headers.get('content-type'), /^text\/plain/, 'no Accept: text/plain');
  t.ok(text.text.endsWith('\n'), 'text: every line ends with a newline');
  t.same(text.text.split('\n').slice(0, -1), all.map((e) => e.rawstring), 'text: one @rawstring per line, all 300, newest first');
  t.ok((text.headers.get('humio-query-id') ?? '') !== '', `text: humio-query-id header (${text.headers.get('humio-query-id')})`);

  const star = await postQuery(node.url, 'web', { queryString: 'status=500' }, { ...asAdmin, accept: '*/*' });
  t.equal(star.status, 200, 'Accept */*: 200');
  t.match(star.headers.get('content-type'), /^text\/plain/, 'Accept */*: text/plain');
  t.same(star.text.split('\n').slice(0, -1), EVENTS.filter((e) => e.attributes.status === '500').map((e) => e.rawstring), 'Accept */*: the 30 status=500 lines, newest first');

  const json = await postQuery(node.url, 'web', { queryString: '' }, { ...asAdmin, format: 'json' });
  t.equal(json.status, 200, 'json: 200');
  t.match(json.headers.get('content-type'), /^application\/json/, 'json: application/json');
  t.ok((json.headers.get('humio-query-id') ?? '') !== '', 'json: humio-query-id header');
  const rows = json.json();
  t.ok(Array.isArray(rows), 'json: an array');
  t.equal(rows.length, 300, 'json: every event, not the 200 of the implicit tail()');
  t.equal(json.headers.get('warning'), null, 'json: nothing was cut, no Warning');
  checkEventList(t, rows, all, 'json ""');
  rows.slice(0, 3).forEach((r: Record<string, any>, i: number) => checkEvent(t, r, EVENTS[i], `json row ${i}`));
  let badShape = 0;
  for (const r of rows) {
    if (typeof r['@timestamp'] !== 'number') badShape++;
    for (const [k, v] of Object.entries(r)) if (k !== '@timestamp' && typeof v !== 'string') badShape++;
    for (const k of ['@id', '@timestamp', '@rawstring', '@timezone', '#repo', '#host', 'status', 'ms', 'user']) if (!(k in r)) badShape++;
  }
  t.equal(badShape, 0, 'json: every row has the built-ins, #host and the fields; strings except @timestamp');

  const nd = await postQuery(node.url, 'web', { queryString: '' }, { ...asAdmin, format: 'ndjson' });
  t.equal(nd.status, 200, 'ndjson: 200');
  t.match(nd.headers.get('content-type'), /^application\/x-ndjson/, 'ndjson: application/x-ndjson');
  t.ok((nd.headers.get('humio-query-id') ?? '') !== '', 'ndjson: humio-query-id header');
  t.ok(nd.text.endsWith('\n'), 'ndjson: a trailing newline after the last line');
  const ndRows = parseNdjson(nd.text);
  t.equal(ndRows.length, 300, 'ndjson: one object per line, 300 lines');
  t.same(ndRows, rows, 'ndjson: the same events as the JSON array');

  const ids = new Set([json.headers.get('humio-query-id'), nd.headers.get('humio-query-id'), text.headers.get('humio-query-id')]);
  t.equal(ids.size, 3, 'each query gets its own humio-query-id');

  const ds = await postQuery(node.url, 'web', { queryString: '' }, { ...asAdmin, format: 'json', prefix: 'dataspaces' });
  t.equal(ds.status, 200, '/dataspaces/ spelling: 200');
  t.same(ds.json(), rows, '/dataspaces/ spelling: the same answer');

  const empty = await postQuery(node.url, 'web', { queryString: 'status=999' }, { ...asAdmin, format: 'json' });
  t.equal(empty.status, 200, 'no match: 200');
  t.same(empty.json(), [], 'no match, json: []');
  const emptyNd = await postQuery(node.url, 'web', { queryString: 'status=999' }, { ...asAdmin, format: 'ndjson' });
  t.equal(emptyNd.text, '', 'no match, ndjson: empty body');

  const named = await postQuery(node.url, 'web', { queryString: 'count()' }, { ...asAdmin, format: 'json', headers: { 'x-desired-filename': 'export.json' } });
  t.equal(named.status, 200, 'X-Desired-Filename: 200');
  t.equal(named.headers.get('content-disposition'), 'attachment; filename="export.json"', 'X-Desired-Filename -> Content-Disposition');
  t.equal(json.headers.get('content-disposition'), null, 'no X-Desired-Filename: no Content-Disposition');
});

t.test('events of kv-parsed unstructured ingest', async (t) => {
  const rows = await queryJson(node.url, 'kvlogs', { queryString: '' }, asAdmin);
  t.equal(rows.length, KV_LINES.length, 'every line is an event');
  t.same(
    rows.map((r) => r['@rawstring']),
    KV_LINES,
    'the raw lines, newest first (the leading timestamps are one second apart)',
  );
  rows.forEach((r, j) => {
    checkShape(t, r, `kv row ${j}`);
    t.same(
      { ts: r['@timestamp'], type: r['#type'], repo: r['#repo'], host: r['#host'], level: r.level, user: r.user, n: r.n, msg: r.msg },
      { ts: KV_T0 - j * 1000, type: 'kv', repo: 'kvlogs', host: 'kv-host', level: 'warn', user: 'alice', n: String(j), msg: `hello world ${j}` },
      `kv row ${j}: @timestamp from the line, #type kv, #repo, tag and parsed fields`,
    );
  });
  t.same(await queryJson(node.url, 'kvlogs', { queryString: 'n=3 | count()' }, asAdmin), [{ _count: '1' }], 'a field the kv parser extracted can be searched');
  t.same(await queryJson(node.url, 'kvlogs', { queryString: '#type=kv | count()' }, asAdmin), [{ _count: '5' }], '#type=kv');
  t.same(await queryJson(node.url, 'web', { queryString: 'level=warn | count()' }, asAdmin), [{ _count: '0' }], 'events of another repository are not seen');
});

t.test('aggregates', async (t) => {
  const count = await postQuery(node.url, 'web', { queryString: 'count()' }, { ...asAdmin, format: 'json' });
  t.equal(count.status, 200, 'count(): 200');
  t.equal(count.text, '[{"_count":"300"}]', 'count(): [{"_count":"300"}] (a string value)');
  t.same(await queryJson(node.url, 'web', { queryString: 'status=500 | count()' }, asAdmin), [{ _count: '30' }], 'status=500 | count()');
  const countNd = await postQuery(node.url, 'web', { queryString: 'count()' }, { ...asAdmin, format: 'ndjson' });
  t.equal(countNd.text, '{"_count":"300"}\n', 'count() as NDJSON: one line and a newline');
  const countText = await postQuery(node.url, 'web', { queryString: 'count()' }, asAdmin);
  t.equal(countText.text, '_count->300\n', 'count() as text: name->value (no @rawstring)');

  const groups = await queryJson(node.url, 'web', { queryString: 'groupBy(status)' }, asAdmin);
  const expectedGroups = ['200', '404', '500'].map((s) => ({ status: s, _count: String(EVENTS.filter((e) => e.attributes.status === s).length) }));
  t.same(
    [...groups].sort((a, b) => String(a.status).localeCompare(String(b.status))),
    expectedGroups,
    `groupBy(status): ${JSON.stringify(expectedGroups)}`,
  );
  const hostUsers = await queryJson(node.url, 'web', { queryString: 'status=404 | groupBy(#host)' }, asAdmin);
  const expectHost = ['web-1', 'web-2'].map((h) => ({ '#host': h, _count: String(EVENTS.filter((e) => e.attributes.status === '404' && e.tags.host === h).length) }));
  t.same([...hostUsers].sort((a, b) => String(a['#host']).localeCompare(String(b['#host']))), expectHost, 'status=404 | groupBy(#host)');

  const before = Date.now();
  const chart = await postQuery(node.url, 'web', { queryString: 'timechart()' }, { ...asAdmin, format: 'json' });
  const after = Date.now();
  t.equal(chart.status, 200, 'timechart(): 200');
  const buckets = chart.json() as Record<string, any>[];
  t.equal(buckets.length, 97, 'timechart() over the default 24 hours: 97 rows');
  let badRow = 0;
  for (const b of buckets) if (typeof b._bucket !== 'string' || typeof b._count !== 'string' || !/^\d+$/.test(b._bucket) || !/^\d+$/.test(b._count)) badRow++;
  t.equal(badRow, 0, 'every row has _bucket and _count as decimal strings');
  const starts = buckets.map((b) => Number(b._bucket)).sort((a, b) => a - b);
  t.equal(starts.filter((s) => s % SPAN !== 0).length, 0, '_bucket values are aligned to 15 minutes');
  t.ok(
    starts.every((s, i) => i === 0 || s - starts[i - 1]! === SPAN),
    '97 consecutive buckets, 15 minutes apart',
  );
  const lastOk = [Math.floor(before / SPAN) * SPAN, Math.floor(after / SPAN) * SPAN];
  t.ok(lastOk.includes(starts.at(-1)!), `the last bucket is the one holding now (${starts.at(-1)} in ${lastOk.join('/')})`);
  t.equal(starts[0], starts.at(-1)! - 96 * SPAN, 'the first bucket holds now - 24h');
  const sum = buckets.reduce((n, b) => n + Number(b._count), 0);
  t.equal(sum, N, `the _counts sum to the ${N} events`);
  const expected = new Map<number, number>();
  for (const e of EVENTS) {
    const b = Math.floor(e.timestamp / SPAN) * SPAN;
    expected.set(b, (expected.get(b) ?? 0) + 1);
  }
  let wrong = 0;
  for (const b of buckets) if (Number(b._count) !== (expected.get(Number(b._bucket)) ?? 0)) wrong++;
  t.equal(wrong, 0, 'each bucket counts exactly the events in it (empty buckets "0")');
});

t.test('time ranges: relative, epoch milliseconds, mixed; edges inclusive', async (t) => {
  /** Runs `body` and compares with the events in range at the moment the server could have resolved it. */
  const check = async (body: Record<string, unknown>, range: (now: number) => [number, number], what: string): Promise<void> => {
    const before = Date.now();
    const rows = await queryJson(node.url, 'web', { queryString: '', ...body }, asAdmin);
    const after = Date.now();
    const [s1, e1] = range(before);
    const [s2, e2] = range(after);
    const a = inRange(s1, e1);
    const b = inRange(s2, e2);
    const expected = a;
    if (a.map((e) => e.rawstring).join() !== b.map((e) => e.rawstring).join()) {
      // The clock crossed an event boundary while the query ran: accept either answer.
      const got = rows.map((r) => r['@rawstring']).join();
      t.ok(got === a.map((e) => e.rawstring).join() || got === b.map((e) => e.rawstring).join(), `${what}: one of the two possible answers`);
      return;
    }
    checkEventList(t, rows, expected, what);
  };

  await check({ start: '1h' }, (now) => [now - HOUR, now], 'start "1h"');
  await check({ start: '90 minutes' }, (now) => [now - 90 * MINUTE, now], 'start "90 minutes"');
  await check({ start: '2h', end: '1h' }, (now) => [now - 2 * HOUR, now - HOUR], 'start "2h", end "1h"');
  await check({ start: '3hours', end: 'now' }, (now) => [now - 3 * HOUR, now], 'start "3hours", end "now"');
  await check({ start: '1d' }, (now) => [now - DAY, now], 'start "1d"');

  const ts = (i: number): number => EVENTS[i]!.timestamp;
  const exact = async (body: Record<string, unknown>, expected: KnownEvent[], what: string): Promise<void> => {
    checkEventList(t, await queryJson(node.url, 'web', { queryString: '', ...body }, asAdmin), expected, what);
  };
  await exact({ start: ts(20), end: ts(10) }, EVENTS.slice(10, 21), 'epoch ms: both edges inclusive (11 events)');
  await exact({ start: ts(20) + 1, end: ts(10) - 1 }, EVENTS.slice(11, 20), 'epoch ms just inside the edges: 9 events');
  await exact({ start: ts(5), end: ts(5) }, [EVENTS[5]!], 'start = end = an event timestamp: that event');
  await exact({ start: ts(5) + 1, end: ts(4) - 1 }, [], 'between two events: none');
  t.same(
    await queryJson(node.url, 'web', { queryString: 'count()', start: ts(299), end: ts(0) }, asAdmin),
    [{ _count: '300' }],
    'count() over [oldest, newest]: 300',
  );
  t.same(
    await queryJson(node.url, 'web', { queryString: 'status=500 | count()', start: ts(99), end: ts(0) }, asAdmin),
    [{ _count: String(EVENTS.slice(0, 100).filter((e) => e.attributes.status === '500').length) }],
    'a filter and an epoch range together',
  );
  // Absolute start, relative end (allowed by the docs).
  await check({ start: ts(250), end: '2h' }, (now) => [ts(250), now - 2 * HOUR], 'absolute start, relative end');
  // timechart with a 15-minute span over an explicit range: buckets from floor(start) to floor(end).
  // (Without span= the span is automatic and depends on the range.)
  const start = ts(100);
  const end = ts(0);
  const chart = await queryJson(node.url, 'web', { queryString: 'timechart(span=15m)', start, end }, asAdmin);
  const first = Math.floor(start / SPAN) * SPAN;
  const last = Math.floor(end / SPAN) * SPAN;
  t.same(
    chart.map((b) => Number(b._bucket)).sort((a, b) => a - b),
    Array.from({ length: (last - first) / SPAN + 1 }, (_, i) => first + i * SPAN),
    'timechart over [start, end]: buckets floor(start)..floor(end), inclusive',
  );
  t.equal(chart.reduce((n, b) => n + Number(b._count), 0), 101, 'timechart over [start, end]: 101 events');
});

t.test('errors and access on /query', async (t) => {
  for (const q of ['count(', 'cuont()', 'status=500 | groupBy()']) {
    const res = await postQuery(node.url, 'web', { queryString: q }, { ...asAdmin, format: 'json' });
    isError(t, res, 400, `bad query ${JSON.stringify(q)}`);
    t.match(res.text, /```/, `bad query ${JSON.stringify(q)}: the body holds a fenced block`);
    t.ok(res.text.trim().length > 10, `bad query ${JSON.stringify(q)}: a human message (${JSON.stringify(res.text.slice(0, 120))})`);
  }
  const rel = await postQuery(node.url, 'web', { queryString: 'cuont()' }, { ...asAdmin, prefix: 'dataspaces' });
  isError(t, rel, 400, 'bad query on /dataspaces/');

  isError(t, await postQuery(node.url, 'web', {}, asAdmin), 400, 'queryString missing', /queryString/);
  isError(t, await postQuery(node.url, 'web', { queryString: 5 }, asAdmin), 400, 'queryString a number', /queryString/);
  isError(t, await postQuery(node.url, 'web', { queryString: '', start: 'banana' }, asAdmin), 400, 'start "banana"', /start/);
  isError(t, await postQuery(node.url, 'web', { queryString: '', end: 'soon' }, asAdmin), 400, 'end "soon"', /end/);
  isError(t, await postQuery(node.url, 'web', { queryString: '', start: { at: 1 } }, asAdmin), 400, 'start an object', /start/);
  isError(t, await postQuery(node.url, 'web', { queryString: '', timeZoneOffsetMinutes: 'x' }, asAdmin), 400, 'timeZoneOffsetMinutes "x"', /timeZoneOffsetMinutes/);
  isError(t, await postQuery(node.url, 'web', { queryString: '', isLive: 'yes' }, asAdmin), 400, 'isLive "yes"', /isLive/);
  isError(t, await postQuery(node.url, 'web', '{"queryString": ', asAdmin), 400, 'malformed JSON');
  isError(t, await postQuery(node.url, 'web', '[]', asAdmin), 400, 'a JSON array body');

  isError(t, await postQuery(node.url, 'no-such-repo', { queryString: '' }, asAdmin), 404, 'unknown repository');
  isError(t, await postQuery(node.url, 'no-such-repo', { queryString: '' }, { ...asAdmin, prefix: 'dataspaces' }), 404, 'unknown repository (/dataspaces/)');

  const noToken = await api(node.url, '/api/v1/repositories/web/query', { body: JSON.stringify({ queryString: '' }) });
  isError(t, noToken, 401, 'no token');
  t.equal(noToken.text.includes('ev='), false, 'no token: no events in the answer');
  isError(t, await postQuery(node.url, 'web', { queryString: '' }, { token: 'not-a-real-token-0123456789' }), 401, 'an unknown token');
  // src/auth/authenticate.ts: an ingest token on an API route is E_FORBIDDEN (403).
  const ingest = await postQuery(node.url, 'web', { queryString: '' }, { token: web.ingestToken });
  isError(t, ingest, 403, "the repository's own ingest token");
  t.notOk(ingest.text.includes(web.ingestToken), 'the ingest token is not echoed');
  isError(t, await postQuery(node.url, 'web', { queryString: '' }, { token: kvRepo.ingestToken }), 403, "another repository's ingest token");

  const out = await postQuery(node.url, 'web', { queryString: '' }, { token: outsider.token, format: 'json' });
  isError(t, out, 404, 'a user who is not a member');
  t.notOk(out.text.includes('ev='), 'non-member: no events in the answer');
  isError(t, await postQuery(node.url, 'kvlogs', { queryString: '' }, { token: member2.token }), 404, 'member of another repository only');

  const asMember = await postQuery(node.url, 'web', { queryString: 'count()' }, { token: member.token, format: 'json' });
  t.equal(asMember.status, 200, 'a member: 200');
  t.equal(asMember.text, '[{"_count":"300"}]', 'a member sees every event');
  const asMemberDs = await postQuery(node.url, 'web', { queryString: 'count()' }, { token: member.token, format: 'json', prefix: 'dataspaces' });
  t.equal(asMemberDs.text, '[{"_count":"300"}]', 'a member, /dataspaces/ spelling');
});

// --- query jobs --------------------------------------------------------------------------------------

/** The metaData of a finished poll: every key of api-facts §1.4, with its type. */
function checkMetaData(t: Test, poll: JobPoll, what: string): void {
  const m = poll.metaData;
  t.ok(m !== null && typeof m === 'object', `${what}: metaData is an object`);
  t.same(
    METADATA_KEYS.filter((k) => !(k in m)),
    [],
    `${what}: every metaData key of api-facts §1.4 is present`,
  );
  const notUint = METADATA_INTEGER_KEYS.filter((k) => !(Number.isSafeInteger(m[k]) && m[k] >= 0)).map((k) => `${k}=${JSON.stringify(m[k])}`);
  t.same(notUint, [], `${what}: ${METADATA_INTEGER_KEYS.join(', ')} are non-negative integers`);
  t.equal(typeof m.isAggregate, 'boolean', `${what}: isAggregate is a boolean`);
  t.ok(Array.isArray(m.warnings), `${what}: warnings is an array`);
  t.same(m.warnings, [], `${what}: no warnings`);
  t.ok(m.extraData !== null && typeof m.extraData === 'object' && !Array.isArray(m.extraData), `${what}: extraData is an object`);
  t.equal(Object.values(m.extraData ?? {}).filter((v) => typeof v !== 'string').length, 0, `${what}: extraData values are strings`);
  t.ok(m.filterQuery !== null && typeof m.filterQuery === 'object', `${what}: filterQuery is an object`);
  t.equal(typeof m.filterQuery?.queryString, 'string', `${what}: filterQuery.queryString`);
  t.equal(m.filterQuery?.start, m.queryStart, `${what}: filterQuery.start = queryStart`);
  t.equal(m.filterQuery?.end, m.queryEnd, `${what}: filterQuery.end = queryEnd`);
  t.equal(m.eventCount, poll.events.length, `${what}: eventCount = events.length`);
  t.ok(m.totalWork >= 1, `${what}: totalWork >= 1`);
  t.equal(m.workDone, m.totalWork, `${what}: done: workDone = totalWork`);
  t.equal(poll.cancelled, false, `${what}: cancelled false`);
  t.equal(poll.done, true, `${what}: done true`);
}

t.test('query jobs: create, poll to done, metaData', async (t) => {
  const created = await createJob(node.url, 'web', node.adminToken, { queryString: '' });
  t.equal(created.status, 200, 'create: 200');
  t.match(created.headers.get('content-type'), /^application\/json/, 'create: application/json');
  const body = created.json();
  t.same(Object.keys(body).sort(), ['id', 'queryOnView'], 'create: {id, queryOnView}');
  t.match(body.id, /^[A-Za-z0-9_-]+$/, `create: an id (${body.id})`);
  t.equal(body.queryOnView, '*', 'create: queryOnView "*" for an empty query string');

  const polls = await pollUntilDone(node.url, 'web', node.adminToken, body.id);
  for (const p of polls) {
    t.same(Object.keys(p).sort(), ['cancelled', 'done', 'events', 'metaData'], 'poll: {cancelled, done, events, metaData}');
    if (!p.done) t.equal(p.metaData.pollAfter >= 0, true, 'a running poll says when to come back');
  }
  const final = polls.at(-1)!;
  checkMetaData(t, final, 'filter job ""');
  t.equal(final.metaData.isAggregate, false, 'filter job: isAggregate false');
  t.equal(final.events.length, 200, 'filter job: the 200 most recent events');
  checkEventList(t, final.events, EVENTS.slice(0, 200), 'filter job ""');
  final.events.slice(0, 3).forEach((r, i) => checkEvent(t, r, EVENTS[i], `job event ${i}`));
  t.equal(final.metaData.extraData.hasMoreEvents, 'true', 'filter job over 300 events: hasMoreEvents is the string "true"');
  t.equal(final.metaData.queryEnd - final.metaData.queryStart, DAY, 'no start: the last 24 hours');
  t.ok(Math.abs(final.metaData.queryEnd - Date.now()) < 60_000, 'queryEnd is about now');
  t.equal(final.metaData.filterQuery.queryString, '*', 'filterQuery.queryString "*"');
  t.equal(final.metaData.processedEvents, N, `processedEvents: the ${N} events in range`);
  t.ok(final.metaData.processedBytes > 0, 'processedBytes > 0');
  const again = await pollOnce(node.url, 'web', node.adminToken, body.id);
  t.equal(again.status, 200, 'a finished job can be polled again');
  t.same(again.json().events, final.events, 'the same events on the next poll');

  const few = await runJob(node.url, 'web', node.adminToken, { queryString: 'status=500' });
  t.equal(few.queryOnView, 'status=500', 'queryOnView echoes the query');
  checkMetaData(t, few.final, 'filter job status=500');
  checkEventList(t, few.final.events, EVENTS.filter((e) => e.attributes.status === '500'), 'filter job status=500');
  t.equal(few.final.metaData.extraData.hasMoreEvents, 'false', '30 matches: hasMoreEvents is the string "false"');

  const exactly200 = await runJob(node.url, 'web', node.adminToken, { queryString: '', start: EVENTS[199]!.timestamp, end: EVENTS[0]!.timestamp });
  t.equal(exactly200.final.events.length, 200, 'exactly 200 matches: 200 events');
  t.equal(exactly200.final.metaData.extraData.hasMoreEvents, 'false', 'exactly 200 matches: hasMoreEvents "false"');
  t.equal(exactly200.final.metaData.queryStart, EVENTS[199]!.timestamp, 'queryStart is the absolute start sent');
  t.equal(exactly200.final.metaData.queryEnd, EVENTS[0]!.timestamp, 'queryEnd is the absolute end sent');
  const exactly201 = await runJob(node.url, 'web', node.adminToken, { queryString: '', start: EVENTS[200]!.timestamp, end: EVENTS[0]!.timestamp });
  t.equal(exactly201.final.metaData.extraData.hasMoreEvents, 'true', '201 matches: hasMoreEvents "true"');
  checkEventList(t, exactly201.final.events, EVENTS.slice(0, 200), '201 matches: the newest 200');

  const count = await runJob(node.url, 'web', node.adminToken, { queryString: 'count()' });
  checkMetaData(t, count.final, 'count() job');
  t.equal(count.final.metaData.isAggregate, true, 'count() job: isAggregate true');
  t.same(count.final.events, [{ _count: '300' }], 'count() job: [{_count: "300"}]');

  const rel = await runJob(node.url, 'web', node.adminToken, { queryString: 'count()', start: '1h' });
  t.equal(rel.final.metaData.queryEnd - rel.final.metaData.queryStart, HOUR, 'start "1h": queryEnd - queryStart = 1 hour');
  t.same(rel.final.events, [{ _count: String(inRange(rel.final.metaData.queryStart, rel.final.metaData.queryEnd).length) }], 'start "1h": counts the events in [queryStart, queryEnd]');

  const chart = await runJob(node.url, 'web', node.adminToken, { queryString: 'timechart()' });
  checkMetaData(t, chart.final, 'timechart job');
  const m = chart.final.metaData;
  t.equal(m.isAggregate, true, 'timechart job: isAggregate true');
  t.equal(chart.final.events.length, 97, 'timechart job: 97 rows');
  t.same(
    m.extraData,
    {
      timechart: 'true',
      bucket_first_bucket: String(Math.floor(m.queryStart / SPAN) * SPAN),
      bucket_last_bucket: String(Math.floor(m.queryEnd / SPAN) * SPAN),
      bucket_span_millis: '900000',
      bucket_span_humanized: '15 minutes',
      'ui:suggested-widget': 'time-chart',
    },
    'timechart job: extraData as the product sends it',
  );
  const bucketStarts = chart.final.events.map((b) => Number(b._bucket)).sort((a, b) => a - b);
  t.equal(bucketStarts[0], Math.floor(m.queryStart / SPAN) * SPAN, 'the first row is bucket_first_bucket');
  t.equal(bucketStarts.at(-1), Math.floor(m.queryEnd / SPAN) * SPAN, 'the last row is bucket_last_bucket');
  t.equal(chart.final.events.reduce((n, b) => n + Number(b._count), 0), N, 'timechart job: counts sum to 300');

  const grouped = await runJob(node.url, 'web', node.adminToken, { queryString: 'groupBy(user)' });
  checkMetaData(t, grouped.final, 'groupBy job');
  t.equal(grouped.final.events.length, 7, 'groupBy(user): 7 rows');
  t.equal(grouped.final.events.reduce((n, r) => n + Number(r._count), 0), N, 'groupBy(user): counts sum to 300');

  // humiolib's spelling, as a member.
  const ds = await createJob(node.url, 'web', member.token, { queryString: 'status=404 | count()' }, 'dataspaces');
  t.equal(ds.status, 200, '/dataspaces/.../queryjobs: 200');
  const dsPolls = await pollUntilDone(node.url, 'web', member.token, ds.json().id);
  t.same(dsPolls.at(-1)!.events, [{ _count: '90' }], '/dataspaces/ job: status=404 | count()');
  const viaDs = await pollOnce(node.url, 'web', member.token, ds.json().id, 'dataspaces');
  t.equal(viaDs.status, 200, 'a job can be polled on the /dataspaces/ spelling');
});

t.test('query jobs: delete, unknown ids, ownership, errors', async (t) => {
  const created = await createJob(node.url, 'web', member.token, { queryString: 'status=500' });
  t.equal(created.status, 200, 'member creates a job');
  const id = created.json().id as string;
  await pollUntilDone(node.url, 'web', member.token, id);

  const other = await pollOnce(node.url, 'web', member2.token, id);
  isError(t, other, 404, "another member polls the job: 404");
  const otherDel = await deleteJob(node.url, 'web', member2.token, id);
  t.equal(otherDel.status, 404, "another member's DELETE: 404");
  isError(t, await pollOnce(node.url, 'web', outsider.token, id), 404, 'a non-member polls the job');
  isError(t, await pollOnce(node.url, 'kvlogs', member.token, id), 404, 'the job under another repository');
  const still = await pollOnce(node.url, 'web', member.token, id);
  t.equal(still.status, 200, "the owner's job survived the others' attempts");
  t.equal(still.json().events.length, 30, 'the owner still gets the events');

  const del = await deleteJob(node.url, 'web', member.token, id);
  t.equal(del.status, 204, 'DELETE: 204');
  t.equal(del.text, '', 'DELETE: empty body');
  isError(t, await pollOnce(node.url, 'web', member.token, id), 404, 'poll after DELETE');
  t.equal((await deleteJob(node.url, 'web', member.token, id)).status, 404, 'DELETE again: 404');

  // A job deleted while it may still be running.
  const running = await createJob(node.url, 'web', node.adminToken, { queryString: 'timechart(span=1m)' });
  t.equal(running.status, 200, 'a second job');
  t.equal((await deleteJob(node.url, 'web', node.adminToken, running.json().id)).status, 204, 'DELETE right after creating: 204');
  t.equal((await pollOnce(node.url, 'web', node.adminToken, running.json().id)).status, 404, 'then 404');

  isError(t, await pollOnce(node.url, 'web', node.adminToken, '1-AAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'an unknown id');
  t.equal((await deleteJob(node.url, 'web', node.adminToken, 'nope')).status, 404, 'DELETE of an unknown id: 404');

  for (const q of ['count(', 'cuont()']) {
    const bad = await createJob(node.url, 'web', node.adminToken, { queryString: q });
    isError(t, bad, 400, `job with bad query ${JSON.stringify(q)}`);
    t.match(bad.text, /```/, `job with bad query ${JSON.stringify(q)}: a fenced block`);
  }
  isError(t, await createJob(node.url, 'web', node.adminToken, {}), 400, 'job without queryString', /queryString/);
  isError(t, await createJob(node.url, 'web', node.adminToken, { queryString: '', start: 'banana' }), 400, 'job with start "banana"', /start/);
  isError(t, await createJob(node.url, 'web', node.adminToken, { queryString: '', timeZoneOffsetMinutes: 'x' }), 400, 'job with timeZoneOffsetMinutes "x"', /timeZoneOffsetMinutes/);
  isError(t, await createJob(node.url, 'no-such-repo', node.adminToken, { queryString: '' }), 404, 'job on an unknown repository');
  isError(t, await createJob(node.url, 'web', outsider.token, { queryString: '' }), 404, 'job by a non-member');
  isError(t, await createJob(node.url, 'web', web.ingestToken, { queryString: '' }), 403, 'job with an ingest token');
  const noTok = await api(node.url, '/api/v1/repositories/web/queryjobs', { body: JSON.stringify({ queryString: '' }) });
  isError(t, noTok, 401, 'job without a token');
  isError(t, await api(node.url, `/api/v1/repositories/web/queryjobs/${id}`), 401, 'poll without a token');
});

// --- exactly once across storage --------------------------------------------------------------------

/** A fixed "now" for the durability tests, so that every timestamp is distinct and known. */
const BASE = Date.now();

/** Events for the durability nodes: `n` one second apart, the newest `newestAgoMs` before BASE. */
function batch(label: string, n: number, newestAgoMs: number, host = 'd-1'): KnownEvent[] {
  const newest = BASE - newestAgoMs;
  return Array.from({ length: n }, (_, i) => ({
    timestamp: newest - i * 1000,
    rawstring: `${label}-${i} part=${label}`,
    attributes: { part: label, i: String(i) },
    tags: { host },
  }));
}

/** Every event of `repo` (at most 200), newest first. */
async function all(n: TestNode, repo: string): Promise<Record<string, any>[]> {
  return queryJson(n.url, repo, { queryString: '' }, { token: n.adminToken });
}

const rawOf = (rows: Record<string, any>[]): string[] => rows.map((r) => r['@rawstring']).sort();
const idsOf = (rows: Record<string, any>[]): string[] => rows.map((r) => r['@id']).sort();

t.test('exactly once across memory, segments, a graceful restart and a SIGKILL', async (t) => {
  const dataDir = await tempDir(t);
  const n1 = await startNode(t, { dataDir, config: CONFIG });
  const repo = await createRepo(n1.url, n1.adminToken, 'durable');
  const a = batch('a', 120, 20 * MINUTE, 'd-1');
  await ingestStructured(n1.url, repo.ingestToken, a.slice(0, 60));
  await ingestStructured(n1.url, repo.ingestToken, a.slice(60).map((e) => ({ ...e, tags: { host: 'd-2' } })));
  t.equal(await waitForCount(n1.url, 'durable', n1.adminToken, 120), 120, 'in memory (no block flushed yet): all 120 events counted');
  const inMemory = await all(n1, 'durable');
  t.equal(inMemory.length, 120, 'in memory: 120 events returned');
  t.same(rawOf(inMemory), a.map((e) => e.rawstring).sort(), 'in memory: exactly the events sent');
  t.equal(new Set(idsOf(inMemory)).size, 120, 'in memory: 120 distinct @ids');

  t.equal(await n1.stop(), 0, 'SIGTERM: the node stops cleanly');
  const stored = await readAllEvents(dataDir);
  t.equal(stored.length, 120, 'after SIGTERM every event is in a segment file');
  t.same(stored.map((e) => e['@id']).sort(), idsOf(inMemory), 'the segment files hold the same @ids the query returned from memory');

  const n2 = await startNode(t, { dataDir, config: CONFIG });
  const fromSegments = await all(n2, 'durable');
  t.equal(fromSegments.length, 120, 'after restart: 120 events');
  t.same(fromSegments, inMemory, 'after restart (from segments): the very same events, fields and @ids, in the same order');
  t.equal(await countOf(n2.url, 'durable', n2.adminToken), 120, 'after restart: count() 120');

  // New events between the old ones: the answer merges segments and memory.
  const b = batch('b', 50, 20 * MINUTE + 500, 'd-1');
  await ingestStructured(n2.url, repo.ingestToken, b);
  t.equal(await waitForCount(n2.url, 'durable', n2.adminToken, 170), 170, 'segments + memory: count() 170');
  const mixed = await all(n2, 'durable');
  t.same(rawOf(mixed), [...a, ...b].map((e) => e.rawstring).sort(), 'segments + memory: exactly the 170 events sent');
  t.equal(new Set(idsOf(mixed)).size, 170, 'segments + memory: 170 distinct @ids');
  t.same(
    mixed.map((r) => r['@timestamp']),
    [...mixed.map((r) => r['@timestamp'])].sort((x, y) => y - x),
    'segments + memory: newest first',
  );
  const oldIds = new Set(idsOf(inMemory));
  t.equal(mixed.filter((r) => oldIds.has(r['@id'])).length, 120, 'the 120 older events keep their @ids');
  t.same(
    await queryJson(n2.url, 'durable', { queryString: 'groupBy(part)' }, { token: n2.adminToken }).then((rows) => [...rows].sort((x, y) => String(x.part).localeCompare(String(y.part)))),
    [
      { part: 'a', _count: '120' },
      { part: 'b', _count: '50' },
    ],
    'segments + memory: groupBy(part)',
  );

  // Acknowledged, in memory only, then SIGKILL: the restart replays the queue.
  const c = batch('c', 30, 10 * MINUTE, 'd-2');
  await ingestStructured(n2.url, repo.ingestToken, c.slice(0, 15));
  await ingestStructured(n2.url, repo.ingestToken, c.slice(15));
  t.equal(await waitForCount(n2.url, 'durable', n2.adminToken, 200), 200, 'before the kill: 200');
  const beforeKill = await all(n2, 'durable');
  await n2.kill();

  const n3 = await startNode(t, { dataDir, config: CONFIG });
  t.equal(await countOf(n3.url, 'durable', n3.adminToken), 200, 'after SIGKILL and restart: count() 200 (nothing lost, nothing twice)');
  const afterKill = await all(n3, 'durable');
  t.same(rawOf(afterKill), [...a, ...b, ...c].map((e) => e.rawstring).sort(), 'after SIGKILL: exactly the 200 acknowledged events');
  t.equal(new Set(idsOf(afterKill)).size, 200, 'after SIGKILL: 200 distinct @ids');
  t.same(afterKill, beforeKill, 'after SIGKILL: the very same events and @ids as before it');
  t.same(
    await queryJson(n3.url, 'durable', { queryString: 'groupBy(#host)' }, { token: n3.adminToken }).then((rows) => [...rows].sort((x, y) => String(x['#host']).localeCompare(String(y['#host'])))),
    [
      { '#host': 'd-1', _count: '110' },
      { '#host': 'd-2', _count: '90' },
    ],
    'after SIGKILL: groupBy(#host)',
  );

  // A second kill without new data replays the same records again.
  await n3.kill();
  const n4 = await startNode(t, { dataDir, config: CONFIG });
  t.equal(await countOf(n4.url, 'durable', n4.adminToken), 200, 'second SIGKILL and restart: still 200');
  t.same(await all(n4, 'durable'), beforeKill, 'second SIGKILL: the same events and @ids');
  t.equal(await n4.stop(), 0, 'a clean stop at the end');
});

t.test('exactly once when blocks are flushed while ingest runs and the node is killed', async (t) => {
  // CONFIG ends in its [digest] table: this line belongs to it.
  const config = `${CONFIG}flush_block_seconds = 1\n`;
  const dataDir = await tempDir(t);
  const n1 = await startNode(t, { dataDir, config });
  const repo = await createRepo(n1.url, n1.adminToken, 'flushy');
  const sent: KnownEvent[] = [];
  for (let k = 0; k < 12; k++) {
    const evs = batch(`f${k}`, 15, 30 * MINUTE + k * 20_000, k % 2 === 0 ? 'f-1' : 'f-2');
    await ingestStructured(n1.url, repo.ingestToken, evs);
    sent.push(...evs);
    await sleep(250);
  }
  t.equal(await waitForCount(n1.url, 'flushy', n1.adminToken, 180), 180, 'while running: 180');
  const before = await all(n1, 'flushy');
  t.equal(before.length, 180, 'while running: 180 events returned');
  // With a 1-second flush, part of the data is already in segment files when the node dies: the
  // replay after the restart covers records whose events are partly in segments.
  // (The flush runs on its own timer: waited for, since a busy node may not have flushed yet.)
  t.ok((await until('a segment file', () => segmentFiles(dataDir), (f) => f.length > 0, 30_000)).length > 0, 'blocks were written to segment files before the kill');
  await n1.kill();
  const n2 = await startNode(t, { dataDir, config });
  t.equal(await countOf(n2.url, 'flushy', n2.adminToken), 180, 'after SIGKILL: count() 180');
  const after = await all(n2, 'flushy');
  t.same(rawOf(after), sent.map((e) => e.rawstring).sort(), 'after SIGKILL: exactly the acknowledged events');
  t.equal(new Set(idsOf(after)).size, 180, 'after SIGKILL: distinct @ids');
  t.same(after, before, 'after SIGKILL: the same events and @ids as before');
  // Flushed blocks (1 s) mean some of the answer now comes from segment files.
  await sleep(2500);
  t.equal(await countOf(n2.url, 'flushy', n2.adminToken), 180, 'after the blocks were flushed again: 180');
  t.equal(await n2.stop(), 0, 'clean stop');
  const stored = await readAllEvents(dataDir);
  t.equal(stored.length, 180, 'the segment files hold each event once');
  t.same(stored.map((e) => e['@id']).sort(), idsOf(after), 'the segment files hold the @ids the query returned');
});

t.test('searches over segment files: raw strings rebuilt from templates, typed fields, gram filters skipping blocks', async (t) => {
  const dataDir = await tempDir(t);
  const n1 = await startNode(t, { dataDir, config: CONFIG });
  const repo = await createRepo(n1.url, n1.adminToken, 'stored');
  // Access-log lines whose parsed attributes cover most of the line (so blocks store templates),
  // with integer and IPv4 fields; every 25th carries a rare token inside a longer path segment.
  const events: KnownEvent[] = Array.from({ length: 200 }, (_, i) => {
    const client = `10.0.${i % 3}.${i % 7}`;
    const url = i % 25 === 0 ? `/items/xzq7xk2vblmx/${i}` : `/items/${i % 9}/${i}`;
    const status = i % 4 === 0 ? '404' : '200';
    const size = String(100 + i);
    return {
      timestamp: BASE - 30 * MINUTE - i * 1000,
      rawstring: `${client} - - "GET ${url} HTTP/1.1" ${status} ${size} "Mozilla/5.0 ✓"`,
      // uid: an integer's text in two events of three (absent in the third), so a text column.
      attributes: { client, method: 'GET', url, status, size, ...(i % 3 === 0 ? {} : { uid: String(1000 + ((i * 37) % 150)) }) },
      tags: { host: 'h-1' },
    };
  });
  await ingestStructured(n1.url, repo.ingestToken, events);
  t.equal(await waitForCount(n1.url, 'stored', n1.adminToken, 200), 200);
  const inMemory = await queryJson(n1.url, 'stored', { queryString: 'tail(1000)' }, { token: n1.adminToken });
  t.equal(await n1.stop(), 0, 'SIGTERM: open blocks written to segments');

  const n2 = await startNode(t, { dataDir, config: CONFIG });
  const token = n2.adminToken;
  const count = async (q: string): Promise<number> => Number((await queryJson(n2.url, 'stored', { queryString: `${q} | count()` }, { token }))[0]!._count);
  const fromSegments = await queryJson(n2.url, 'stored', { queryString: 'tail(1000)' }, { token });
  t.same(fromSegments, inMemory, 'every event, field and raw string read back from the segments as it was in memory');
  t.equal(await count('xk2vb'), 8, 'a word inside a longer token (free text is a substring search)');
  t.equal(await count('"GET /items/XZQ7"'), 8, 'a phrase across the text between fields and a field value, any case');
  t.equal(await count('status=404'), 50, 'an integer field');
  t.equal(await count('client=10.0.1.3'), events.filter((e) => e.attributes!['client'] === '10.0.1.3').length, 'an IPv4 field');
  t.equal(await count('size>=290'), 10, 'integer comparison on a stored integer field');

  const all = await runJob(n2.url, 'stored', token, { queryString: 'count()', start: '1d' });
  t.same(all.final.events, [{ _count: '200' }]);
  t.equal(all.final.metaData.processedBytes, 0, 'count() over whole blocks is answered from their headers: no block read');
  const some = await runJob(n2.url, 'stored', token, { queryString: 'GET | count()', start: '1d' });
  t.same(some.final.events, [{ _count: '200' }]);
  t.ok(some.final.metaData.processedBytes > 0, 'a filtered count reads the blocks');
  const absent = await runJob(n2.url, 'stored', token, { queryString: 'qqzzvvww | count()', start: '1d' });
  t.same(absent.final.events, [{ _count: '0' }]);
  // Free text searches the stored fields too (query-functions.md §2.2); format 4 gram filters hold
  // their grams (docs/query-language.md), so a word no block holds skips every block.
  t.equal(absent.final.metaData.processedBytes, 0, 'free text over every field: blocks whose gram filter lacks the word are skipped');
  const absentToken = await runJob(n2.url, 'stored', token, { queryString: '" qqzzvvww " | count()', start: '1d' });
  t.same(absentToken.final.events, [{ _count: '0' }]);
  t.equal(absentToken.final.metaData.processedBytes, 0, 'a whole token no block holds (bounded in the search text): every block skipped by the bloom filter');
  const rare = await runJob(n2.url, 'stored', token, { queryString: 'zq7xk2vblm | count()', start: '1d' });
  t.same(rare.final.events, [{ _count: '8' }], 'the rare token is still found: its blocks are read');

  // The column paths over stored blocks (a text column replaced in one pass, a dictionary column's
  // entries replaced once, regexes decided by field values, columns skipped by their bytes, the
  // integer delta walk), each against the answer worked out here from the events sent.
  const groups = async (q: string, field: string): Promise<Record<string, string>> =>
    Object.fromEntries((await queryJson(n2.url, 'stored', { queryString: q }, { token })).map((r) => [String(r[field]), String(r._count)]));
  const tally = (key: (e: KnownEvent) => string): Record<string, string> => {
    const out: Record<string, number> = {};
    for (const e of events) out[key(e)] = (out[key(e)] ?? 0) + 1;
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, String(v)]));
  };
  const url = (e: KnownEvent): string => String(e.attributes!['url']);
  t.same(await groups('replace("\\d", with="#", field=url, as=r) | groupBy(r, limit=max)', 'r'), tally((e) => url(e).replace(/\d/g, '#')), 'replace() of one character class over a stored text column');
  t.same(await groups('replace("G(E)T", with="<$1>", field=method, as=r) | groupBy(r)', 'r'), { '<E>': '200' }, 'replace() with a group reference over a stored dictionary column');
  t.equal(await count('/items\\/(xzq7|qqqq)/'), 8, 'a regex of literals and alternatives, decided by a field value');
  t.equal(await count('/xk2vb/i'), 8, 'the same rare token as a case-insensitive regex');
  t.equal(await count('xk2vb'), 8, 'free text asked again (text columns now skipped by the bytes they hold)');
  t.equal(await count('"✓"'), 200, 'a non-ASCII character in the text between fields');
  t.equal(await count('size > 150'), events.filter((e) => Number(e.attributes!['size']) > 150).length, 'a numeric range over the stored integer deltas');
  // This session's paths, over HTTP against the events sent: ranges asked again (integer columns
  // kept decoded by the query threads), a regex whose literal runs across the method, a gap and the
  // url (decided on those pieces), and count distinct of integer text (counted from its bytes).
  const sizes = events.map((e) => Number(e.attributes!['size']));
  for (const round of [1, 2, 3, 4]) {
    t.equal(await count('size > 150'), sizes.filter((x) => x > 150).length, `a numeric range asked again (${round}): from the kept integer column (in order, from the third)`);
    t.equal(await count('size < 120'), sizes.filter((x) => x < 120).length, `another range on the same column (${round})`);
    t.equal(await count('size >= 110 size <= 170'), sizes.filter((x) => x >= 110 && x <= 170).length, `two bounds on it (${round})`);
  }
  const across = /GET \/items\/[0-9]+\//;
  t.equal(await count('/GET \\/items\\/[0-9]+\\//'), events.filter((e) => across.test(e.rawstring)).length, 'a regex whose literal runs across the method, a gap and the url');
  const distinct = async (q: string): Promise<string> => String((await queryJson(n2.url, 'stored', { queryString: q }, { token }))[0]!._count);
  t.equal(await distinct('count(size, distinct=true)'), String(new Set(sizes).size), 'count distinct of a stored integer text field');
  t.equal(await distinct('count(status, distinct=true)'), '2', 'count distinct of a stored dictionary field');
  // Paths that start at a block's second use on a query thread, asked four times so that each query
  // thread meets the blocks again: a text column of integers kept decoded, with each whole block's
  // distinct values and counts (count distinct, also after a filter that selects part of a block); a
  // dictionary filter with one passing code taking that code's rows; raw template heads left by a
  // first search, so a later one whose needle no gap holds reads no raw frame (and one a gap holds does).
  const uids = events.flatMap((e) => (e.attributes!['uid'] === undefined ? [] : [e.attributes!['uid']]));
  const uids404 = events.flatMap((e) => (e.attributes!['uid'] === undefined || e.attributes!['status'] !== '404' ? [] : [e.attributes!['uid']]));
  const clients404: Record<string, string> = {};
  for (const e of events) {
    if (e.attributes!['status'] !== '404') continue;
    const c = String(e.attributes!['client']);
    clients404[c] = String(Number(clients404[c] ?? 0) + 1);
  }
  for (const round of [1, 2, 3, 4]) {
    t.equal(await distinct('count(uid, distinct=true)'), String(new Set(uids).size), `count distinct of integer text asked again (${round})`);
    t.equal(await distinct('status=404 | count(uid, distinct=true)'), String(new Set(uids404).size), `count distinct of integer text after a filter (${round})`);
    t.same(await groups('status=404 | groupBy(client, limit=max)', 'client'), clients404, `a dictionary filter with one passing code, grouped (${round})`);
    t.equal(await count('xk2vb'), 8, `free text whose needle no gap holds, asked again (${round})`);
    t.equal(await count('HTTP'), 200, `free text that the text between fields holds, asked again (${round})`);
  }
  t.equal(await n2.stop(), 0);
});

t.test('a rare token over more tasks than query threads: the first round prunes the blocks of many segments by their filters, asked again', async (t) => {
  // Small blocks and small tasks, so ~2,400 events make several tasks per query thread: the
  // executor's first round (refs packed per segment, matched against the filter packs natively,
  // executor.ts firstRound, scan.ts pruneScanPacked) runs before any scan.
  const config = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 2', 'worker_threads = 2', 'block_target_bytes = 4096', '[query]', 'task_bytes = 65536', ''].join('\n');
  const dataDir = await tempDir(t);
  const n1 = await startNode(t, { dataDir, config });
  const repo = await createRepo(n1.url, n1.adminToken, 'pruned');
  const BASE = Math.floor(Date.now() / 1000) * 1000 - HOUR;
  const events: KnownEvent[] = Array.from({ length: 2400 }, (_, i) => {
    const word = i % 480 === 7 ? 'qv7rarezx' : `w${i % 50}`;
    return {
      timestamp: BASE + i * 1000,
      rawstring: `10.1.${i % 5}.${i % 9} "GET /p/${i % 40}/${word} HTTP/1.1" ${i % 6 === 0 ? 500 : 200} ${300 + (i % 700)} padding-${'x'.repeat(40)}`,
      attributes: {},
      tags: { host: `h-${i % 3}` },
    };
  });
  await ingestStructured(n1.url, repo.ingestToken, events);
  t.equal(await waitForCount(n1.url, 'pruned', n1.adminToken, 2400), 2400);
  t.equal(await n1.stop(), 0, 'SIGTERM: open blocks written to segments');
  const n2 = await startNode(t, { dataDir, config });
  const token = n2.adminToken;
  const whole = await runJob(n2.url, 'pruned', token, { queryString: 'padding | count()', start: '1d' });
  t.same(whole.final.events, [{ _count: '2400' }], 'a word every event holds: every block read');
  const rareCount = events.filter((e) => e.rawstring.includes('qv7rarezx')).length;
  for (const round of [1, 2, 3, 4]) {
    const rare = await runJob(n2.url, 'pruned', token, { queryString: 'qv7rarezx | count()', start: '1d' });
    t.same(rare.final.events, [{ _count: String(rareCount) }], `the rare token's events, each once (${round})`);
    t.ok(rare.final.metaData.processedBytes < whole.final.metaData.processedBytes / 2, `blocks without it skipped by their filters (${round}): ${rare.final.metaData.processedBytes} of ${whole.final.metaData.processedBytes} bytes read`);
    const some = await queryJson(n2.url, 'pruned', { queryString: 'w13 | count()', start: '1d' }, { token });
    t.equal(some[0]!._count, String(events.filter((e) => / \/p\/\d+\/w13 /.test(e.rawstring)).length), `a word in some events of every block, the same round (${round})`);
  }
  t.equal(await n2.stop(), 0);
});
