/**
 * The digest queue on Kafka: topic `<prefix>service-ingest`, one Kafka partition per digest
 * partition, offsets = Kafka offsets (so a record's offset, and the event ids made from it, are the
 * same on every node that reads it).
 *
 * - The topic is created if missing (replication factor and min.insync.replicas from the config,
 *   retention generous: logsvc keeps its own checkpoints) and grown by `ensurePartitions`.
 * - `append` produces with an idempotent acks=all producer and resolves only on the record's delivery
 *   report; Kafka unreachable or slower than the delivery timeout rejects with E_UNAVAILABLE (503 with
 *   Retry-After): nothing is acknowledged that Kafka did not take. The producer object survives broker
 *   restarts (librdkafka reconnects), so appends succeed again once the broker is back.
 * - Readers assign partitions explicitly and start at offsets logsvc gives (no consumer-group offsets).
 * - `endOffset` is synchronous: a cached high watermark, raised by this node's delivery reports and
 *   refreshed from the brokers every `refreshIntervalMs` (other nodes append too).
 * - `truncateBelow` cannot delete: node-rdkafka 3.6's AdminClient has no DeleteRecords. The topic's
 *   retention (`retentionMs`) bounds it; the call only records the low mark for `sizeBytes`.
 * - `sizeBytes` and `bytesBetween` are estimates: record counts times the mean size of the records
 *   this node appended or followed (Kafka does not report a partition's bytes to clients).
 *   `recordBytes` of a record in hand is its payload's size.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { DigestQueue, DurableRecord, FollowHandle, QueueRecord } from './digest-queue.js';
import { KafkaAdmin, KafkaProducer, KafkaReader, type KafkaConnection, type KafkaMessage } from './kafka-client.js';

/** Records above this are refused (413) rather than sent: the topic and clients are set up for it. */
export const KAFKA_MAX_RECORD_BYTES = 64 * 1024 * 1024;
const DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000;

export interface KafkaQueueOptions {
  connection: KafkaConnection;
  topicPrefix: string;
  partitions: number;
  /** 0: the brokers' default.replication.factor. */
  replicationFactor: number;
  /** 0: the brokers' default min.insync.replicas. */
  minInsyncReplicas: number;
  deliveryTimeoutMs: number;
  requestTimeoutMs: number;
  logger: Logger;
  retentionMs?: number;
  /** How often the cached end offsets and the broker probe are refreshed. */
  refreshIntervalMs?: number;
  /** A probe slower than this turns the kafka health check WARN. */
  slowProbeMs?: number;
}

export const ingestTopic = (prefix: string): string => `${prefix}service-ingest`;

interface Probe {
  ok: boolean;
  ms: number;
  error: string;
  at: number;
}

export class KafkaDigestQueue implements DigestQueue {
  readonly topic: string;
  private parts = 0;
  /** Cached high watermark per partition (the offset the next record will get). */
  private ends: number[] = [];
  /** The low mark logsvc no longer needs (truncateBelow), per partition. */
  private lows: number[] = [];
  private readonly listeners: ((r: DurableRecord) => void)[] = [];
  /** Records this node appended or followed, and their bytes: the mean record size for estimates. */
  private readonly seen = { records: 0, bytes: 0 };
  private refresher: NodeJS.Timeout | null = null;
  private refreshing = false;
  private closed = false;
  private probe: Probe = { ok: true, ms: 0, error: '', at: 0 };
  private recentFailures = 0;
  private lastFailure = '';
  private readonly hub: FollowHub;

  private constructor(
    private readonly opts: KafkaQueueOptions,
    private readonly admin: KafkaAdmin,
    private readonly producer: KafkaProducer,
  ) {
    this.topic = ingestTopic(opts.topicPrefix);
    this.hub = new FollowHub(this.topic, opts, this.seen);
  }

  /** Connects, creates or grows the topic, reads the end offsets. Fails (E_UNAVAILABLE) when Kafka is unreachable. */
  static async open(opts: KafkaQueueOptions): Promise<KafkaDigestQueue> {
    const conn = withRecordLimits(opts.connection);
    const admin = await KafkaAdmin.connect(conn, opts.requestTimeoutMs);
    let producer: KafkaProducer;
    try {
      producer = await KafkaProducer.connect(conn, { deliveryTimeoutMs: opts.deliveryTimeoutMs, requestTimeoutMs: opts.requestTimeoutMs });
    } catch (err) {
      await admin.close();
      throw err;
    }
    const q = new KafkaDigestQueue({ ...opts, connection: conn }, admin, producer);
    try {
      await q.createTopic();
      await q.ensurePartitions(opts.partitions);
    } catch (err) {
      await q.close();
      throw err;
    }
    const every = opts.refreshIntervalMs ?? 2000;
    q.refresher = setInterval(() => void q.refresh(), every);
    q.refresher.unref();
    return q;
  }

  private async createTopic(): Promise<void> {
    const config: Record<string, string> = {
      'retention.ms': String(this.opts.retentionMs ?? DEFAULT_RETENTION_MS),
      'retention.bytes': '-1',
      'max.message.bytes': String(KAFKA_MAX_RECORD_BYTES + 1024 * 1024),
      'cleanup.policy': 'delete',
    };
    if (this.opts.minInsyncReplicas > 0) config['min.insync.replicas'] = String(this.opts.minInsyncReplicas);
    const have = await this.admin.partitionCount(this.topic);
    if (have === null) {
      const created = await this.admin.createTopic({ name: this.topic, partitions: this.opts.partitions, replicationFactor: this.opts.replicationFactor > 0 ? this.opts.replicationFactor : -1, config });
      if (created) this.opts.logger.info('kafka: created the ingest topic', { topic: this.topic, partitions: this.opts.partitions });
      await this.admin.waitForPartitions(this.topic, this.opts.partitions);
    }
  }

  get partitionCount(): number {
    return this.parts;
  }

  async ensurePartitions(count: number): Promise<void> {
    if (count <= this.parts) return;
    await this.admin.growPartitions(this.topic, count);
    const have = (await this.admin.partitionCount(this.topic)) ?? count;
    for (let p = this.parts; p < have; p++) {
      // A new partition's leader may not be elected yet: retry (bounded) while Kafka says so.
      const w = await retryUnavailable(() => this.admin.watermarks(this.topic, p), this.opts.requestTimeoutMs * 2);
      this.ends[p] = Math.max(this.ends[p] ?? 0, w.high);
      this.lows[p] = w.low;
    }
    await this.producer.awaitPartitions(this.topic, have, this.opts.requestTimeoutMs * 2);
    // The topic may have more partitions than asked (another node grew it): use them all.
    this.parts = Math.max(this.parts, have);
  }

  private check(partition: number): void {
    if (!Number.isInteger(partition) || partition < 0 || partition >= this.parts) throw new LogsvcError('E_INTERNAL', `digest queue has no partition ${partition}`);
  }

  onDurable(listener: (r: DurableRecord) => void): void {
    this.listeners.push(listener);
  }

  async append(partition: number, payload: Buffer, attachment?: unknown): Promise<number> {
    this.check(partition);
    if (payload.length > KAFKA_MAX_RECORD_BYTES) throw new LogsvcError('E_BODY_TOO_LARGE', `digest queue record of ${payload.length} bytes is over the Kafka queue's limit of ${KAFKA_MAX_RECORD_BYTES}`);
    let offset: number;
    try {
      offset = await this.producer.send(this.topic, partition, payload);
    } catch (err) {
      this.recentFailures++;
      this.lastFailure = (err as Error).message;
      throw err instanceof LogsvcError && err.code === 'E_INTERNAL' ? new LogsvcError('E_UNAVAILABLE', `${err.message}; retry later`, { cause: err }) : err;
    }
    this.recentFailures = 0;
    this.seen.bytes += payload.length;
    this.seen.records++;
    if (offset + 1 > (this.ends[partition] ?? 0)) this.ends[partition] = offset + 1;
    if (this.listeners.length > 0) {
      // Off the acknowledgement path; delivery reports of a partition arrive in offset order and
      // setImmediate callbacks run in order, so listeners see each partition in offset order.
      const rec: DurableRecord = { partition, offset, nextOffset: offset + 1, payload, attachment };
      setImmediate(() => this.notify(rec));
    }
    return offset;
  }

  private notify(rec: DurableRecord): void {
    for (const l of this.listeners) {
      try {
        l(rec);
      } catch (err) {
        this.opts.logger.error('digest queue listener failed', { partition: rec.partition, offset: rec.offset, error: (err as Error).message });
      }
    }
  }

  endOffset(partition: number): number {
    this.check(partition);
    return this.ends[partition] ?? 0;
  }

  /** Reads the partition's end offset from the brokers now (the cached `endOffset` lags by up to the refresh interval). */
  async fetchEndOffset(partition: number): Promise<number> {
    this.check(partition);
    const w = await this.admin.watermarks(this.topic, partition);
    if (w.high > (this.ends[partition] ?? 0)) this.ends[partition] = w.high;
    return w.high;
  }

  async *read(partition: number, fromOffset: number): AsyncIterable<QueueRecord> {
    this.check(partition);
    const w = await this.admin.watermarks(this.topic, partition);
    if (w.high > (this.ends[partition] ?? 0)) this.ends[partition] = w.high;
    const start = Math.max(fromOffset, w.low);
    if (start >= w.high) return;
    const reader = await KafkaReader.connect(this.opts.connection, { role: 'reader', timeoutMs: this.opts.requestTimeoutMs });
    try {
      reader.assign([{ topic: this.topic, partition, offset: start }]);
      let next = start;
      let idleSince = Date.now();
      while (next < w.high) {
        const batch = await reader.consume(500, 200);
        if (batch.length === 0) {
          // The records are there (below the high watermark): a long silence means Kafka is gone.
          if (Date.now() - idleSince > this.opts.deliveryTimeoutMs) throw new LogsvcError('E_UNAVAILABLE', `Kafka read of ${this.topic}[${partition}] from ${next}: nothing arrived for ${this.opts.deliveryTimeoutMs} ms`);
          continue;
        }
        idleSince = Date.now();
        for (const m of batch) {
          if (m.partition !== partition || m.offset < next) continue;
          if (m.offset >= w.high) return;
          next = m.offset + 1;
          yield { partition, offset: m.offset, nextOffset: m.offset + 1, payload: m.value };
        }
      }
    } finally {
      await reader.close();
    }
  }

  /**
   * Delivers every record of `partition` from `fromOffset` on, in order, as they arrive, awaiting
   * `handler` for each (at most `maxBufferedBytes` are fetched ahead). Survives broker restarts: the
   * consumer reconnects and continues at its position. A handler error stops the follow and is
   * passed to `onError`.
   */
  follow(partition: number, fromOffset: number, handler: (r: QueueRecord) => Promise<void>, onError?: (err: Error) => void): FollowHandle {
    this.check(partition);
    return this.hub.add(partition, fromOffset, handler, onError ?? ((err) => this.opts.logger.error('digest queue follow stopped', { partition, error: err.message })));
  }

  async truncateBelow(partition: number, offset: number): Promise<void> {
    this.check(partition);
    // No DeleteRecords in node-rdkafka: Kafka's retention removes old records. Remember the mark.
    if (offset > (this.lows[partition] ?? 0)) this.lows[partition] = Math.min(offset, this.ends[partition] ?? offset);
  }

  sizeBytes(): number {
    let n = 0;
    for (let p = 0; p < this.parts; p++) n += Math.max(0, (this.ends[p] ?? 0) - (this.lows[p] ?? 0));
    return this.estimate(n);
  }

  recordBytes(r: QueueRecord): number {
    return r.payload.length;
  }

  bytesBetween(_partition: number, from: number, to: number): number {
    return this.estimate(Math.max(0, to - from));
  }

  private estimate(records: number): number {
    return this.seen.records === 0 ? 0 : Math.round((records * this.seen.bytes) / this.seen.records);
  }

  /** Refreshes the cached end offsets and the broker probe. */
  async refresh(): Promise<void> {
    if (this.refreshing || this.closed) return;
    this.refreshing = true;
    const t0 = Date.now();
    try {
      await this.admin.brokers(this.opts.requestTimeoutMs);
      for (let p = 0; p < this.parts && !this.closed; p++) {
        const w = await this.admin.watermarks(this.topic, p, this.opts.requestTimeoutMs);
        if (w.high > (this.ends[p] ?? 0)) this.ends[p] = w.high;
        if (w.low > (this.lows[p] ?? 0)) this.lows[p] = w.low;
      }
      this.probe = { ok: true, ms: Date.now() - t0, error: '', at: Date.now() };
    } catch (err) {
      this.probe = { ok: false, ms: Date.now() - t0, error: (err as Error).message, at: Date.now() };
    } finally {
      this.refreshing = false;
    }
  }

  /** The state the `kafka` health check reports. */
  health(): { reachable: boolean; probeMs: number; slowProbeMs: number; error: string; failingAppends: number; lastAppendError: string; inFlight: number; brokers: string; topic: string } {
    return {
      reachable: this.probe.ok,
      probeMs: this.probe.ms,
      slowProbeMs: this.opts.slowProbeMs ?? 1000,
      error: this.probe.error,
      failingAppends: this.recentFailures,
      lastAppendError: this.lastFailure,
      inFlight: this.producer.inFlight,
      brokers: this.opts.connection.brokers,
      topic: this.topic,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.refresher !== null) clearInterval(this.refresher);
    // Independent clients, closed together: each librdkafka disconnect can take seconds (a consumer
    // closing ~6 s), and one after another they overran the node's stop step.
    await Promise.all([this.hub.close(), this.producer.close(), this.admin.close()]);
  }
}

/** Client properties for records up to KAFKA_MAX_RECORD_BYTES (the pass-through properties still win). */
function withRecordLimits(c: KafkaConnection): KafkaConnection {
  const limits = {
    'message.max.bytes': KAFKA_MAX_RECORD_BYTES + 1024 * 1024,
    'receive.message.max.bytes': KAFKA_MAX_RECORD_BYTES + 2 * 1024 * 1024,
  };
  return { ...c, properties: { ...limits, ...(c.properties ?? {}) } };
}

/** A follow holds at most this many fetched records (or bytes) before its partition is paused. */
const FOLLOW_MAX_RECORDS = 2000;
const FOLLOW_MAX_BYTES = 32 * 1024 * 1024;

interface Follow {
  partition: number;
  /** The offset the handler needs next. */
  next: number;
  buffer: KafkaMessage[];
  bufferedBytes: number;
  paused: boolean;
  stopping: boolean;
  /** Wakes the follow's drain loop. */
  wake: (() => void) | null;
  done: Promise<void>;
}

/**
 * Every live follow of the queue shares one consumer (one libuv thread at a time, one set of
 * librdkafka threads): a fetch loop hands each partition's records to that follow's buffer; a follow
 * whose buffer is full has its partition paused until its handler catches up. Positions are logsvc's
 * (each follow's `next`): the assignment is rebuilt from them whenever a follow starts or stops, and
 * a record past `next` (a gap) makes the follow re-seek instead of skipping anything.
 */
class FollowHub {
  private readonly follows = new Map<number, Follow>();
  private reader: KafkaReader | null = null;
  private loop: Promise<void> | null = null;
  private reassign = false;
  private closed = false;
  /** Partitions paused on the current reader (librdkafka's application pause). */
  private readonly pausedOnReader = new Set<number>();

  constructor(
    private readonly topic: string,
    private readonly opts: KafkaQueueOptions,
    /** The queue's count of records seen and their bytes, raised by each record handed to a follow. */
    private readonly seen: { records: number; bytes: number },
  ) {}

  add(partition: number, fromOffset: number, handler: (r: QueueRecord) => Promise<void>, onError: (err: Error) => void): FollowHandle {
    if (this.closed) throw new LogsvcError('E_UNAVAILABLE', 'the Kafka digest queue is closed');
    if (this.follows.has(partition)) throw new LogsvcError('E_INTERNAL', `digest queue partition ${partition} is already followed`);
    const f: Follow = { partition, next: fromOffset, buffer: [], bufferedBytes: 0, paused: false, stopping: false, wake: null, done: Promise.resolve() };
    f.done = this.drain(f, handler).catch((err: unknown) => {
      if (!f.stopping) onError(err as Error);
      f.stopping = true;
      this.remove(f);
    });
    this.follows.set(partition, f);
    this.reassign = true;
    this.startLoop();
    return {
      stop: async () => {
        f.stopping = true;
        f.wake?.();
        this.remove(f);
        await f.done;
      },
    };
  }

  private remove(f: Follow): void {
    if (this.follows.get(f.partition) === f) {
      this.follows.delete(f.partition);
      this.reassign = true;
    }
  }

  private async drain(f: Follow, handler: (r: QueueRecord) => Promise<void>): Promise<void> {
    while (!f.stopping) {
      const m = f.buffer.shift();
      if (m === undefined) {
        await new Promise<void>((r) => (f.wake = r));
        f.wake = null;
        continue;
      }
      f.bufferedBytes -= m.value.length;
      this.seen.records++;
      this.seen.bytes += m.value.length;
      await handler({ partition: f.partition, offset: m.offset, nextOffset: m.offset + 1, payload: m.value });
      f.next = m.offset + 1;
      if (f.paused && f.buffer.length < FOLLOW_MAX_RECORDS / 2 && f.bufferedBytes < FOLLOW_MAX_BYTES / 2) {
        f.paused = false;
        if (this.reader !== null && this.pausedOnReader.delete(f.partition)) this.reader.resume(this.topic, f.partition);
      }
    }
  }

  private startLoop(): void {
    if (this.loop !== null) return;
    const run = this.fetchLoop();
    this.loop = run;
    run
      .catch((err: unknown) => this.opts.logger.error('digest queue follow: the fetch loop failed', { error: (err as Error).message }))
      .finally(() => {
        if (this.loop === run) this.loop = null;
      });
  }

  /**
   * Fetches for every follow until none is left. It ends only where it sees none left, in the same
   * step as it says so (`loop` null): a follow added while the consumer closes (librdkafka's close
   * takes from milliseconds to seconds) finds the loop still running and starts none, so this loop
   * goes on for it. Ending after the close instead left such a follow with no fetch loop at all: a
   * node given back its one digest partition moments after losing it digested nothing more.
   */
  private async fetchLoop(): Promise<void> {
    for (;;) {
      await this.fetchWhileFollowed();
      const r = this.reader;
      this.reader = null;
      this.pausedOnReader.clear();
      await r?.close().catch((err: unknown) => this.opts.logger.warn('digest queue follow: closing the consumer failed', { error: (err as Error).message }));
      if (this.closed || this.follows.size === 0) {
        this.loop = null;
        return;
      }
    }
  }

  private async fetchWhileFollowed(): Promise<void> {
    while (!this.closed && this.follows.size > 0) {
      try {
        this.reader ??= await KafkaReader.connect(this.opts.connection, { role: 'follower', timeoutMs: this.opts.requestTimeoutMs });
      } catch (err) {
        this.opts.logger.warn('digest queue follow: Kafka unreachable, retrying', { error: (err as Error).message });
        await sleep(1000);
        continue;
      }
      const reader = this.reader;
      if (this.reassign && this.pausedOnReader.size > 0) {
        // librdkafka keeps an application's pause across unassign/assign (the partition would never
        // be fetched again), and a resume racing an assignment can be dropped as outdated: a
        // re-assignment while anything is paused starts from a fresh consumer instead.
        this.reader = null;
        this.pausedOnReader.clear();
        for (const f of this.follows.values()) f.paused = false;
        await reader.close().catch(() => undefined);
        continue;
      }
      if (this.reassign) {
        this.reassign = false;
        // From each follow's own position: what it has buffered plus what it has handled.
        const parts = [...this.follows.values()].map((f) => ({ topic: this.topic, partition: f.partition, offset: f.buffer.at(-1) === undefined ? f.next : f.buffer.at(-1)!.offset + 1 }));
        reader.assign(parts);
        for (const f of this.follows.values()) f.paused = false;
      }
      let batch: KafkaMessage[];
      try {
        batch = await reader.consume(500, 200);
      } catch (err) {
        // Transient (a broker restarting): librdkafka reconnects and keeps the positions.
        this.opts.logger.warn('digest queue follow: consume failed, retrying', { error: (err as Error).message });
        await sleep(500);
        continue;
      }
      for (const m of batch) {
        const f = this.follows.get(m.partition);
        if (f === undefined || f.stopping) continue;
        const expected = f.buffer.at(-1) === undefined ? f.next : f.buffer.at(-1)!.offset + 1;
        if (m.offset < expected) continue; // already have it
        if (m.offset > expected) {
          // A gap (records from before a re-assignment): never skip, re-seek from what we have.
          this.reassign = true;
          continue;
        }
        f.buffer.push(m);
        f.bufferedBytes += m.value.length;
        f.wake?.();
        if (!f.paused && (f.buffer.length >= FOLLOW_MAX_RECORDS || f.bufferedBytes >= FOLLOW_MAX_BYTES)) {
          f.paused = true;
          this.pausedOnReader.add(f.partition);
          reader.pause(this.topic, f.partition);
        }
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.follows.values()];
    for (const f of all) {
      f.stopping = true;
      f.wake?.();
    }
    this.follows.clear();
    await Promise.all(all.map((f) => f.done));
    await this.loop;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Calls `fn` until it does not fail with a retriable error, for at most `boundMs`. */
async function retryUnavailable<T>(fn: () => Promise<T>, boundMs: number): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof LogsvcError && err.retriable) || Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}
