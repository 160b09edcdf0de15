/**
 * Live records of a whole cluster, for live queries: while anyone listens, a reader of its own
 * follows every partition of the ingest topic from where each ended when the first listener came,
 * and hands each record to the listeners with its summary. A node sees every new event this way,
 * whichever node digests its partition, and a digest owner dying does not interrupt it (the
 * records come from Kafka, not from the owner), so live queries need no restart on failover.
 */
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

export class KafkaTail {
  private readonly listeners = new Set<Listener>();
  private running: Promise<void> | null = null;
  private stopRequested = false;

  constructor(private readonly opts: KafkaTailOptions) {}

  onRecord(listener: Listener): () => void {
    this.listeners.add(listener);
    this.stopRequested = false;
    if (this.running === null) {
      this.running = this.run().finally(() => (this.running = null));
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopRequested = true;
    };
  }

  private async run(): Promise<void> {
    const { connection, topic, timeoutMs, logger } = this.opts;
    let reader: KafkaReader | null = null;
    try {
      reader = await KafkaReader.connect(connection, { role: 'live-tail', timeoutMs, fetchMaxWaitMs: 50 });
      let count = 0;
      let failures = 0;
      while (!this.stopRequested) {
        try {
          const n = this.opts.partitions();
          if (n !== count) {
            // New partitions (or the first start): each from its current end.
            const parts: { topic: string; partition: number; offset: number }[] = [];
            for (let p = 0; p < n; p++) parts.push({ topic, partition: p, offset: (await reader.watermarks(topic, p, timeoutMs)).high });
            reader.assign(parts);
            count = n;
          }
          for (const m of await reader.consume(1000, 100)) {
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
    } finally {
      await reader?.close();
    }
  }

  async close(): Promise<void> {
    this.stopRequested = true;
    await this.running;
  }
}
