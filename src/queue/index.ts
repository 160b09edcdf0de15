export type { DigestQueue, QueueRecord, DurableRecord } from './digest-queue.js';
export { EmbeddedDigestQueue, type EmbeddedQueueOptions } from './embedded-queue.js';
export { QUEUE_FORMAT_VERSION, MAX_RECORD_BYTES, scanQueueFile, encodeQueueFrame } from './queue-file.js';
export type { FollowHandle } from './digest-queue.js';
// The Kafka queue is imported from './kafka-queue.js' directly, never through this index: worker
// threads import this index, and node-rdkafka's addon cannot load in a worker thread.
