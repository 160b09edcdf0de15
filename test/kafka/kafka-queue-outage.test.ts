/**
 * The Kafka queue when its broker goes away under load: appends reject retriably (E_UNAVAILABLE, so
 * ingest answers 503 with Retry-After) within the delivery timeout, nothing is reported durable that
 * Kafka did not take, the kafka health check goes DOWN, and once the broker is back the same queue
 * object appends again and every acknowledged record is there with its payload.
 */
import t from 'tap';
import { KafkaDigestQueue } from '../../src/queue/kafka-queue.js';
import { kafkaHealthCheck } from '../../src/queue/kafka-health.js';
import { silentLogger } from '../../src/lib/logger.js';
import { LogsvcError } from '../../src/lib/errors.js';
import { readAll } from '../unit/queue/shared-suite.js';
import { startBroker } from '../helpers/kafka-broker.js';

t.setTimeout(300_000);

const DELIVERY_TIMEOUT_MS = 4000;

t.test('broker stopped under load, then restarted', async (t) => {
  const broker = await startBroker(t);
  const q = await KafkaDigestQueue.open({
    connection: { brokers: broker.brokers },
    topicPrefix: 'outage-',
    partitions: 2,
    replicationFactor: 1,
    minInsyncReplicas: 1,
    deliveryTimeoutMs: DELIVERY_TIMEOUT_MS,
    requestTimeoutMs: 2000,
    refreshIntervalMs: 500,
    logger: silentLogger,
  });
  t.teardown(() => q.close());
  const durable = new Set<string>();
  q.onDurable((r) => durable.add(`${r.partition}:${r.offset}:${r.payload.toString()}`));

  const acked = new Map<string, { partition: number; offset: number }>();
  const rejected: { err: unknown; ms: number }[] = [];
  let phase: 'before' | 'down' | 'after' = 'before';
  let ackedAfter = 0;
  let stop = false;
  let seq = 0;
  const worker = async (w: number): Promise<void> => {
    while (!stop) {
      const id = `w${w}-${seq++}`;
      const partition = seq % 2;
      const t0 = Date.now();
      try {
        const offset = await q.append(partition, Buffer.from(id));
        acked.set(id, { partition, offset });
        if (phase === 'after') ackedAfter++;
      } catch (err) {
        rejected.push({ err, ms: Date.now() - t0 });
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const workers = [0, 1, 2, 3].map((w) => worker(w));
  const until = async (what: string, cond: () => boolean, ms: number): Promise<void> => {
    const deadline = Date.now() + ms;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    await until('acks before the outage', () => acked.size >= 200, 60_000);
    // OK, or WARN when the probe is slow (a busy machine): never DOWN while the broker runs.
    t.match(kafkaHealthCheck(q).status, /^(OK|WARN)$/, 'health OK while the broker runs');
    phase = 'down';
    await broker.stop();
    const ackedAtStop = acked.size;
    await until('rejections while the broker is down', () => rejected.length >= 8, 60_000);
    t.ok(acked.size - ackedAtStop < 200, `few appends in flight at the stop were acknowledged (${acked.size - ackedAtStop})`);
    await until('the health check to go DOWN', () => kafkaHealthCheck(q).status === 'DOWN', 30_000);
    t.match(kafkaHealthCheck(q), { name: 'kafka', status: 'DOWN' });
    await broker.restart();
    phase = 'after';
    await until('acks after the restart', () => ackedAfter >= 100, 90_000);
    await until('the health check to recover', () => kafkaHealthCheck(q).status !== 'DOWN', 60_000);
  } finally {
    stop = true;
    await Promise.all(workers);
  }

  t.ok(rejected.length >= 8, `${rejected.length} appends rejected`);
  t.ok(
    rejected.every((r) => r.err instanceof LogsvcError && r.err.code === 'E_UNAVAILABLE' && r.err.retriable && r.err.httpStatus === 503),
    'every rejection is E_UNAVAILABLE, retriable, HTTP 503',
  );
  const slowest = Math.max(...rejected.map((r) => r.ms));
  t.ok(slowest <= DELIVERY_TIMEOUT_MS + 5000, `rejected within the delivery timeout (slowest ${slowest} ms, timeout ${DELIVERY_TIMEOUT_MS} ms)`);
  t.ok(ackedAfter >= 100, 'the same queue object appends again after the restart');

  // Every acknowledged record is in Kafka, at its offset, with its payload; onDurable saw exactly the acknowledged ones.
  const stored = new Map<string, string>();
  for (const p of [0, 1]) for (const r of await readAll(q, p)) stored.set(`${p}:${r.offset}`, r.payload.toString());
  const missing = [...acked].filter(([id, a]) => stored.get(`${a.partition}:${a.offset}`) !== id);
  t.strictSame(missing.slice(0, 5), [], `all ${acked.size} acknowledged records are stored at their offsets`);
  await until('the last durable notifications', () => durable.size >= acked.size, 10_000).catch(() => undefined);
  t.strictSame(
    [...durable].sort(),
    [...acked].map(([id, a]) => `${a.partition}:${a.offset}:${id}`).sort(),
    'onDurable reported exactly the acknowledged records',
  );
});
