/**
 * A follow whose handler falls behind has its partition paused; librdkafka keeps an application's
 * pause across unassign/assign, so a re-assignment (another partition's follow starting, as when a
 * node takes a second partition over) must not leave it paused: every record still arrives.
 * (The stall this guards against showed as "not caught up with the queue end 10 s after taking it".)
 */
import t from 'tap';
import { KafkaDigestQueue } from '../../src/queue/kafka-queue.js';
import { silentLogger } from '../../src/lib/logger.js';
import { startBroker } from '../helpers/kafka-broker.js';

t.setTimeout(300_000);
const broker = await startBroker(t);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

t.test('a paused follow resumes after another partition is followed', async (t) => {
  const q = await KafkaDigestQueue.open({
    connection: { brokers: broker.brokers },
    topicPrefix: 'pause-',
    partitions: 2,
    replicationFactor: 1,
    minInsyncReplicas: 1,
    deliveryTimeoutMs: 30_000,
    requestTimeoutMs: 10_000,
    logger: silentLogger,
  });
  t.teardown(() => q.close());
  // More records than a follow buffers (2000) before its partition is paused.
  const total = 3000;
  for (let i = 0; i < total; i += 250) {
    await Promise.all(Array.from({ length: Math.min(250, total - i) }, (_, k) => q.append(0, Buffer.from(`r${i + k}`))));
  }
  let gate: (() => void) | null = null;
  const held = new Promise<void>((r) => (gate = r));
  const got: number[] = [];
  const errors: Error[] = [];
  const h0 = q.follow(0, 0, async (r) => {
    await held;
    got.push(r.offset);
  }, (e) => errors.push(e));
  t.teardown(() => h0.stop());
  // The handler holds its first record: the fetch loop fills the buffer and pauses partition 0.
  await sleep(5000);
  t.equal(got.length, 0, 'the slow handler has taken nothing yet');
  const got1: number[] = [];
  const h1 = q.follow(1, 0, async (r) => void got1.push(r.offset), (e) => errors.push(e));
  t.teardown(() => h1.stop());
  await q.append(1, Buffer.from('other'));
  const until1 = Date.now() + 60_000;
  while (got1.length === 0 && Date.now() < until1) await sleep(100);
  t.same(got1, [0], 'the new follow gets its record');
  gate!();
  const until = Date.now() + 90_000;
  while (got.length < total && Date.now() < until) await sleep(200);
  t.equal(got.length, total, `every record of the paused partition arrives (${got.length} of ${total})`);
  t.same(got.slice(0, 3), [0, 1, 2], 'in order from the start');
  t.ok(got.every((o, i) => o === i), 'no gap, no repeat');
  t.same(errors, [], 'no follow failed');
});
