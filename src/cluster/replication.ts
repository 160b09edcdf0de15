/**
 * Segment replication over the cluster protocol (docs/replication.md).
 *
 * - **Registering**: a segment this node wrote is listed in global state (`SegmentStored`) once it
 *   is closed, with its size and whole-file CRC-32C.
 * - **Pulling**: every node looks, on a timer and whenever holdings change, for listed segments it
 *   should hold (placement.ts `desiredHolders`) and lacks, and copies each from a live holder
 *   (`segment.read`, a streamed answer of checksummed chunks) into `.incoming/<id>.part`, resuming
 *   from what an interrupted copy left. Complete: fsynced, checked against the listed size and
 *   CRC, renamed into place, catalogued (blocks its epoch's end voids left out), and only then this
 *   node lists itself as a holder. A partial file is never catalogued, so never read.
 * - **Bounds**: copies at once (`replication_parallel_transfers`) and bytes per second
 *   (`replication_bytes_per_second`, for all copies together), so copying cannot starve ingest.
 * - **Scrubbing**: every held segment's whole-file CRC is checked at a bounded rate, from start and
 *   then periodically; a copy that fails is taken out of the catalog, set aside, dropped from global
 *   state, and copied again from a healthy holder.
 * - **Progress**: a digest owner's checkpoint and marks only pass segments held by enough nodes
 *   (`replicatedMarks`, `replicatedCheckpoint`), so the queue's copy of events is kept until then.
 */
import { open, rename, stat, unlink, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { LogsvcError } from '../lib/errors.js';
import type { GlobalStore, MarkEntry } from '../global/index.js';
import type { StoredSegment, SegmentEntry } from '../global/segment-holdings.js';
import { holdersOf } from '../global/segment-holdings.js';
import { positionAfter, readSegmentInfo, type Position, type SegmentCatalog, type SegmentInfo } from '../segments/catalog.js';
import { crc32c, fsyncDir } from '../storage/index.js';
import { desiredHolders, entirelyVoid, sufficientlyHeld } from './placement.js';
import { LeftoverSweep } from './leftovers.js';

export const SEGMENT_READ = 'segment.read';
const CHUNK_BYTES = 256 * 1024;
const INCOMING = '.incoming';
/** A copy that failed is tried again after this long (doubling up to a minute). */
const RETRY_MS = 1000;
/**
 * A surplus copy stays on disk (and in the catalog) this long after its drop applied: a query
 * placed before the drop may still choose this node for it (its parts reach the nodes within the
 * 5 s a node waits for the placement's sequence number). A scan already reading it pins the file
 * past this too.
 */
export const SURPLUS_GRACE_MS = 30_000;
/** Surplus drops decided per step (each is one global-state decision). */
const SURPLUS_PER_STEP = 20;

export interface ReplicationRpc {
  aliveIds(): Set<number>;
  isAlive(node: number): boolean;
  lastHeartbeat(node: number): number | null;
  stream(nodeId: number, type: string, body: unknown, opts?: { timeoutMs?: number; window?: number }): AsyncIterableIterator<unknown>;
  handleStream(type: string, fn: (body: unknown, ctx: { signal: AbortSignal }) => AsyncIterable<unknown>): void;
}

export interface ReplicationOptions {
  selfId: number;
  store: GlobalStore;
  catalog: SegmentCatalog;
  rpc: ReplicationRpc;
  segmentsDir: string;
  clock: Clock;
  logger: Logger;
  /** Copies of each segment wanted (capped at the number of nodes in the cluster). */
  factor: number;
  /** Bytes per second all copies into this node may take together; 0: unbounded. */
  bytesPerSecond: number;
  /** Copies into this node at once. */
  parallel: number;
  /** A node dead this long no longer counts as a holder to be waited for: its segments are copied elsewhere. */
  graceMs: number;
  /** Bytes per second the scrubber reads; 0: no scrubbing. */
  scrubBytesPerSecond: number;
  /** Pause between two full scrub passes. */
  scrubIntervalMs: number;
  /** How often the work is looked at without a trigger. */
  intervalMs: number;
  /** Inactivity bound of one copy (no chunk for this long ends it). */
  transferTimeoutMs: number;
  /** False for a segment this node should not copy (its repository is gone, it is past retention). */
  wanted?: (s: StoredSegment) => boolean;
  /** How long a surplus copy is kept after its drop, and a leftover file after it is found (default SURPLUS_GRACE_MS). */
  surplusGraceMs?: number;
}

/** Paces reads or writes to a rate: each caller waits for its turn. */
class Pace {
  private nextFree = 0;
  constructor(private readonly bytesPerSecond: number) {}
  async take(n: number, signal?: AbortSignal): Promise<void> {
    if (this.bytesPerSecond <= 0) return;
    const now = Date.now();
    const start = Math.max(this.nextFree, now);
    this.nextFree = start + (n * 1000) / this.bytesPerSecond;
    const wait = start - now;
    if (wait > 0 && signal?.aborted !== true) await new Promise((r) => setTimeout(r, wait));
  }
}

export interface ReplicationStats {
  factor: number;
  segments: number;
  underReplicated: number;
  /** Own closed segments not yet held by enough nodes, and the age of the oldest (ms). */
  pendingOwn: number;
  lagMs: number;
  /** Copies into this node under way and waiting. */
  active: number;
  queued: number;
  bytesReceived: number;
  bytesSent: number;
  copied: number;
  corrupt: number;
  /** Surplus copies this node dropped and deleted (held by their desired holders without it). */
  surplusDeleted: number;
  /** Void segment files (every block past its epoch's end) and abandoned part files deleted here (leftovers.ts). */
  voidDeleted: number;
  voidDeletedBytes: number;
  partsDeleted: number;
  /**
   * Closed segment files in this node's catalog that are not a listed copy held here with events
   * to read: just closed or copied (being listed), dropped as surplus, or void (both deleted after
   * the grace). Zero once a cluster has settled.
   */
  unlisted: number;
}

async function fileCrc(path: string, pace?: Pace, signal?: AbortSignal): Promise<{ crc: number; size: number }> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
    let crc = 0;
    let size = 0;
    for (;;) {
      if (signal?.aborted === true) throw new LogsvcError('E_UNAVAILABLE', 'stopped');
      const { bytesRead } = await fh.read(buf, 0, buf.length, size);
      if (bytesRead === 0) break;
      await pace?.take(bytesRead, signal);
      crc = crc32c(buf.subarray(0, bytesRead), crc);
      size += bytesRead;
    }
    return { crc, size };
  } finally {
    await fh.close();
  }
}

export class SegmentReplicator {
  private readonly registering = new Set<string>();
  private readonly transfers = new Map<string, AbortController>();
  private readonly retryAt = new Map<string, { at: number; delay: number }>();
  private readonly pace: Pace;
  private readonly scrubPace: Pace;
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  private scrubbing: Promise<void> | null = null;
  private readonly startedAt: number;
  private lastQueued = 0;
  private bytesReceived = 0;
  private bytesSent = 0;
  private copied = 0;
  private corrupt = 0;
  private surplusDeleted = 0;
  /** Surplus copies dropped from global state, by id: when (monotonic) the drop applied; deleted after the grace. */
  private readonly surplus = new Map<string, number>();
  private readonly leftovers: LeftoverSweep;

  constructor(private readonly opts: ReplicationOptions) {
    this.leftovers = new LeftoverSweep({
      selfId: opts.selfId,
      store: opts.store,
      catalog: opts.catalog,
      incomingDir: join(opts.segmentsDir, INCOMING),
      clock: opts.clock,
      logger: opts.logger,
      graceMs: opts.surplusGraceMs ?? SURPLUS_GRACE_MS,
    });
    this.pace = new Pace(opts.bytesPerSecond);
    this.scrubPace = new Pace(opts.scrubBytesPerSecond);
    this.startedAt = opts.clock.now();
    opts.rpc.handleStream(SEGMENT_READ, (body, ctx) => this.serve(body, ctx.signal));
  }

  start(): void {
    this.unsubscribe = this.opts.store.onApplied((e) => {
      if (e.type === 'SegmentStored' || e.type === 'SegmentDropped' || e.type === 'PartitionEpochStarted') this.trigger();
    });
    this.timer = setInterval(() => this.trigger(), this.opts.intervalMs);
    this.timer.unref();
    if (this.opts.scrubBytesPerSecond > 0) this.scrubbing = this.scrubLoop();
    this.trigger();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    if (this.timer !== null) clearInterval(this.timer);
    this.unsubscribe?.();
    for (const c of this.transfers.values()) c.abort();
    await this.chain;
    await this.scrubbing?.catch(() => undefined);
  }

  /** Look at the work now (holdings or liveness changed). */
  trigger(): void {
    if (this.queued || this.stopping.signal.aborted) return;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      if (this.stopping.signal.aborted) return;
      try {
        await this.step();
      } catch (err) {
        this.opts.logger.warn('replication: step failed; will retry', { error: (err as Error).message });
      }
    });
  }

  /** Copies of each segment wanted now: the configured factor, at most the cluster's node count. */
  factor(): number {
    return Math.max(1, Math.min(this.opts.factor, this.opts.store.state.nodes.size || 1));
  }

  private live(): number[] {
    const ids = this.opts.rpc.aliveIds();
    ids.add(this.opts.selfId);
    return [...ids].sort((a, b) => a - b);
  }

  /** Alive, or dead for less than the grace period (its copies are waited for, not made again). */
  private available(node: number): boolean {
    if (node === this.opts.selfId || this.opts.rpc.isAlive(node)) return true;
    const last = this.opts.rpc.lastHeartbeat(node);
    return this.opts.clock.now() - (last ?? this.startedAt) < this.opts.graceMs;
  }

  private desired(entry: SegmentEntry): number[] {
    const { store } = this.opts;
    const hosts = store.state.partitions[entry.segment.partition] ?? [];
    return desiredHolders(hosts, [...store.state.nodes.keys()], this.factor(), (n) => this.available(n), store.state.draining);
  }

  /** Listed segments `node` holds that fewer than the factor of other nodes hold (what draining it must copy). */
  heldTooFewWithout(node: number): number {
    const { store } = this.opts;
    const factor = Math.max(1, Math.min(this.opts.factor, store.state.nodes.size - 1 || 1));
    let n = 0;
    for (const entry of store.state.cluster.segments.segments.values()) {
      const holders = holdersOf(entry);
      if (!holders.includes(node) || this.voided(entry.segment)) continue;
      if (store.state.cluster.segments.superseded(entry.segment.id, () => true)) continue;
      if (holders.filter((h) => h !== node).length < factor) n++;
    }
    return n;
  }

  private voided(s: StoredSegment): boolean {
    return entirelyVoid(s, this.opts.store.state.cluster.endOf(s.partition, s.epoch));
  }

  private async step(): Promise<void> {
    if (!this.opts.store.state.nodes.has(this.opts.selfId)) return; // unregistered: holds nothing any more
    await this.registerOwn();
    await this.tidy();
    this.startCopies();
    await this.dropSurplus();
    this.deleteDropped();
    const copying = new Set(this.missing().map((e) => e.segment.id));
    await this.leftovers.sweep(
      (id) => this.registering.has(id) || this.transfers.has(id) || this.surplus.has(id),
      (id) => copying.has(id) || this.transfers.has(id),
    );
  }

  /**
   * Copies this node holds beyond the factor: a listed segment whose desired holders (placement.ts)
   * do not include this node, when every desired holder holds it and is alive, so the segment stays
   * held by at least the factor of live nodes. Each drop is a global-state decision (transact), so
   * drops racing on other nodes are decided one after the other, each on the holders the previous
   * left. The file itself goes after SURPLUS_GRACE_MS (deleteDropped).
   */
  private async dropSurplus(): Promise<void> {
    const { store, selfId, catalog } = this.opts;
    let n = 0;
    for (const entry of store.state.cluster.segments.segments.values()) {
      if (n >= SURPLUS_PER_STEP) return;
      const id = entry.segment.id;
      if (this.surplus.has(id) || this.transfers.has(id) || this.registering.has(id) || catalog.get(id) === undefined) continue;
      if (!this.isSurplus(entry)) continue;
      n++;
      const dropped = await store.transact((s) => {
        const now = s.cluster.segments.segments.get(id);
        if (now === undefined || !this.isSurplus(now)) return { events: [], result: false };
        return { events: [{ type: 'SegmentDropped' as const, node: selfId, id, reason: 'surplus copy: its desired holders hold it' }], result: true };
      });
      if (!dropped) continue;
      this.surplus.set(id, this.opts.clock.monotonic());
      this.opts.logger.info('replication: surplus segment copy dropped; the file goes after the grace period', { segment: id, holders: holdersOf(store.state.cluster.segments.segments.get(id) ?? entry).join(',') });
    }
  }

  /** Whether this node's copy of `entry` is surplus now (see dropSurplus). */
  private isSurplus(entry: SegmentEntry): boolean {
    const { selfId, rpc, store } = this.opts;
    const holders = holdersOf(entry);
    if (!holders.includes(selfId) || this.voided(entry.segment)) return false;
    if (store.state.cluster.segments.superseded(entry.segment.id, () => true)) return false; // tidy's business
    const factor = this.factor();
    const desired = this.desired(entry);
    if (desired.includes(selfId) || desired.length < factor) return false;
    if (!desired.every((n) => holders.includes(n) && rpc.isAlive(n))) return false;
    return holders.filter((h) => h !== selfId && rpc.isAlive(h)).length >= factor;
  }

  /** Deletes the surplus copies whose grace passed (once no query snapshot reads them). */
  private deleteDropped(): void {
    const { catalog, store, selfId } = this.opts;
    const now = this.opts.clock.monotonic();
    const grace = this.opts.surplusGraceMs ?? SURPLUS_GRACE_MS;
    for (const [id, at] of this.surplus) {
      const entry = store.state.cluster.segments.segments.get(id);
      if (entry !== undefined && holdersOf(entry).includes(selfId)) {
        this.surplus.delete(id); // listed here again (copied back, say): it is not surplus any more
        continue;
      }
      if (now - at < grace) continue;
      this.surplus.delete(id);
      const info = catalog.get(id);
      if (info === undefined) continue;
      catalog.remove(id);
      this.surplusDeleted++;
      catalog.whenUnpinned(info.path, () => {
        void unlink(info.path).catch(() => undefined);
      });
      this.opts.logger.info('replication: surplus segment copy deleted', { segment: id, bytes: info.bytes });
    }
  }

  /**
   * Keeps global state true to this node's disk: a listed segment this node no longer has (deleted
   * by retention or with its repository, rewritten, lost) is dropped; a copy superseded by a
   * rewrite another live node holds is deleted here (the rewrite is copied instead).
   */
  private async tidy(): Promise<void> {
    const { store, catalog, selfId, rpc } = this.opts;
    const holdings = store.state.cluster.segments;
    const events: { type: 'SegmentDropped'; node: number; id: string; reason: string }[] = [];
    for (const entry of holdings.segments.values()) {
      const id = entry.segment.id;
      if (this.transfers.has(id) || this.registering.has(id) || !holdersOf(entry).includes(selfId)) continue;
      const info = catalog.get(id);
      if (info === undefined) {
        events.push({ type: 'SegmentDropped', node: selfId, id, reason: 'not on this node any more' });
        continue;
      }
      if (holdings.superseded(id, (n) => n !== selfId && rpc.isAlive(n))) {
        catalog.remove(id);
        catalog.whenUnpinned(info.path, () => {
          void unlink(info.path).catch(() => undefined);
        });
        events.push({ type: 'SegmentDropped', node: selfId, id, reason: 'replaced by a rewrite' });
      }
    }
    if (events.length > 0) await store.publish(events);
  }

  /** Lists closed own segments (and copies whose listing was lost) in global state. */
  private async registerOwn(): Promise<void> {
    const { catalog, store, selfId } = this.opts;
    const holdings = store.state.cluster.segments;
    const events: { type: 'SegmentStored'; node: number; segment: StoredSegment }[] = [];
    for (const info of catalog.all()) {
      const m = info.meta;
      if (!info.closed || m.epoch === undefined || m.writer === undefined || info.blocks.length === 0 || this.registering.has(m.id) || this.surplus.has(m.id)) continue;
      const entry = holdings.segments.get(m.id);
      if (entry !== undefined && holdersOf(entry).includes(selfId)) continue;
      // A copy of a segment no longer listed stays unlisted; a rewrite made here (redaction) is listed.
      if (m.writer !== selfId && entry === undefined && m.replaces === undefined) continue;
      this.registering.add(m.id);
      try {
        const segment = entry?.segment ?? (await this.describe(info));
        if (segment !== null) events.push({ type: 'SegmentStored', node: selfId, segment });
      } catch (err) {
        this.registering.delete(m.id);
        this.opts.logger.warn('replication: a segment could not be described', { segment: m.id, error: (err as Error).message });
      }
    }
    if (events.length === 0) return;
    try {
      await store.publish(events);
    } finally {
      for (const e of events) this.registering.delete(e.segment.id);
    }
  }

  private async describe(info: SegmentInfo): Promise<StoredSegment | null> {
    const m = info.meta;
    const first = info.blocks[0];
    const last = info.blocks[info.blocks.length - 1];
    if (first === undefined || last === undefined) return null; // every block void: nothing to keep
    const { crc, size } = await fileCrc(info.path);
    let events = 0;
    let uncompressed = 0;
    let minTs = Infinity;
    let maxTs = -Infinity;
    for (const b of info.blocks) {
      events += b.eventCount;
      uncompressed += b.uncompressedLength;
      minTs = Math.min(minTs, b.minTs);
      maxTs = Math.max(maxTs, b.maxTs);
    }
    const file = info.path.slice(this.opts.segmentsDir.length + 1);
    return {
      id: m.id, repo: m.repo, ds: m.ds, partition: m.partition, epoch: m.epoch!, writer: m.writer!, file, bytes: size, uncompressed, crc, events, minTs, maxTs,
      firstOffset: first.firstOffset, firstIndex: first.firstIndex, lastOffset: last.lastOffset, lastIndex: last.lastIndex,
      ...(m.replaces === undefined ? {} : { replaces: m.replaces }),
    };
  }

  /** Segments this node should hold and lacks, with a live holder to copy from. */
  private missing(): SegmentEntry[] {
    const { store, catalog, selfId } = this.opts;
    const out: SegmentEntry[] = [];
    for (const entry of store.state.cluster.segments.segments.values()) {
      if (catalog.get(entry.segment.id) !== undefined) continue;
      if (this.voided(entry.segment)) continue;
      if (store.state.cluster.segments.superseded(entry.segment.id, () => true)) continue; // an older version
      if (this.opts.wanted !== undefined && !this.opts.wanted(entry.segment)) continue;
      if (!this.desired(entry).includes(selfId)) continue;
      out.push(entry);
    }
    return out;
  }

  private startCopies(): void {
    const now = this.opts.clock.monotonic();
    const todo = this.missing();
    this.lastQueued = todo.filter((e) => !this.transfers.has(e.segment.id)).length;
    for (const entry of todo) {
      if (this.transfers.size >= this.opts.parallel) return;
      const id = entry.segment.id;
      if (this.transfers.has(id)) continue;
      const retry = this.retryAt.get(id);
      if (retry !== undefined && retry.at > now) continue;
      const from = holdersOf(entry).filter((h) => h !== this.opts.selfId && this.opts.rpc.isAlive(h));
      if (from.length === 0) continue;
      const source = from[Math.floor(Math.random() * from.length)]!;
      const ctl = new AbortController();
      this.transfers.set(id, ctl);
      void this.copy(entry.segment, source, ctl.signal)
        .then(() => {
          this.retryAt.delete(id);
          this.copied++;
        })
        .catch((err: unknown) => {
          const delay = Math.min(60_000, (retry?.delay ?? RETRY_MS / 2) * 2);
          this.retryAt.set(id, { at: this.opts.clock.monotonic() + delay, delay });
          if (!ctl.signal.aborted) this.opts.logger.warn('replication: segment copy failed; will retry', { segment: id, from: source, error: (err as Error).message });
        })
        .finally(() => {
          this.transfers.delete(id);
          this.trigger();
        });
    }
  }

  private async copy(s: StoredSegment, source: number, signal: AbortSignal): Promise<void> {
    const { segmentsDir, rpc, catalog, store, selfId, logger } = this.opts;
    const dir = join(segmentsDir, INCOMING);
    await mkdir(dir, { recursive: true });
    const part = join(dir, `${s.id}.part`);
    let from = 0;
    try {
      from = (await stat(part)).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (from > s.bytes) {
      await unlink(part);
      from = 0;
    }
    if (from > 0 && from < s.bytes) logger.info('replication: resuming an interrupted segment copy', { segment: s.id, from: source, at: from, bytes: s.bytes });
    if (from < s.bytes) {
      const fh = await open(part, 'a');
      try {
        const it = rpc.stream(source, SEGMENT_READ, { id: s.id, from }, { timeoutMs: this.opts.transferTimeoutMs, window: 4 });
        try {
          for await (const raw of it) {
            if (signal.aborted) throw new LogsvcError('E_UNAVAILABLE', 'replication stopped');
            const chunk = raw as { data?: Uint8Array; crc?: number } | null;
            if (chunk === null || !(chunk.data instanceof Uint8Array) || typeof chunk.crc !== 'number') throw new LogsvcError('E_PROTOCOL', 'segment.read: malformed chunk');
            const data = Buffer.from(chunk.data.buffer, chunk.data.byteOffset, chunk.data.byteLength);
            if (crc32c(data) !== chunk.crc) throw new LogsvcError('E_STATE_CORRUPT', `segment ${s.id}: a chunk from node ${source} failed its checksum`);
            await this.pace.take(data.length, signal);
            await fh.write(data);
            this.bytesReceived += data.length;
          }
        } finally {
          await it.return?.();
        }
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
    const { crc, size } = await fileCrc(part);
    if (size !== s.bytes || crc !== s.crc) {
      await unlink(part).catch(() => undefined);
      throw new LogsvcError('E_STATE_CORRUPT', `segment ${s.id}: the copy from node ${source} does not match its listing (${size} bytes, crc ${crc}; listed ${s.bytes}, ${s.crc}); starting over`);
    }
    const final = join(segmentsDir, s.file);
    await mkdir(dirname(final), { recursive: true });
    await rename(part, final);
    await fsyncDir(dirname(final));
    const info = await readSegmentInfo(final, logger, this.opts.clock.now());
    await catalog.putReplica(info, store.state.cluster.endOf(s.partition, s.epoch));
    await store.publish([{ type: 'SegmentStored', node: selfId, segment: s }]);
    logger.debug('replication: segment copied', { segment: s.id, from: source, bytes: s.bytes });
  }

  private async *serve(body: unknown, signal: AbortSignal): AsyncIterable<unknown> {
    const b = body as { id?: unknown; from?: unknown } | null;
    if (b === null || typeof b !== 'object' || typeof b.id !== 'string' || b.id.length > 256 || typeof b.from !== 'number' || !Number.isInteger(b.from) || b.from < 0) {
      throw new LogsvcError('E_BAD_REQUEST', 'segment.read: an id and a byte offset are required');
    }
    const info = this.opts.catalog.get(b.id);
    if (info === undefined || !info.closed) throw new LogsvcError('E_NOT_FOUND', `segment.read: segment ${b.id} is not held here`);
    const fh = await open(info.path, 'r');
    try {
      const { size } = await fh.stat();
      for (let pos = b.from; pos < size && !signal.aborted; ) {
        const n = Math.min(CHUNK_BYTES, size - pos);
        const data = Buffer.allocUnsafe(n);
        const { bytesRead } = await fh.read(data, 0, n, pos);
        if (bytesRead === 0) break;
        pos += bytesRead;
        this.bytesSent += bytesRead;
        const out = data.subarray(0, bytesRead);
        yield { data: out, crc: crc32c(out) };
      }
    } finally {
      await fh.close();
    }
  }

  /** Checks every held segment against its listed CRC, at the scrub rate, again and again. */
  private async scrubLoop(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      for (const info of this.opts.catalog.all()) {
        if (signal.aborted) return;
        const entry = this.opts.store.state.cluster.segments.segments.get(info.meta.id);
        if (entry === undefined || !holdersOf(entry).includes(this.opts.selfId)) continue;
        await this.scrub(info, entry.segment, signal).catch((err: unknown) => {
          if (!signal.aborted) this.opts.logger.warn('replication: scrub read failed', { segment: info.meta.id, error: (err as Error).message });
        });
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, this.opts.scrubIntervalMs);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  private async scrub(info: SegmentInfo, s: StoredSegment, signal: AbortSignal): Promise<void> {
    const { crc, size } = await fileCrc(info.path, this.scrubPace, signal);
    if (crc === s.crc && size === s.bytes) return;
    await this.discard(info, `checksum mismatch (${size} bytes, crc ${crc}; listed ${s.bytes}, ${s.crc})`);
  }

  /** A copy that is damaged: out of the catalog, set aside, dropped from global state; copied again later. */
  async discard(info: SegmentInfo, reason: string): Promise<void> {
    const { catalog, store, selfId, logger } = this.opts;
    if (catalog.get(info.meta.id) === undefined) return;
    this.corrupt++;
    catalog.remove(info.meta.id);
    logger.error('replication: a segment copy is damaged; it is set aside and copied again from a healthy holder', { segment: info.meta.id, file: info.path, reason });
    catalog.whenUnpinned(info.path, () => {
      void rename(info.path, `${info.path}.corrupt`).catch(() => undefined);
    });
    await store.publish([{ type: 'SegmentDropped', node: selfId, id: info.meta.id, reason }]);
  }

  /** Own segments of `partition` written in `epoch` not yet held by enough nodes (open ones included). */
  private insufficientOwn(partition: number, epoch: number): SegmentInfo[] {
    const { catalog, store, selfId } = this.opts;
    const factor = this.factor();
    const live = this.live();
    const out: SegmentInfo[] = [];
    for (const info of catalog.all()) {
      const m = info.meta;
      if (m.partition !== partition || m.writer !== selfId || m.epoch !== epoch || info.blocks.length === 0) continue;
      const entry = store.state.cluster.segments.segments.get(m.id);
      if (!info.closed || entry === undefined || !sufficientlyHeld(holdersOf(entry), factor, live)) out.push(info);
    }
    return out;
  }

  /** The checkpoint a digest owner may report: not past any of its segments held by too few nodes. */
  replicatedCheckpoint(partition: number, epoch: number, checkpoint: number): number {
    let cp = checkpoint;
    for (const info of this.insufficientOwn(partition, epoch)) cp = Math.min(cp, info.blocks[0]!.firstOffset);
    return cp;
  }

  /**
   * The marks a digest owner may report: per datasource, the last position before its first block
   * in a segment held by too few nodes (or the durable high-water mark when there is none).
   */
  replicatedMarks(partition: number, epoch: number): MarkEntry[] {
    const { catalog } = this.opts;
    const firstUnsafe = new Map<string, Position>();
    for (const info of this.insufficientOwn(partition, epoch)) {
      const b = info.blocks[0]!;
      const p = { offset: b.firstOffset, index: b.firstIndex };
      const cur = firstUnsafe.get(info.meta.ds);
      if (cur === undefined || positionAfter(cur, p)) firstUnsafe.set(info.meta.ds, p);
    }
    const out: MarkEntry[] = [];
    for (const [ds, hw] of catalog.marksOf(partition)) {
      const f = firstUnsafe.get(ds);
      if (f === undefined) {
        out.push([ds, hw.offset, hw.index]);
        continue;
      }
      let best: Position | null = null;
      for (const info of catalog.all()) {
        if (info.meta.partition !== partition || info.meta.ds !== ds) continue;
        for (const b of info.blocks) {
          const lp = { offset: b.lastOffset, index: b.lastIndex };
          if (positionAfter(f, lp) && (best === null || positionAfter(lp, best))) best = lp;
        }
      }
      if (best !== null) out.push([ds, best.offset, best.index]);
    }
    return out;
  }

  /** Waits (bounded) until the own segments of `partition` in `epoch` are held by enough nodes. */
  async settle(partition: number, epoch: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    this.trigger();
    while (Date.now() < deadline) {
      if (this.insufficientOwn(partition, epoch).length === 0) return true;
      await new Promise((r) => setTimeout(r, 50));
      this.trigger();
    }
    return this.insufficientOwn(partition, epoch).length === 0;
  }

  stats(): ReplicationStats {
    const { store, selfId } = this.opts;
    const factor = this.factor();
    let segments = 0;
    let under = 0;
    for (const entry of store.state.cluster.segments.segments.values()) {
      if (this.voided(entry.segment)) continue;
      segments++;
      if (holdersOf(entry).length < factor) under++;
    }
    let pendingOwn = 0;
    let oldest = Infinity;
    const live = this.live();
    for (const info of this.opts.catalog.all()) {
      if (!info.closed || info.meta.writer !== selfId || info.meta.epoch === undefined || info.blocks.length === 0) continue;
      const entry = store.state.cluster.segments.segments.get(info.meta.id);
      if (entry !== undefined && sufficientlyHeld(holdersOf(entry), factor, live)) continue;
      pendingOwn++;
      oldest = Math.min(oldest, info.meta.createdAt);
    }
    return {
      factor,
      segments,
      underReplicated: under,
      pendingOwn,
      lagMs: pendingOwn === 0 ? 0 : Math.max(0, this.opts.clock.now() - oldest),
      active: this.transfers.size,
      queued: this.lastQueued,
      bytesReceived: this.bytesReceived,
      bytesSent: this.bytesSent,
      copied: this.copied,
      corrupt: this.corrupt,
      surplusDeleted: this.surplusDeleted,
      ...this.leftovers.stats(),
      unlisted: this.unlistedFiles(),
    };
  }

  private unlistedFiles(): number {
    const { catalog, store, selfId } = this.opts;
    let n = 0;
    for (const info of catalog.all()) {
      if (!info.closed) continue;
      const entry = store.state.cluster.segments.segments.get(info.meta.id);
      if (entry === undefined || !holdersOf(entry).includes(selfId) || info.blocks.length === 0) n++;
    }
    return n;
  }

  /** Segment counts and bytes per node, from global state. */
  perNode(): { node: number; segments: number; bytes: number; events: number }[] {
    const by = new Map<number, { segments: number; bytes: number; events: number }>();
    for (const entry of this.opts.store.state.cluster.segments.segments.values()) {
      if (this.voided(entry.segment)) continue;
      for (const n of holdersOf(entry)) {
        const x = by.get(n) ?? { segments: 0, bytes: 0, events: 0 };
        x.segments++;
        x.bytes += entry.segment.bytes;
        x.events += entry.segment.events;
        by.set(n, x);
      }
    }
    return [...by].sort((a, b) => a[0] - b[0]).map(([node, x]) => ({ node, ...x }));
  }
}
