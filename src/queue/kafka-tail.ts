/**
 * Live records of a whole cluster, for live queries: while anyone listens, a reader of its own
 * follows every partition of the ingest topic and hands each record to the listeners with its
 * summary. A node sees every new event this way, whichever node digests its partition, and a digest
 * owner dying does not interrupt it (the records come from Kafka, not from the owner), so live
 * queries need no restart on failover.
 *
 * Each listener learns where it starts: `listen` resolves with the tail's position per partition
 * (the offset of the next record it hands out) taken in the same step as the listener joins, so
 * the listener hears every record from there on, in order, and none before. A live query cuts its
 * historical part at that position (docs/cluster.md, "Live queries"). The first listener starts the
 * tail at each partition's end; partitions added to the layout later are read from their start (a
 * listener's position list is shorter than the layout then: from 0 for the rest), by a new reader
 * (a reader's metadata does not know partitions added after it connected).
 */
import { LogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { readSummary, type RecordSummary } from '../events/index.js';
import type { DurableRecord } from './digest-queue.js';
import { KafkaReader, type KafkaConnection } from './kafka-client.js';

type Listener = (r: DurableRecord, summary: RecordSummary) => void;

export interface KafkaTailOptions {
  connection: KafkaConnection;
  topic: string;
  partitions: () => number;
  timeoutMs: number;
  logger: Logger;
}

/** A listener's place in the tail: every record at or past `from[p]` of partition p reaches it. */
export interface TailSubscription {
  from: readonly number[];
  stop: () => void;
}

interface Joining {
  listener: Listener;
  resolve: (s: TailSubscription) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class KafkaTail {
  private readonly listeners = new Set<Listener>();
  private readonly joining = new Set<Joining>();
  private running: Promise<void> | null = null;
  private stopRequested = false;
  /** Per partition, the offset of the next record handed out; null while the tail is not positioned. */
  private positions: number[] | null = null;

  constructor(private readonly opts: KafkaTailOptions) {}

  /**
   * Adds `listener` once the tail has a position on every partition (starting it if it is not
   * running); resolves with that position. Rejects with E_UNAVAILABLE when Kafka cannot be read
   * within a few request timeouts.
   */
  listen(listener: Listener): Promise<TailSubscription> {
    return new Promise((resolve, reject) => {
      const bound = Math.max(10_000, 3 * this.opts.timeoutMs);
      const j: Joining = {
        listener,
        resolve,
        reject,
        timer: setTimeout(() => this.refuse(j, `the live tail of ${this.opts.topic} has no position after ${bound} ms`), bound),
      };
      this.stopRequested = false;
      if (this.positions !== null) this.admit(j);
      else {
        this.joining.add(j);
        this.ensureRunning();
      }
    });
  }

  private admit(j: Joining): void {
    clearTimeout(j.timer);
    this.joining.delete(j);
    this.listeners.add(j.listener);
    j.resolve({ from: [...this.positions!], stop: () => this.remove(j.listener) });
  }

  private refuse(j: Joining, why: string): void {
    clearTimeout(j.timer);
    if (!this.joining.delete(j)) return;
    j.reject(new LogsvcError('E_UNAVAILABLE', `live query: ${why}`));
    if (this.listeners.size === 0 && this.joining.size === 0) this.stopRequested = true;
  }

  private remove(listener: Listener): void {
    this.listeners.delete(listener);
    if (this.listeners.size === 0 && this.joining.size === 0) this.stopRequested = true;
  }

  private ensureRunning(): void {
    if (this.running !== null) return;
    this.running = this.run().finally(() => {
      this.running = null;
      // Someone joined while the tail was closing: start it again for them.
      if (this.joining.size > 0 && !this.stopRequested) this.ensureRunning();
    });
  }

  private async run(): Promise<void> {
    const { connection, topic, timeoutMs, logger } = this.opts;
    const connect = (): Promise<KafkaReader> => KafkaReader.connect(connection, { role: 'live-tail', timeoutMs, fetchMaxWaitMs: 50 });
    let reader: KafkaReader | null = null;
    // Readers replaced after the layout grew, closing in the background (a close can take seconds).
    const retired: Promise<void>[] = [];
    try {
      reader = await connect();
      let failures = 0;
      while (!this.stopRequested) {
        try {
          const n = this.opts.partitions();
          const known = this.positions?.length ?? 0;
          if (this.positions !== null && n > known) {
            // A reader's metadata knows the partitions there were when it connected (librdkafka
            // refreshes it every few minutes): a new reader reads the grown layout.
            const old = reader;
            reader = null;
            if (old !== null) retired.push(old.close());
            reader = await connect();
          }
          reader ??= await connect();
          if (this.positions === null || n > known) {
            // The first start: each partition from its current end. Partitions added since: from
            // their start (listeners that joined before them did not have them in their position).
            const next = [...(this.positions ?? [])];
            for (let p = known; p < n; p++) {
              const w = await reader.watermarks(topic, p, timeoutMs);
              next.push(this.positions === null ? w.high : w.low);
            }
            reader.assign(next.map((offset, partition) => ({ topic, partition, offset })));
            this.positions = next;
            for (const j of [...this.joining]) this.admit(j);
          }
          const positions = this.positions;
          for (const m of await reader.consume(1000, 100)) {
            const at = positions[m.partition];
            // Only forward: a record before the position was handed out already.
            if (at === undefined || m.offset < at) continue;
            positions[m.partition] = m.offset + 1;
            const summary = readSummary(m.value);
            const r: DurableRecord = { partition: m.partition, offset: m.offset, nextOffset: m.offset + 1, payload: m.value, attachment: summary };
            for (const l of this.listeners) l(r, summary);
          }
          failures = 0;
        } catch (err) {
          if (++failures === 1) logger.warn('live tail of the ingest topic failed; retrying', { error: (err as Error).message });
          await new Promise((r) => setTimeout(r, Math.min(2000, 100 * failures)));
        }
      }
    } catch (err) {
      logger.warn('live tail of the ingest topic could not start', { error: (err as Error).message });
      for (const j of [...this.joining]) this.refuse(j, `the live tail of ${topic} could not start: ${(err as Error).message}`);
    } finally {
      // The position belongs to this run's reader: a later start takes the ends again.
      this.positions = null;
      await Promise.all([reader?.close(), ...retired]);
    }
  }

  async close(): Promise<void> {
    this.stopRequested = true;
    for (const j of [...this.joining]) this.refuse(j, 'the node is stopping');
    await this.running;
  }
}
