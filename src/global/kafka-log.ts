/**
 * Global state of a cluster on Kafka: the topic `<prefix>global-events`, one partition, so every
 * node reads the same proposals in the same order (the SharedGlobalLog contract). Proposals are
 * msgpack, produced idempotently with acks=all; the topic keeps everything (retention.ms=-1), so a
 * new node can read the cluster's whole history. Each node keeps its own snapshot of the state it
 * applied, with the topic offset after it, in `<data-dir>/global/cluster-snapshot.bin`; a restart
 * reads the topic only from there.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { LogsvcError } from '../lib/errors.js';
import { pack, unpack } from '../lib/msgpack.js';
import { atomicWriteFile, ensureDir } from '../storage/index.js';
import { KafkaAdmin, KafkaProducer, KafkaReader, type KafkaConnection } from '../queue/kafka-client.js';
import type { SnapshotData } from './model.js';
import type { GlobalProposal, SharedGlobalLog, SharedLogOpened } from './shared-log.js';

export const GLOBAL_EVENTS_TOPIC = 'global-events';
const SNAPSHOT_FILE = 'cluster-snapshot.bin';
const SNAPSHOT_VERSION = 1;

export interface KafkaGlobalLogOptions {
  connection: KafkaConnection;
  topicPrefix: string;
  replicationFactor: number;
  minInsyncReplicas: number;
  /** Where this node keeps its snapshot (`<data-dir>/global`). */
  dir: string;
  /** Bound on one Kafka request (connect, produce, metadata). */
  timeoutMs: number;
  logger: Logger;
}

export class KafkaGlobalLog implements SharedGlobalLog {
  readonly topic: string;
  private producer: KafkaProducer | null = null;
  private reader: KafkaReader | null = null;
  private closed = false;
  private loop: Promise<void> | null = null;

  constructor(private readonly opts: KafkaGlobalLogOptions) {
    this.topic = `${opts.topicPrefix}${GLOBAL_EVENTS_TOPIC}`;
  }

  async open(): Promise<SharedLogOpened> {
    const { connection, timeoutMs } = this.opts;
    const admin = await KafkaAdmin.connect(connection, timeoutMs);
    try {
      await admin.createTopic({
        name: this.topic,
        partitions: 1,
        replicationFactor: this.opts.replicationFactor,
        config: { 'min.insync.replicas': String(this.opts.minInsyncReplicas), 'retention.ms': '-1', 'retention.bytes': '-1' },
      });
      await admin.waitForPartitions(this.topic, 1);
    } finally {
      await admin.close();
    }
    this.producer = await KafkaProducer.connect(connection, { deliveryTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs, lingerMs: 0 });
    this.reader = await KafkaReader.connect(connection, { role: 'global-events', timeoutMs, fetchMaxWaitMs: 20 });
    await ensureDir(this.opts.dir);
    try {
      const raw = unpack(await readFile(join(this.opts.dir, SNAPSHOT_FILE))) as { v: number; position: number; data: SnapshotData };
      if (raw?.v !== SNAPSHOT_VERSION || typeof raw.position !== 'number') throw new Error(`unknown snapshot version ${String(raw?.v)}`);
      return { snapshot: raw.data, position: raw.position };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.opts.logger.error('cluster state snapshot unreadable; reading the whole global-events topic', { error: (err as Error).message });
      return { snapshot: null, position: 0 };
    }
  }

  follow(position: number, onProposal: (p: GlobalProposal, position: number) => void): Promise<void> {
    const reader = this.reader;
    if (reader === null) return Promise.reject(new LogsvcError('E_INTERNAL', 'global log: follow before open'));
    reader.assign([{ topic: this.topic, partition: 0, offset: position }]);
    return new Promise((resolve, reject) => {
      let next = position;
      let target: number | null = null;
      let caughtUp = false;
      const check = (): void => {
        if (!caughtUp && target !== null && next >= target) {
          caughtUp = true;
          resolve();
        }
      };
      this.loop = (async () => {
        let failures = 0;
        while (!this.closed) {
          try {
            if (target === null) {
              target = (await reader.watermarks(this.topic, 0, this.opts.timeoutMs)).high;
              check();
            }
            const msgs = await reader.consume(500, 100);
            failures = 0;
            for (const m of msgs) {
              if (m.offset < next) continue;
              next = m.offset + 1;
              let p: GlobalProposal;
              try {
                p = unpack(m.value) as GlobalProposal;
              } catch (err) {
                this.opts.logger.error('global-events: undecodable record skipped', { offset: m.offset, error: (err as Error).message });
                continue;
              }
              onProposal(p, m.offset);
            }
            check();
          } catch (err) {
            failures++;
            if (failures === 1 || failures % 50 === 0) this.opts.logger.warn('global-events: reading failed; retrying', { error: (err as Error).message });
            if (!caughtUp && failures > Math.max(3, this.opts.timeoutMs / 200)) {
              caughtUp = true;
              reject(err);
            }
            await new Promise((r) => setTimeout(r, Math.min(2000, 100 * failures)));
          }
        }
      })();
    });
  }

  async end(): Promise<number> {
    if (this.reader === null) throw new LogsvcError('E_INTERNAL', 'global log: end before open');
    // Short: requests wait for this; when Kafka does not answer quickly they go on with local state.
    return (await this.reader.watermarks(this.topic, 0, Math.min(this.opts.timeoutMs, 1000))).high;
  }

  async propose(p: GlobalProposal): Promise<void> {
    if (this.producer === null) throw new LogsvcError('E_INTERNAL', 'global log: propose before open');
    await this.producer.send(this.topic, 0, pack(p));
  }

  async writeSnapshot(data: SnapshotData, position: number): Promise<void> {
    await atomicWriteFile(join(this.opts.dir, SNAPSHOT_FILE), pack({ v: SNAPSHOT_VERSION, position, data }));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.loop;
    await this.producer?.close();
    await this.reader?.close();
  }
}
