/**
 * The live tail against a real broker (src/queue/kafka-tail.ts): a listener learns the position it
 * joined at and hears every record from there on and none before, whether the tail starts for it or
 * is already running; partitions added later are read from their start; the tail stops when the
 * last listener leaves and starts again (at the ends) for the next.
 */
import t from 'tap';
import { KafkaDigestQueue, ingestTopic } from '../../src/queue/kafka-queue.js';
import { KafkaTail } from '../../src/queue/kafka-tail.js';
import { encodeRecord } from '../../src/events/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { startBroker } from '../helpers/kafka-broker.js';

t.setTimeout(300_000);
const broker = await startBroker(t);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const record = (n: number): Buffer => encodeRecord({ repo: 'r', at: Date.now(), groups: [{ ds: 'd', tags: {}, events: [{ timestamp: Date.now(), timezone: 'Z', rawstring: `e${n}`, fields: {} }] }] }).payload;

/** Offsets heard per partition. */
function collector(): { heard: Map<number, number[]>; listener: (r: { partition: number; offset: number }) => void } {
  const heard = new Map<number, number[]>();
  return { heard, listener: (r) => void (heard.get(r.partition) ?? heard.set(r.partition, []).get(r.partition)!).push(r.offset) };
}

async function until(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

t.test('each listener hears exactly the records from the position it joined at', async (t) => {
  const prefix = 'tail-';
  const q = await KafkaDigestQueue.open({ connection: { brokers: broker.brokers }, topicPrefix: prefix, partitions: 2, replicationFactor: 1, minInsyncReplicas: 1, deliveryTimeoutMs: 30_000, requestTimeoutMs: 10_000, logger: silentLogger });
  t.teardown(() => q.close());
  let partitions = 2;
  const tail = new KafkaTail({ connection: { brokers: broker.brokers }, topic: ingestTopic(prefix), partitions: () => partitions, timeoutMs: 10_000, logger: silentLogger });
  t.teardown(() => tail.close());
  for (let i = 0; i < 5; i++) await q.append(0, record(i));
  for (let i = 0; i < 3; i++) await q.append(1, record(i));

  const a = collector();
  const subA = await tail.listen(a.listener);
  t.same(subA.from, [5, 3], 'the first listener starts the tail at the ends');
  for (let i = 0; i < 2; i++) await q.append(0, record(i));
  await until('A hears offsets 5 and 6', () => (a.heard.get(0)?.length ?? 0) === 2);
  const b = collector();
  const subB = await tail.listen(b.listener);
  t.same(subB.from, [7, 3], 'a listener joining a running tail gets its position');
  for (let i = 0; i < 3; i++) await q.append(0, record(i));
  await q.append(1, record(0));
  await until('A and B hear the new records', () => (a.heard.get(0)?.length ?? 0) === 5 && (b.heard.get(0)?.length ?? 0) === 3 && (b.heard.get(1)?.length ?? 0) === 1);

  // A partition added to the layout: read from its start, also what came before the tail noticed it.
  await q.ensurePartitions(3);
  await q.append(2, record(0));
  partitions = 3;
  await q.append(2, record(1));
  await until('the new partition is heard', () => (a.heard.get(2)?.length ?? 0) === 2 && (b.heard.get(2)?.length ?? 0) === 2);
  await sleep(500);
  t.same(a.heard.get(0), range(5, 10), 'A: partition 0 from 5, in order, nothing missing or repeated');
  t.same(b.heard.get(0), range(7, 10), 'B: partition 0 from 7');
  t.same(a.heard.get(1), [3], 'A: partition 1 from 3');
  t.same(b.heard.get(2), [0, 1], 'B: the new partition from its start');

  // The last listener leaves: the tail stops; the next one starts it again at the ends.
  subA.stop();
  subB.stop();
  await sleep(1000);
  await q.append(0, record(99));
  const c = collector();
  const subC = await tail.listen(c.listener);
  t.same(subC.from, [11, 4, 2], 'a new start: at the ends again');
  await q.append(0, record(100));
  await until('C hears its record', () => (c.heard.get(0)?.length ?? 0) === 1);
  t.same(c.heard.get(0), [11]);
  subC.stop();
});
