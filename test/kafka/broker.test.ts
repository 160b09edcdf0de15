/**
 * bin/kafka-dev and the test helper: a real KRaft broker starts on free loopback ports, takes and
 * serves a record through node-rdkafka (the kafka-client wrappers), restarts on the same data dir
 * keeping the topic, and is stopped by its PID.
 */
import t from 'tap';
import { KafkaAdmin, KafkaProducer, KafkaReader } from '../../src/queue/kafka-client.js';
import { pidAlive, startBroker } from '../helpers/kafka-broker.js';


async function readOne(brokers: string, topic: string, offset: number): Promise<string[]> {
  const r = await KafkaReader.connect({ brokers }, { role: 'test-reader', timeoutMs: 10_000 });
  try {
    r.assign([{ topic, partition: 0, offset }]);
    const got: string[] = [];
    for (let i = 0; i < 60 && got.length === 0; i++) for (const m of await r.consume(10, 500)) got.push(`${m.offset}:${m.value.toString()}`);
    return got;
  } finally {
    await r.close();
  }
}

t.test('start, produce and consume one record, restart keeps it, stop by PID', async (t) => {
  const broker = await startBroker(t);
  t.match(broker.brokers, /^127\.0\.0\.1:\d+$/);
  t.ok(pidAlive(broker.pid), 'the broker JVM runs');
  const c = { brokers: broker.brokers };

  const admin = await KafkaAdmin.connect(c, 15_000);
  t.equal(await admin.createTopic({ name: 'smoke', partitions: 1, replicationFactor: 1, config: {} }), true, 'created');
  t.equal(await admin.createTopic({ name: 'smoke', partitions: 1, replicationFactor: 1, config: {} }), false, 'exists: not created twice');
  await admin.close();

  const p = await KafkaProducer.connect(c, { deliveryTimeoutMs: 15_000, requestTimeoutMs: 5_000 });
  t.equal(await p.send('smoke', 0, Buffer.from('hello kafka')), 0, 'offset 0 from the delivery report');
  await p.close();
  t.strictSame(await readOne(broker.brokers, 'smoke', 0), ['0:hello kafka']);

  const first = broker.pid;
  await broker.stop();
  t.notOk(pidAlive(first), 'stopped by PID');
  await broker.restart();
  t.not(broker.pid, first, 'a new JVM');
  t.strictSame(await readOne(broker.brokers, 'smoke', 0), ['0:hello kafka'], 'the record survived the restart');

  const second = broker.pid;
  await broker.kill();
  t.notOk(pidAlive(second), 'killed by PID');
});
