/**
 * The node's digest queue as configured: `queue.kind = "embedded"` (files under the data dir) or
 * `"kafka"` (the `[kafka]` cluster's `<prefix>service-ingest` topic, created or grown here). With
 * Kafka, `health` gets the `kafka` check.
 */
import { join } from 'node:path';
import type { NodeConfig } from '../config/schema.js';
import type { CheckResult } from '../health/index.js';
import type { Logger } from '../lib/logger.js';
import type { DigestQueue } from './digest-queue.js';
import { EmbeddedDigestQueue } from './embedded-queue.js';
import { kafkaHealthCheck } from './kafka-health.js';

export interface OpenQueueOptions {
  config: NodeConfig;
  dataDir: string;
  partitions: number;
  logger: Logger;
  onFatal: (err: Error) => void;
}

/** The Kafka client settings of the config (also for other Kafka users, e.g. global state). */
export function kafkaConnection(config: NodeConfig): { brokers: string; properties: Record<string, string | number | boolean>; clientId: string } {
  return { brokers: config.kafka.brokers, properties: { ...config.kafka.properties }, clientId: `logsvc-node${config.node.id}` };
}

export async function openDigestQueue(o: OpenQueueOptions): Promise<{ queue: DigestQueue; healthCheck: (() => CheckResult) | null }> {
  if (o.config.queue.kind === 'embedded') {
    return { queue: await EmbeddedDigestQueue.open({ dir: join(o.dataDir, 'queue'), partitions: o.partitions, fileBytes: o.config.queue.file_bytes, logger: o.logger, onFatal: o.onFatal }), healthCheck: null };
  }
  const k = o.config.kafka;
  // Loaded only for queue.kind = "kafka": a single node never loads the Kafka queue and client.
  const { KafkaDigestQueue } = await import('./kafka-queue.js');
  const queue = await KafkaDigestQueue.open({
    connection: kafkaConnection(o.config),
    topicPrefix: k.topic_prefix,
    partitions: o.partitions,
    replicationFactor: k.topic_replication_factor,
    minInsyncReplicas: k.min_insync_replicas,
    deliveryTimeoutMs: k.delivery_timeout_ms,
    requestTimeoutMs: k.request_timeout_ms,
    logger: o.logger,
  });
  return { queue, healthCheck: () => kafkaHealthCheck(queue) };
}
