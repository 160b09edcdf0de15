/** The DigestQueue contract (test/unit/queue/shared-suite.ts) on the Kafka queue, against a real broker. */
import t from 'tap';
import { KafkaDigestQueue } from '../../src/queue/kafka-queue.js';
import { silentLogger } from '../../src/lib/logger.js';
import { digestQueueSuite } from '../unit/queue/shared-suite.js';
import { startBroker } from '../helpers/kafka-broker.js';

const broker = await startBroker(t);
let n = 0;

digestQueueSuite(t, {
  async open(_t, partitions) {
    // Each test its own topic (prefix), on the one broker of this file.
    const prefix = `t${++n}-`;
    const open = (): Promise<KafkaDigestQueue> =>
      KafkaDigestQueue.open({
        connection: { brokers: broker.brokers },
        topicPrefix: prefix,
        partitions,
        replicationFactor: 1,
        minInsyncReplicas: 1,
        deliveryTimeoutMs: 15_000,
        requestTimeoutMs: 5000,
        logger: silentLogger,
      });
    return { q: await open(), reopen: open };
  },
});
