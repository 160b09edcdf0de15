/** Fair query admission (src/query/scheduler.ts): global and per-user bounds, small first, a deadline. */
import t from 'tap';
import { QueryScheduler } from '../../../src/query/scheduler.js';

const opts = { maxConcurrent: 4, maxPerUser: 2, largeBytes: 1, queueTimeoutMs: 60_000, maxQueued: 100 };

t.test('per-user bound: a third query of one user waits while another user runs', async (t) => {
  const s = new QueryScheduler(opts);
  const a1 = await s.acquire('a', false);
  await s.acquire('a', false);
  let third = false;
  const p = s.acquire('a', false).then((r) => ((third = true), r));
  const b1 = await s.acquire('b', false);
  t.ok(b1, 'another user is admitted at once');
  await new Promise((r) => setImmediate(r));
  t.notOk(third, "a's third query waits");
  a1();
  (await p)();
  t.ok(third, 'and runs once one of its own ends');
});

t.test('large queries leave a quarter of the slots; a freed slot goes to the oldest small waiter', async (t) => {
  const s = new QueryScheduler({ ...opts, maxPerUser: 10 });
  const large = [await s.acquire('u', true), await s.acquire('u', true), await s.acquire('u', true)];
  const order: string[] = [];
  const l4 = s.acquire('u', true).then((r) => (order.push('large'), r));
  const small = await s.acquire('u', false);
  t.same(s.stats(), { running: 4, runningLarge: 3, waiting: 1 }, 'the last slot went to a small query');
  const s2 = s.acquire('u', false).then((r) => (order.push('small'), r));
  small();
  await s2;
  large[0]!();
  await l4;
  t.same(order, ['small', 'large']);
});

t.test('a query that waits past the deadline, or finds the line full, gets 429', async (t) => {
  const s = new QueryScheduler({ ...opts, maxConcurrent: 1, queueTimeoutMs: 50, maxQueued: 1 });
  await s.acquire('a', false);
  const late = s.acquire('b', false);
  await t.rejects(s.acquire('c', false), { code: 'E_TOO_MANY_REQUESTS', message: /already waiting/ });
  await t.rejects(late, { code: 'E_TOO_MANY_REQUESTS', message: /query\.queue_timeout_ms/ });
  t.throws(() => s.tryAcquire('d'), { code: 'E_TOO_MANY_REQUESTS' });
});
