/**
 * The digest queue: durable, ordered, per-partition logs of ingest records. Ingest appends (and
 * acknowledges only once the append is durable); the digest reads each partition from its checkpoint
 * and lets the queue drop what every segment already holds. Offsets are positions in a partition's
 * stream: deterministic, so a replay sees every record at the same offset as before.
 *
 * Implementations: `EmbeddedDigestQueue` (files in the data dir, single node; offsets are byte
 * positions) and `KafkaDigestQueue` (topic `<prefix>service-ingest`, shared by a cluster; offsets are
 * Kafka offsets, so nextOffset = offset + 1). Both pass the shared suite in
 * test/unit/queue/shared-suite.ts. Offsets are only ever compared and handed back, never computed.
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

export interface FollowHandle {
  /** Stops the follow; resolves once no handler call is running and none will start. */
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
  /**
   * Whether an append to `partition` would wait for one already being made durable (embedded: its
   * write + fdatasync, or its file's rollover, is under way). Ingest prefers partitions that are
   * not, so concurrent requests do not queue behind each other's fsync. Kafka: not known (absent).
   */
  busy?(partition: number): boolean;
  /** Every intact record of `partition` at or after `fromOffset`, in order. */
  read(partition: number, fromOffset: number): AsyncIterable<QueueRecord>;
  /**
   * Follows `partition` live: every record from `fromOffset` on, in order, then each new one as it
   * becomes durable (appended by any node, for Kafka), awaiting `handler` before the next (records
   * fetched ahead are bounded). A handler that throws ends the follow and `onError` gets the error.
   * At most one follow per partition.
   */
  follow(partition: number, fromOffset: number, handler: (r: QueueRecord) => Promise<void>, onError?: (err: Error) => void): FollowHandle;
  /**
   * The offset the next append to `partition` will get (Kafka: a cached high watermark, raised by
   * this node's appends and refreshed from the brokers every few seconds).
   */
  endOffset(partition: number): number;
  /**
   * Records below `offset` are no longer needed (they are in durable segments). Kafka: nothing is
   * deleted (no DeleteRecords in node-rdkafka); the topic's retention bounds it.
   */
  truncateBelow(partition: number, offset: number): Promise<void>;
  /** Raises the partition count (never lowers it). */
  ensurePartitions(count: number): Promise<void>;
  /** Bytes held in the queue, all partitions (Kafka: an estimate from record counts). */
  sizeBytes(): number;
  /** Bytes `r` takes in this queue (embedded: with its frame, so offsets add up; Kafka: its payload). */
  recordBytes(r: QueueRecord): number;
  /**
   * Bytes of `partition`'s records in [from, to), without reading them: exact for the embedded
   * queue (offsets are byte positions); Kafka: the record count times the mean size of the records
   * this node appended or followed (0 before it saw any).
   */
  bytesBetween(partition: number, from: number, to: number): number;
  close(): Promise<void>;
}
