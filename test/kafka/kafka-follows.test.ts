/**
 * Follows of the digest queue's shared Kafka consumer, against a real broker.
 *
 * - A follow whose handler falls behind has its partition paused; librdkafka keeps an
 *   application's pause across unassign/assign, so a re-assignment (another partition's follow
 *   starting, as when a node takes a second partition over) must not leave it paused: every record
 *   still arrives. (The stall this guards against showed as "not caught up with the queue end 10 s
 *   after taking it".)
 * - A partition followed again right after its follow stopped gets its records. The fetch loop ends
 *   when the last follow stops and closes the consumer (librdkafka's close takes a while); a follow
 *   started during that close must still be fetched for. This is what a node does when it loses its
 *   one digest partition and is given it back a moment later (a takeover while it was thought dead,
 *   then the handover back): before, it digested nothing more and its checkpoint stayed put
 *   (test/cluster/checkpoint-gate.test.ts, once in CI).
 */
import t from 'tap';
import { KafkaDigestQueue } from '../../src/queue/kafka-queue.js';
import { silentLogger } from '../../src/lib/logger.js';
import { startBroker } from '../helpers/kafka-broker.js';

t.setTimeout(300_000);
const broker = await startBroker(t);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const openQueue = (topicPrefix: string, partitions: number): Promise<KafkaDigestQueue> =>
  KafkaDigestQueue.open({
    connection: { brokers: broker.brokers },
    topicPrefix,
    partitions,
    replicationFactor: 1,
    minInsyncReplicas: 1,
    deliveryTimeoutMs: 30_000,
    requestTimeoutMs: 10_000,
    logger: silentLogger,
  });

t.test('a paused follow resumes after another partition is followed', async (t) => {
  const q = await openQueue('pause-', 2);
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

t.test('a follow started while the last one\'s consumer closes still gets every record', async (t) => {
  const q = await openQueue('again-', 1);
  t.teardown(() => q.close());
  const errors: Error[] = [];
  // Rounds of: a record, read by the follow; the follow stopped; after a pause a new follow from
  // the next offset. The fetch loop notices the follow gone within one consume wait (200 ms) and
  // then closes its consumer (a few ms here, seconds on a loaded machine): pauses swept across
  // 0-300 ms land some new follows in that close.
  let next = 0;
  let failed: string | null = null;
  const rounds = 150;
  for (let i = 0; i < rounds && failed === null; i++) {
    const offset = next;
    const got: number[] = [];
    const h = q.follow(0, offset, async (r) => {
      got.push(r.offset);
    }, (e) => errors.push(e));
    await q.append(0, Buffer.from(`r${offset}`));
    const deadline = Date.now() + 10_000;
    while (got.length === 0 && Date.now() < deadline) await sleep(5);
    await h.stop();
    if (got.length !== 1 || got[0] !== offset) failed = `round ${i}: the follow from ${offset} read ${JSON.stringify(got)} within 10 s`;
    next = offset + 1;
    await sleep((i * 2) % 300);
  }
  t.equal(failed, null, `${rounds} follows, each started after the last one stopped, each read its record`);
  t.same(errors, [], 'no follow failed');
});
