export type { DigestQueue, QueueRecord, DurableRecord, QueueFollower } from './digest-queue.js';
export { EmbeddedDigestQueue, type EmbeddedQueueOptions } from './embedded-queue.js';
export { QUEUE_FORMAT_VERSION, MAX_RECORD_BYTES, scanQueueFile, encodeQueueFrame } from './queue-file.js';
