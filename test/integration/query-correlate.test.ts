/**
 * correlate() over HTTP on a real node: events ingested through the structured endpoint (two
 * partitions, so the subqueries' kept events come from several scan tasks and merge), queried on
 * /query in each output form and as a query job; a bad correlate() is a 400 naming the problem
 * with its line and column; a correlate() past query.max_rows fails naming the bound.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { createRepo, ingestStructured, parseNdjson, postQuery, queryJson, runJob, waitForCount, type KnownEvent } from '../helpers/query.js';

t.setTimeout(300_000);

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 2', '[query]', 'max_rows = 1000', ''].join('\n');
const node = await startNode(t, { config: CONFIG });
const token = node.adminToken;
const repo = await createRepo(node.url, token, 'corr');

const MIN = 60_000;
const T0 = Date.now() - 6 * 3_600_000;
const at = (m: number): number => T0 + m * MIN;
// 200 users: each logs in from a host at minute 10*i, then runs a command 2 minutes later (every
// third user on another host, every fifth user 20 minutes later); 300 unrelated events.
const events: KnownEvent[] = [];
for (let i = 0; i < 200; i++) {
  const user = `u${i}`;
  events.push({ timestamp: at(i), rawstring: `login ${user}`, attributes: { action: 'login', user, src: `h${i}` }, tags: { kind: 'auth' } });
  const host = i % 3 === 0 ? `other${i}` : `h${i}`;
  const late = i % 5 === 0 ? 20 : 2;
  events.push({ timestamp: at(i + late), rawstring: `exec ${user}`, attributes: { action: 'exec', user, host, cmd: `cmd${i}` }, tags: { kind: 'proc' } });
}
for (let i = 0; i < 300; i++) events.push({ timestamp: at(i % 100), rawstring: `noise ${i}`, attributes: { action: 'noise', user: `u${i % 200}` }, tags: { kind: 'other' } });
await ingestStructured(node.url, repo.ingestToken, events, 97);
t.equal(await waitForCount(node.url, 'corr', token, events.length, 60_000), events.length, 'every event is searchable');

/** Users whose exec is on the login host and within `within` minutes. */
function expected(within: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < 200; i++) if (i % 3 !== 0 && (i % 5 === 0 ? 20 : 2) <= within) out.push(`u${i}`);
  return out;
}

const Q = [
  'correlate(',
  '  login: { #kind=auth action=login } include: [user, src],',
  '  exec:  { #kind=proc action=exec',
  '           | user <=> login.user',
  '           | host <=> login.src } include: [cmd],',
  '  sequence=true, within=5m)',
].join('\n');

t.test('constellations over /query in every output form and as a job', async (t) => {
  const rows = await queryJson(node.url, 'corr', { queryString: Q, start: '1d' }, { token });
  const want = expected(5);
  t.equal(rows.length, want.length, `${want.length} constellations`);
  t.same(rows.map((r) => r['login.user']).sort(), [...want].sort(), 'exactly the linked users within 5m');
  t.ok(rows.every((r) => r['exec.cmd'] === `cmd${String(r['login.user']).slice(1)}` && r['exec.host'] === r['login.src']), 'each row links the right events');
  t.ok(rows.every((r) => Number(r['exec.@timestamp']) - Number(r['login.@timestamp']) === 2 * MIN), 'exec 2 minutes after login');
  const wide = await queryJson(node.url, 'corr', { queryString: Q.replace('within=5m', 'within=30m'), start: '1d' }, { token });
  t.equal(wide.length, expected(30).length, 'within=30m also takes the late ones');

  const nd = await postQuery(node.url, 'corr', { queryString: `${Q} | groupBy(login.src, function=count())`, start: '1d' }, { token, format: 'ndjson' });
  t.equal(nd.status, 200);
  t.equal(parseNdjson(nd.text).length, want.length, 'ndjson: later steps read the q.field columns');

  const job = await runJob(node.url, 'corr', token, { queryString: Q, start: '1d' });
  t.equal(job.final.events.length, Math.min(200, want.length), 'query job: the same constellations (implicit tail(200))');
});

t.test('a bad correlate() is a 400 naming the problem with line and column', async (t) => {
  const bad = Q.replace('login.src', 'logn.src');
  const res = await postQuery(node.url, 'corr', { queryString: bad, start: '1d' }, { token, format: 'json' });
  t.equal(res.status, 400);
  t.match(res.text, /logn is not a subquery of this correlate\(\); the subqueries are login, exec/);
  t.match(res.text, /line 5, column 14/);
  const lone = await postQuery(node.url, 'corr', { queryString: 'correlate(a: { action=login }, b: { action=exec })', start: '1d' }, { token, format: 'json' });
  t.equal(lone.status, 400);
  t.match(lone.text, /subquery b is not linked to a/);
});

t.test('past query.max_rows the query fails naming the bound', async (t) => {
  const q = 'correlate(a: { action=* }, b: { action=* | user <=> a.user })';
  const res = await postQuery(node.url, 'corr', { queryString: q, start: '1d' }, { token, format: 'json' });
  t.equal(res.status, 400, res.text.slice(0, 300));
  t.match(res.text, /correlate: its subqueries matched more than 1000 events to keep \(query.max_rows\)/);
});
