export type { DigestQueue, QueueRecord, DurableRecord } from './digest-queue.js';
export { EmbeddedDigestQueue, type EmbeddedQueueOptions } from './embedded-queue.js';
export { QUEUE_FORMAT_VERSION, MAX_RECORD_BYTES, scanQueueFile, encodeQueueFrame } from './queue-file.js';
export type { FollowHandle } from './digest-queue.js';
export { KafkaDigestQueue, KAFKA_MAX_RECORD_BYTES, ingestTopic, type KafkaQueueOptions } from './kafka-queue.js';
export { kafkaHealthCheck } from './kafka-health.js';
export { openDigestQueue, kafkaConnection, type OpenQueueOptions } from './open-queue.js';
