/**
 * The digest queue: durable, ordered, per-partition logs of ingest records. Ingest appends (and
 * acknowledges only once the append is durable); the digest reads each partition from its checkpoint
 * and lets the queue drop what every segment already holds. Offsets are positions in a partition's
 * stream: deterministic, so a replay sees every record at the same offset as before.
 *
 * Implementations: `EmbeddedDigestQueue` (files in the data dir, single node). A Kafka
 * implementation (topic `service-ingest`) is future work and must pass the same shared test suite.
 */

export interface QueueRecord {
  partition: number;
  offset: number;
  /** The offset of the record after this one. */
  nextOffset: number;
  payload: Buffer;
}

/** A record just made durable by this node, with the value the appender attached (if any). */
export interface DurableRecord extends QueueRecord {
  attachment: unknown;
}

export interface QueueFollower {
  /** Stops delivering; resolves once no handler call is running or will start. */
  stop(): Promise<void>;
}

export interface DigestQueue {
  readonly partitionCount: number;
  /**
   * Appends `payload` to `partition`; resolves with its offset once it is durable. Soon after (not
   * before: they are off the acknowledgement path), `onDurable` listeners see it, in offset order,
   * with `attachment` (the appender's decoded form, so the local digest need not decode it again).
   */
  append(partition: number, payload: Buffer, attachment?: unknown): Promise<number>;
  onDurable(listener: (r: DurableRecord) => void): void;
  /** Every intact record of `partition` at or after `fromOffset`, in order. */
  read(partition: number, fromOffset: number): AsyncIterable<QueueRecord>;
  /** The offset the next append to `partition` will get. */
  endOffset(partition: number): number;
  /** Records below `offset` are no longer needed (they are in durable segments). */
  truncateBelow(partition: number, offset: number): Promise<void>;
  /** Raises the partition count (never lowers it). */
  ensurePartitions(count: number): Promise<void>;
  /**
   * Delivers every record of `partition` from `fromOffset` on, in order, now and as they arrive
   * (from any node), awaiting the handler before the next (backpressure). A cluster's digest owner
   * reads its partitions this way (Kafka); a single node's digest uses `onDurable` instead.
   */
  follow?(partition: number, fromOffset: number, handler: (r: QueueRecord) => Promise<void> | void): QueueFollower;
  /** Bytes held in the queue, all partitions. */
  sizeBytes(): number;
  close(): Promise<void>;
}
