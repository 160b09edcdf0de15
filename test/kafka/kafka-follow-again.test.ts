/**
 * A partition followed again right after its follow stopped gets its records. The follows share one
 * consumer whose fetch loop ends when the last follow stops and closes the consumer (librdkafka's
 * close takes a while); a follow started during that close must start a fetch loop of its own.
 * This is what a node does when it loses its one digest partition and is given it back a moment
 * later (a takeover while it was thought dead, then the handover back): before, it digested nothing
 * more and its checkpoint stayed put (test/cluster/checkpoint-gate.test.ts, once in CI).
 */
import t from 'tap';
import { KafkaDigestQueue } from '../../src/queue/kafka-queue.js';
import { silentLogger } from '../../src/lib/logger.js';
import { startBroker } from '../helpers/kafka-broker.js';

t.setTimeout(300_000);
const broker = await startBroker(t);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

t.test('a follow started while the last one\'s consumer closes still gets every record', async (t) => {
  const q = await KafkaDigestQueue.open({
    connection: { brokers: broker.brokers },
    topicPrefix: 'again-',
    partitions: 1,
    replicationFactor: 1,
    minInsyncReplicas: 1,
    deliveryTimeoutMs: 30_000,
    requestTimeoutMs: 10_000,
    logger: silentLogger,
  });
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
