/**
 * Issue 24, defect 10, end to end over HTTP on a real node: while large queries fill the query
 * slots and keep both query threads busy, a small query is answered before any of them. Measured by
 * the order in which the answers come back, never by wall time: the small query (one block of the
 * last minutes) goes in only once three large ones run (logsvc_queries_running), and its answer
 * must come back first.
 *
 * What makes it so (src/query/scheduler.ts, src/workers/query-queue.ts): a query over more stored
 * bytes than query.large_query_bytes is large, and large ones together leave a quarter of
 * query.max_concurrent (here 1 of 4) to the others; the small query's one scan task goes ahead of
 * the large ones' in the query pool's line. With the scheduler's classes off (checked by hand with
 * query.large_query_bytes set past the data's size, docs/hardening.md), the small query waits in
 * line behind the large ones still waiting for a slot and comes back after three of them: the
 * test fails.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { createRepo, ingestStructured, postQuery, sleep, waitForCount, type KnownEvent } from '../helpers/query.js';

t.setTimeout(600_000);

const LARGE = 6;
const OLD_EVENTS = 240_000;
const RECENT_EVENTS = 100;
const CONFIG = [
  '[health]',
  'grace_period_seconds = 600',
  '[digest]',
  'partitions = 2',
  'worker_threads = 2',
  'flush_block_seconds = 1',
  'block_target_bytes = 262144',
  '[query]',
  'max_concurrent = 4',
  'max_concurrent_per_user = 8',
  // Anything over 1 MiB of stored events is large: the old events are ~40 MiB, the recent ones a block.
  'large_query_bytes = 1048576',
  'task_bytes = 262144',
  'queue_timeout_ms = 600000',
  '',
].join('\n');

async function running(base: string, token: string): Promise<number> {
  const r = await api(base, '/metrics', { token });
  const m = /^logsvc_queries_running (\d+)/m.exec(r.text);
  if (r.status !== 200 || m === null) throw new Error(`/metrics: ${r.status} ${r.text.slice(0, 300)}`);
  return Number(m[1]);
}

t.test('a small query is answered before the large ones that fill the query slots (defect 10)', async (t) => {
  const node = await startNode(t, { config: CONFIG });
  const repo = await createRepo(node.url, node.adminToken, 'fairness');
  const now = Date.now();
  // Old events over an hour, two hours ago; a few recent ones in the last minute.
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
  const old = (i: number): KnownEvent => ({
    tags: { host: `h${i % 4}` },
    timestamp: now - 2 * 3_600_000 + Math.floor((i * 3_600_000) / OLD_EVENTS),
    rawstring: `ts=${i} user=u${i % 997} ${words[i % 8]} ${words[(i * 7) % 8]} path=/a/b/${i % 113}/c status=${200 + (i % 5)} bytes=${(i * 7919) % 100_000} agent="Mozilla/5.0 (X11; Linux x86_64) ${i}"`,
    attributes: {},
  });
  for (let from = 0; from < OLD_EVENTS; from += 20_000) {
    await ingestStructured(node.url, repo.ingestToken, Array.from({ length: 20_000 }, (_, k) => old(from + k)), 2000);
  }
  await ingestStructured(node.url, repo.ingestToken, Array.from({ length: RECENT_EVENTS }, (_, i) => ({ tags: { host: 'recent' }, timestamp: now - 30_000 + i, rawstring: `recent ${i} status=200`, attributes: {} })));
  t.equal(await waitForCount(node.url, 'fairness', node.adminToken, OLD_EVENTS + RECENT_EVENTS, 300_000, ''), OLD_EVENTS + RECENT_EVENTS, 'every event is searchable');

  // Each large query reads every old event and does a regex extraction and a groupBy per event.
  const largeQuery = { queryString: 'regex("user=(?<u>\\\\S+) (?<w1>\\\\w+) (?<w2>\\\\w+) path=(?<p>\\\\S+)") | groupBy([u, w1, w2], function=count())', start: '3h' };
  const smallQuery = { queryString: 'recent | count()', start: '5m' };
  const order: string[] = [];
  const statuses: Record<string, number> = {};
  const send = (name: string, body: unknown): Promise<void> =>
    postQuery(node.url, 'fairness', body, { token: node.adminToken, format: 'json', timeoutMs: 540_000 }).then((r) => {
      order.push(name);
      statuses[name] = r.status;
    });
  const larges = Array.from({ length: LARGE }, (_, i) => send(`large ${i}`, largeQuery));
  // The small query goes in once the large ones hold every slot they may (3 of 4).
  const deadline = Date.now() + 120_000;
  let seen = 0;
  while ((seen = await running(node.url, node.adminToken)) < 3) {
    if (Date.now() > deadline || order.length > 0) break;
    await sleep(20);
  }
  t.equal(order.length, 0, 'no large query had finished when the small one was sent');
  t.ok(seen >= 3, `three large queries were running (logsvc_queries_running ${seen})`);
  const small = send('small', smallQuery);
  await Promise.all([...larges, small]);

  t.same(statuses, Object.fromEntries([...Array.from({ length: LARGE }, (_, i) => [`large ${i}`, 200]), ['small', 200]]), 'every query answered 200');
  t.equal(order[0], 'small', `the small query came back first: ${order.join(', ')}`);
  t.equal((await api(node.url, '/api/v1/status')).status, 200);
});
