import t from 'tap';
import type { PiscinaTask } from 'piscina';
import { SHORT_SCAN, ShortFirstQueue } from '../../../src/workers/query-queue.js';

const task = (name: string, id: number): PiscinaTask => ({ name, taskId: id }) as unknown as PiscinaTask;

t.test("short queries' tasks go first, at most four in a row while long ones wait", async (t) => {
  const q = new ShortFirstQueue();
  for (let i = 0; i < 3; i++) q.push(task('query', i));
  for (let i = 10; i < 16; i++) q.push(task(SHORT_SCAN, i));
  t.equal(q.size, 9);
  const order: number[] = [];
  for (let x = q.shift(); x !== null; x = q.shift()) order.push((x as unknown as { taskId: number }).taskId);
  t.strictSame(order, [10, 11, 12, 13, 0, 14, 15, 1, 2]);
  t.equal(q.size, 0);
  const gone = task('query', 99);
  q.push(gone);
  q.remove(gone);
  t.equal(q.shift(), null);
});
