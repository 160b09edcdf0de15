/**
 * node-rdkafka's one home: every producer, consumer and admin client of the node is made here, from
 * one `KafkaConnection` (bootstrap brokers plus pass-through librdkafka properties), and every
 * librdkafka error becomes a LogsvcError here. Nothing else imports node-rdkafka: the digest queue
 * (kafka-queue.ts) and the global-state transport use these wrappers.
 *
 * The wrappers are promise-shaped and small on purpose: they expose what logsvc needs (idempotent
 * acks=all produce with a per-record delivery report, explicit assignment and seek, watermarks,
 * topic creation and growth), not the whole client.
 */
import { createRequire } from 'node:module';
import type * as RdKafka from 'node-rdkafka';
import { LogsvcError } from '../lib/errors.js';

// node-rdkafka is CommonJS with a native addon that may be loaded once per process and never in a
// worker thread (it is not context-aware): load it on first use, not when this module is imported
// (the worker pools import modules that import this one).
let loaded: typeof RdKafka | null = null;
function rd(): typeof RdKafka {
  loaded ??= createRequire(import.meta.url)('node-rdkafka') as typeof RdKafka;
  return loaded;
}

export type KafkaPropertyValue = string | number | boolean;

export interface KafkaConnection {
  /** Bootstrap list as librdkafka takes it: "host:port,host:port". */
  brokers: string;
  /** Extra librdkafka properties, passed through as given (they win over logsvc's defaults). */
  properties?: Record<string, KafkaPropertyValue>;
  /** client.id prefix; each client adds its role. */
  clientId?: string;
}

export interface KafkaMessage {
  topic: string;
  partition: number;
  offset: number;
  value: Buffer;
}

export interface Watermarks {
  low: number;
  high: number;
}

/** librdkafka's own codes for "the cluster is unreachable or too slow" (negative: client-side). */
let unavailableCodes: ReadonlySet<number> | null = null;
function isUnavailableCode(code: number): boolean {
  if (unavailableCodes === null) {
    const E = rd().CODES.ERRORS;
    unavailableCodes = new Set([
      E.ERR__TRANSPORT,
      E.ERR__MSG_TIMED_OUT,
      E.ERR__ALL_BROKERS_DOWN,
      E.ERR__TIMED_OUT,
      E.ERR__QUEUE_FULL,
      E.ERR__RESOLVE,
      E.ERR_REQUEST_TIMED_OUT,
      E.ERR_NOT_ENOUGH_REPLICAS,
      E.ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
      E.ERR_LEADER_NOT_AVAILABLE,
      E.ERR_NOT_LEADER_FOR_PARTITION,
      E.ERR_BROKER_NOT_AVAILABLE,
      E.ERR_NETWORK_EXCEPTION,
      E.ERR_COORDINATOR_NOT_AVAILABLE,
      E.ERR__WAIT_COORD,
    ]);
  }
  return unavailableCodes.has(code);
}

/** Whether `err` is librdkafka's error `name` (e.g. "ERR_TOPIC_ALREADY_EXISTS"). */
function isKafkaError(err: unknown, name: 'ERR_TOPIC_ALREADY_EXISTS' | 'ERR_INVALID_PARTITIONS' | 'ERR_UNKNOWN_TOPIC_OR_PART'): boolean {
  const code = kafkaErrorCode(err);
  return code !== undefined && code === rd().CODES.ERRORS[name];
}

interface RdError {
  message?: string;
  code?: number;
  isRetriable?: boolean;
}

export function kafkaErrorCode(err: unknown): number | undefined {
  const c = (err as RdError | null)?.code;
  return typeof c === 'number' ? c : undefined;
}

/** A librdkafka error as a LogsvcError: unreachable/slow/not-enough-replicas are retriable (503). */
export function kafkaError(what: string, err: unknown): LogsvcError {
  if (err instanceof LogsvcError) return err;
  const e = (err ?? {}) as RdError;
  const code = kafkaErrorCode(err);
  const msg = `${what}: ${e.message ?? String(err)}${code === undefined ? '' : ` (librdkafka code ${code})`}`;
  const unavailable = (code !== undefined && isUnavailableCode(code)) || e.isRetriable === true;
  return new LogsvcError(unavailable ? 'E_UNAVAILABLE' : 'E_INTERNAL', `Kafka ${msg}`, { cause: err });
}

function baseConfig(c: KafkaConnection, role: string): Record<string, KafkaPropertyValue> {
  return {
    'metadata.broker.list': c.brokers,
    'client.id': `${c.clientId ?? 'logsvc'}-${role}`,
    // Reconnect quickly after a broker restart, without hammering it.
    'reconnect.backoff.ms': 100,
    'reconnect.backoff.max.ms': 2000,
    'socket.keepalive.enable': true,
    // librdkafka logs through the client's event.log; keep it quiet unless asked.
    log_level: 3,
  };
}

function merged(c: KafkaConnection, role: string, own: Record<string, KafkaPropertyValue>): Record<string, KafkaPropertyValue> {
  return { ...baseConfig(c, role), ...own, ...(c.properties ?? {}) };
}

function connectClient<T extends RdKafka.Client<string>>(client: T, what: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    client.connect({ timeout: timeoutMs }, (err) => {
      if (err) reject(kafkaError(`${what}: connect`, err));
      else resolve(client);
    });
  });
}

function disconnectClient(client: RdKafka.Client<string>, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!client.isConnected()) return resolve();
    const timer = setTimeout(resolve, timeoutMs + 1000);
    client.disconnect(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export interface ProducerOptions {
  /** A record not acknowledged by the cluster within this is failed (delivery.timeout.ms). */
  deliveryTimeoutMs: number;
  /** request.timeout.ms: one produce request's bound. */
  requestTimeoutMs: number;
  /** Batching delay (linger.ms); small, since acknowledgements wait for it. */
  lingerMs?: number;
}

interface InFlight {
  resolve: (offset: number) => void;
  reject: (err: LogsvcError) => void;
  /** When the caller stops waiting, delivery report or not. */
  deadline: number;
  topic: string;
  partition: number;
}

/** Past delivery.timeout.ms, how long a send may still wait for librdkafka's own verdict. */
const REPORT_GRACE_MS = 1000;

/**
 * An idempotent producer with acks=all. `send` resolves with the record's offset once its delivery
 * report says the cluster took it, and rejects (retriable when Kafka is down or slow) otherwise.
 *
 * The rejection is bounded by our own deadline too: librdkafka's idempotent producer keeps a record
 * that was in flight when the broker went away past delivery.timeout.ms (it cannot know whether the
 * broker wrote it). Such a record may still be written later; it was never acknowledged to anyone.
 */
export class KafkaProducer {
  private seq = 0;
  private readonly inflight = new Map<number, InFlight>();
  private closed = false;
  private poller: NodeJS.Timeout | null = null;
  private lastError: string | null = null;

  private constructor(
    private readonly p: RdKafka.Producer,
    private readonly opts: ProducerOptions,
  ) {}

  static async connect(c: KafkaConnection, opts: ProducerOptions): Promise<KafkaProducer> {
    const p = new (rd().Producer)(
      merged(c, 'producer', {
        'enable.idempotence': true,
        acks: 'all',
        dr_cb: true,
        'delivery.timeout.ms': opts.deliveryTimeoutMs,
        'request.timeout.ms': Math.min(opts.requestTimeoutMs, opts.deliveryTimeoutMs),
        'linger.ms': opts.lingerMs ?? 2,
        'queue.buffering.max.messages': 1_000_000,
        'queue.buffering.max.kbytes': 256 * 1024,
        'max.in.flight.requests.per.connection': 5,
      }) as RdKafka.ProducerGlobalConfig,
      {},
    );
    const kp = new KafkaProducer(p, opts);
    p.on('delivery-report', (err, report) => kp.onReport(err, report));
    p.on('event.error', (err) => {
      kp.lastError = err.message;
    });
    await connectClient(p, 'producer', opts.requestTimeoutMs);
    // Delivery reports come through poll(): poll often, since acknowledgements wait for them.
    let sweep = 0;
    kp.poller = setInterval(() => {
      if (p.isConnected()) p.poll();
      if (++sweep % 50 === 0) kp.expire(Date.now());
    }, 5);
    kp.poller.unref();
    return kp;
  }

  private onReport(err: RdKafka.LibrdKafkaError | null, report: RdKafka.DeliveryReport): void {
    const id = report.opaque as number;
    const f = this.inflight.get(id);
    if (f === undefined) return;
    this.inflight.delete(id);
    if (err) f.reject(kafkaError(`produce to ${report.topic}[${report.partition}]`, err));
    else f.resolve(report.offset);
  }

  /** Rejects the sends whose deadline passed (the map is in send order, so the oldest come first). */
  private expire(now: number): void {
    for (const [id, f] of this.inflight) {
      if (f.deadline > now) break;
      this.inflight.delete(id);
      f.reject(new LogsvcError('E_UNAVAILABLE', `Kafka did not confirm a record for ${f.topic}[${f.partition}] within ${this.opts.deliveryTimeoutMs} ms (delivery timeout); retry later`));
    }
  }

  get inFlight(): number {
    return this.inflight.size;
  }

  /** The client's last asynchronous error (e.g. "all brokers down"), for health. */
  get lastClientError(): string | null {
    return this.lastError;
  }

  send(topic: string, partition: number, value: Buffer): Promise<number> {
    if (this.closed) return Promise.reject(new LogsvcError('E_UNAVAILABLE', `Kafka producer for ${topic} is closed`));
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.inflight.set(id, { resolve, reject, deadline: Date.now() + this.opts.deliveryTimeoutMs + REPORT_GRACE_MS, topic, partition });
      try {
        this.p.produce(topic, partition, value, null, Date.now(), id);
      } catch (err) {
        this.inflight.delete(id);
        reject(kafkaError(`produce to ${topic}[${partition}]`, err));
      }
    });
  }

  /**
   * Refreshes the producer's own metadata of `topic` until it knows `partitions` partitions (after
   * the topic grew, produce to a new partition fails as "unknown partition" until then).
   */
  async awaitPartitions(topic: string, partitions: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const n = await new Promise<number>((resolve, reject) => {
        this.p.getMetadata({ topic, timeout: timeoutMs }, (err, md) => {
          if (err) reject(kafkaError(`metadata of ${topic}`, err));
          else resolve(md.topics.find((t) => t.name === topic)?.partitions.length ?? 0);
        });
      });
      if (n >= partitions) return;
      if (Date.now() > deadline) throw new LogsvcError('E_UNAVAILABLE', `Kafka producer: topic ${topic} shows ${n} of ${partitions} partitions after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Waits up to `timeoutMs` for every queued record's delivery report. */
  flush(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.p.flush(timeoutMs, (err) => (err ? reject(kafkaError('producer flush', err)) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush(Math.min(this.opts.deliveryTimeoutMs, 5000)).catch(() => undefined);
    if (this.poller !== null) clearInterval(this.poller);
    await disconnectClient(this.p, 5000);
    for (const f of this.inflight.values()) f.reject(new LogsvcError('E_UNAVAILABLE', 'Kafka producer closed before the delivery report'));
    this.inflight.clear();
  }
}

/**
 * A consumer that reads partitions it is given (no subscription, no group offsets): `assign` with
 * explicit offsets, then `consume` batches. The group id is required by librdkafka but unused.
 */
export class KafkaReader {
  private closed = false;
  private constructor(private readonly c: RdKafka.KafkaConsumer) {}

  static async connect(c: KafkaConnection, opts: { role: string; timeoutMs: number; fetchMaxWaitMs?: number }): Promise<KafkaReader> {
    const consumer = new (rd().KafkaConsumer)(
      merged(c, opts.role, {
        'group.id': `logsvc-${opts.role}-unused`,
        'enable.auto.commit': false,
        'enable.auto.offset.store': false,
        'enable.partition.eof': false,
        'fetch.wait.max.ms': opts.fetchMaxWaitMs ?? 100,
        'socket.timeout.ms': Math.max(opts.timeoutMs, 10),
        'queued.max.messages.kbytes': 16 * 1024,
        'isolation.level': 'read_uncommitted',
      }) as RdKafka.ConsumerGlobalConfig,
      { 'auto.offset.reset': 'error' },
    );
    consumer.on('event.error', () => undefined);
    await connectClient(consumer, opts.role, opts.timeoutMs);
    return new KafkaReader(consumer);
  }

  /** Replaces the assignment: exactly these partitions, each from its offset. */
  assign(parts: { topic: string; partition: number; offset: number }[]): void {
    this.c.unassign();
    if (parts.length > 0) this.c.assign(parts);
  }

  /** Up to `max` messages (waits at most the consume timeout for the first). */
  consume(max: number, timeoutMs: number): Promise<KafkaMessage[]> {
    this.c.setDefaultConsumeTimeout(timeoutMs);
    return new Promise((resolve, reject) => {
      this.c.consume(max, (err, msgs) => {
        if (err) return reject(kafkaError('consume', err));
        resolve(msgs.map((m) => ({ topic: m.topic, partition: m.partition, offset: m.offset, value: m.value ?? Buffer.alloc(0) })));
      });
    });
  }

  /** Stops fetching `partition` (records already fetched are still returned) until `resume`. */
  pause(topic: string, partition: number): void {
    this.c.pause([{ topic, partition }]);
  }

  resume(topic: string, partition: number): void {
    this.c.resume([{ topic, partition }]);
  }

  watermarks(topic: string, partition: number, timeoutMs: number): Promise<Watermarks> {
    return queryWatermarks(this.c, topic, partition, timeoutMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await disconnectClient(this.c, 5000);
  }
}

function queryWatermarks(client: RdKafka.Client<string>, topic: string, partition: number, timeoutMs: number): Promise<Watermarks> {
  return new Promise((resolve, reject) => {
    client.queryWatermarkOffsets(topic, partition, timeoutMs, (err, w) => {
      if (err) reject(kafkaError(`watermarks of ${topic}[${partition}]`, err));
      else resolve({ low: w.lowOffset, high: w.highOffset });
    });
  });
}

export interface TopicSpec {
  name: string;
  partitions: number;
  replicationFactor: number;
  config: Record<string, string>;
}

/**
 * Topic administration: create-if-missing, grow partitions, describe through metadata. Wraps an
 * AdminClient plus a metadata-only producer (node-rdkafka's AdminClient has no metadata call).
 */
export class KafkaAdmin {
  private constructor(
    private readonly admin: RdKafka.IAdminClient,
    private readonly meta: RdKafka.Producer,
    private readonly timeoutMs: number,
  ) {}

  static async connect(c: KafkaConnection, timeoutMs: number): Promise<KafkaAdmin> {
    const admin = rd().AdminClient.create(merged(c, 'admin', {}) as RdKafka.GlobalConfig);
    const meta = new (rd().Producer)(merged(c, 'metadata', {}) as RdKafka.ProducerGlobalConfig, {});
    meta.on('event.error', () => undefined);
    try {
      await connectClient(meta, 'metadata client', timeoutMs);
    } catch (err) {
      admin.disconnect();
      throw err;
    }
    return new KafkaAdmin(admin, meta, timeoutMs);
  }

  /** The topic's partition count, or null when it does not exist. */
  partitionCount(topic: string): Promise<number | null> {
    return new Promise((resolve, reject) => {
      this.meta.getMetadata({ topic, timeout: this.timeoutMs }, (err, md) => {
        if (err) {
          if (isKafkaError(err, 'ERR_UNKNOWN_TOPIC_OR_PART')) return resolve(null);
          return reject(kafkaError(`metadata of ${topic}`, err));
        }
        const t = md.topics.find((x) => x.name === topic);
        resolve(t === undefined || t.partitions.length === 0 ? null : t.partitions.length);
      });
    });
  }

  /** Creates the topic if it does not exist; true when this call created it. */
  createTopic(spec: TopicSpec): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.admin.createTopic({ topic: spec.name, num_partitions: spec.partitions, replication_factor: spec.replicationFactor, config: spec.config }, this.timeoutMs, (err) => {
        if (!err) return resolve(true);
        if (isKafkaError(err, 'ERR_TOPIC_ALREADY_EXISTS')) return resolve(false);
        reject(kafkaError(`create topic ${spec.name}`, err));
      });
    });
  }

  /** Raises the topic's partition count to `count` (a no-op when it has that many or more). */
  async growPartitions(topic: string, count: number): Promise<void> {
    const have = await this.partitionCount(topic);
    if (have === null) throw new LogsvcError('E_INTERNAL', `Kafka topic ${topic} does not exist`);
    if (have >= count) return;
    await new Promise<void>((resolve, reject) => {
      this.admin.createPartitions(topic, count, this.timeoutMs, (err) => (err ? reject(err) : resolve()));
    }).catch(async (err: unknown) => {
      // Raced with another node growing it (INVALID_PARTITIONS: it already has that many)?
      if (isKafkaError(err, 'ERR_INVALID_PARTITIONS') && ((await this.partitionCount(topic)) ?? 0) >= count) return;
      throw kafkaError(`grow topic ${topic} to ${count} partitions`, err);
    });
    await this.waitForPartitions(topic, count);
  }

  /** Waits (bounded) until metadata shows the topic with at least `count` partitions. */
  async waitForPartitions(topic: string, count: number): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const n = await this.partitionCount(topic);
      if (n !== null && n >= count) return;
      if (Date.now() > deadline) throw new LogsvcError('E_UNAVAILABLE', `Kafka topic ${topic}: ${count} partitions not visible in metadata within ${this.timeoutMs} ms (have ${n ?? 'none'})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Watermarks; retried within the timeout while the partition has no leader yet (a new topic). */
  async watermarks(topic: string, partition: number, timeoutMs = this.timeoutMs): Promise<Watermarks> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await queryWatermarks(this.meta, topic, partition, timeoutMs);
      } catch (err) {
        if (!(err instanceof LogsvcError) || !err.retriable || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** The brokers the cluster reports (a cheap liveness probe). */
  brokers(timeoutMs = this.timeoutMs): Promise<{ id: number; host: string; port: number }[]> {
    return new Promise((resolve, reject) => {
      this.meta.getMetadata({ allTopics: false, timeout: timeoutMs }, (err, md) => {
        if (err) reject(kafkaError('cluster metadata', err));
        else resolve(md.brokers.map((b) => ({ id: b.id, host: b.host, port: b.port })));
      });
    });
  }

  async close(): Promise<void> {
    this.admin.disconnect();
    await disconnectClient(this.meta, 5000);
  }
}

/** The librdkafka version node-rdkafka was built with (for `logsvc version` and health details). */
export function librdkafkaVersion(): string {
  return rd().librdkafkaVersion;
}
