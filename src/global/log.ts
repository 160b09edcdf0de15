/**
 * The transport of the global event log. One code path applies events; the transport only stores
 * and returns them. Single node: `EmbeddedGlobalLog` (files in the data dir). Cluster: a Kafka
 * topic (not built yet; see docs/ARCHITECTURE.md).
 */
import type { GlobalEvent } from './events.js';
import type { SnapshotData } from './model.js';

export interface LoadedLog {
  snapshot: SnapshotData | null;
  /** Events after the snapshot, in order, with consecutive sequence numbers. */
  events: { seq: number; event: GlobalEvent }[];
  /** Damage found and repaired (a torn tail cut off, a corrupt snapshot skipped), for the operator. */
  repairs: string[];
}

export interface GlobalLog {
  open(): Promise<LoadedLog>;
  /** Resolves once the event is durable. */
  append(seq: number, event: GlobalEvent): Promise<void>;
  /**
   * Appends events numbered `firstSeq`, `firstSeq + 1`, ... as one record: after a crash either all
   * of them are in the log or none is. Resolves once durable.
   */
  appendBatch(firstSeq: number, events: GlobalEvent[]): Promise<void>;
  writeSnapshot(data: SnapshotData): Promise<void>;
  close(): Promise<void>;
}
