/**
 * Issue 24, defect 10, on a real node: /query requests beyond query.max_concurrent wait in line for
 * a slot (query.queue_timeout_ms) instead of being refused with 429 at once; past the line's bound
 * (query.max_queued) the refusal is 429 with Retry-After. The node answers /api/v1/status after.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { createRepo, ingestStructured, postQuery, waitForCount } from '../helpers/query.js';

t.test('queries beyond max_concurrent wait in line rather than get 429 (defect 10)', async (t) => {
  t.setTimeout(120_000);
  const node = await startNode(t, { config: '[query]\nmax_concurrent = 1\n' });
  const repo = await createRepo(node.url, node.adminToken, 'fair');
  const now = Date.now();
  await ingestStructured(node.url, repo.ingestToken, Array.from({ length: 3000 }, (_, i) => ({ tags: { host: `h${i % 3}` }, timestamp: now - i, rawstring: `line ${i} status=${i % 7}`, attributes: { status: String(i % 7) } })));
  t.equal(await waitForCount(node.url, 'fair', node.adminToken, 3000, 30_000), 3000);
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) => postQuery(node.url, 'fair', { queryString: `status=${i % 7} | groupBy(#host)`, start: '1h' }, { token: node.adminToken, format: 'json', timeoutMs: 60_000 })),
  );
  const statuses = answers.map((a) => a.status);
  t.same(statuses, Array(12).fill(200), `all 12 answered though only one runs at a time: ${statuses.join(' ')}`);
  for (const a of answers) t.equal(a.json().length, 3, 'each answer is complete');
  t.equal((await api(node.url, '/api/v1/status')).status, 200);
});

t.test('past the line bound the refusal is 429 with Retry-After', async (t) => {
  t.setTimeout(120_000);
  const node = await startNode(t, { config: '[query]\nmax_concurrent = 1\nmax_queued = 0\n' });
  const repo = await createRepo(node.url, node.adminToken, 'fair2');
  await ingestStructured(node.url, repo.ingestToken, Array.from({ length: 2000 }, (_, i) => ({ tags: { host: 'h' }, timestamp: Date.now() - i, rawstring: `line ${i}`, attributes: {} })));
  t.equal(await waitForCount(node.url, 'fair2', node.adminToken, 2000, 30_000), 2000);
  const answers = await Promise.all(Array.from({ length: 8 }, () => postQuery(node.url, 'fair2', { queryString: 'groupBy(@rawstring) | count()', start: '1h' }, { token: node.adminToken, format: 'json', timeoutMs: 60_000 })));
  const refused = answers.filter((a) => a.status === 429);
  t.ok(answers.every((a) => a.status === 200 || a.status === 429), answers.map((a) => a.status).join(' '));
  for (const r of refused) t.match(r.headers.get('retry-after') ?? '', /^\d+$/, 'a 429 carries Retry-After');
  t.match(refused[0]?.text ?? 'none refused (all fitted: acceptable)', /query\.max_concurrent|none refused/);
  t.equal((await api(node.url, '/api/v1/status')).status, 200);
});
