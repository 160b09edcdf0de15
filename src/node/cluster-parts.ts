/**
 * What only a cluster node runs (queue.kind = "kafka"): the cluster protocol, digest ownership,
 * peer queries and files, segment replication and the Kafka-backed global state and live tail.
 * node.ts imports this module only when the node is clustered, so a single node never loads their
 * code (docs/benchmarks.md, "Idle RSS of an empty node").
 */
export { KafkaGlobalLog } from '../global/kafka-log.js';
export { KafkaTail } from '../queue/kafka-tail.js';
export { ingestTopic } from '../queue/kafka-queue.js';
export { DigestOwnership } from '../cluster/digest-ownership.js';
export { LiveBoundary } from '../cluster/live-boundary.js';
export { loadClusterSecret } from '../cluster/cluster-secret.js';
export { startClusterProtocol } from './cluster-start.js';
