/**
 * The embedded digest queue: per partition, a directory of append-only files
 * (`<data-dir>/queue/p<NNNN>/<base offset>.dq`, layout in queue-file.ts).
 *
 * Group commit: appends are framed and queued synchronously (so offsets follow call order); one
 * write + one fdatasync per partition then covers every append queued meanwhile, and all of them
 * resolve together. A failed write or fsync leaves the file's durable contents unknown, so the queue
 * turns itself failed (every later append rejects) and reports it through `onFatal`: the node stops
 * rather than acknowledge anything it cannot vouch for.
 *
 * Open: every file is scanned. A damaged tail of a partition's newest file (a crash mid-write) is
 * cut off and kept aside as `<file>.damaged-<time>`; damage followed by intact records (a flipped
 * bit) is skipped by resynchronisation on every read, and reported.
 */
import { open, readdir, readFile, rm, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { LogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { atomicWriteFile, ensureDir, fsyncDir, isNoSpaceError, SpaceGate, writeAll } from '../storage/index.js';
import type { DigestQueue, DurableRecord, FollowHandle, QueueRecord } from './digest-queue.js';
import { FollowSignals } from './follow-by-read.js';
import { queueFrameHead, frameBytes, MAX_RECORD_BYTES, QUEUE_HEADER_BYTES, QUEUE_MAGIC, QUEUE_FORMAT_VERSION, queueFileHeader, scanQueueFile } from './queue-file.js';

const FILE_SUFFIX = '.dq';
/** A wholly digested file being appended to is rolled over (and so reclaimed) once it holds this much. */
const ROLL_DIGESTED_MIN_BYTES = 64 * 1024;
/** queue.file_bytes' default. */
export const DEFAULT_QUEUE_FILE_BYTES = 8 * 1024 * 1024;
const pad = (n: number): string => String(n).padStart(20, '0');

interface QFile {
  base: number;
  path: string;
  /** Bytes of records (file size minus header). */
  size: number;
}

interface Pending {
  /** The frame's head; the payload follows it on disk. */
  head: Buffer;
  payload: Buffer;
  attachment: unknown;
  resolve: (offset: number) => void;
  reject: (err: Error) => void;
  offset: number;
}

class Partition {
  files: QFile[] = [];
  fh: FileHandle | null = null;
  next = 0;
  pending: Pending[] = [];
  flushing = false;
  constructor(
    readonly id: number,
    readonly dir: string,
  ) {}
  get current(): QFile | undefined {
    return this.files.at(-1);
  }
}

export interface EmbeddedQueueOptions {
  dir: string;
  partitions: number;
  logger: Logger;
  /** A file is rolled over once it holds this many bytes (queue.file_bytes). */
  fileBytes?: number;
  onFatal: (err: Error) => void;
}

export class EmbeddedDigestQueue implements DigestQueue {
  private readonly parts: Partition[] = [];
  private failed: LogsvcError | null = null;
  private readonly fileBytes: number;
  private readonly listeners: ((r: DurableRecord) => void)[] = [];
  private readonly signals = new FollowSignals();
  /** Closed while the disk is full (a write failed with ENOSPC/EDQUOT): appends are refused, reads go on. */
  readonly space: SpaceGate;

  private constructor(private readonly opts: EmbeddedQueueOptions) {
    this.fileBytes = opts.fileBytes ?? DEFAULT_QUEUE_FILE_BYTES;
    this.space = new SpaceGate('digest queue', opts.dir, opts.logger);
  }

  static async open(opts: EmbeddedQueueOptions): Promise<EmbeddedDigestQueue> {
    const q = new EmbeddedDigestQueue(opts);
    await ensureDir(opts.dir);
    await q.ensurePartitions(opts.partitions);
    return q;
  }

  get partitionCount(): number {
    return this.parts.length;
  }

  async ensurePartitions(count: number): Promise<void> {
    for (let i = this.parts.length; i < count; i++) this.parts.push(await this.openPartition(i));
  }

  private async openPartition(id: number): Promise<Partition> {
    const dir = join(this.opts.dir, `p${String(id).padStart(4, '0')}`);
    await ensureDir(dir);
    const p = new Partition(id, dir);
    const names = (await readdir(dir)).filter((n) => n.endsWith(FILE_SUFFIX)).sort();
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const base = Number(name.slice(0, -FILE_SUFFIX.length));
      const path = join(dir, name);
      const buf = await readFile(path);
      const last = i === names.length - 1;
      if (buf.length < QUEUE_HEADER_BYTES || !buf.subarray(0, 4).equals(QUEUE_MAGIC)) {
        if (last && buf.length < QUEUE_HEADER_BYTES) {
          await atomicWriteFile(path, queueFileHeader());
          p.files.push({ base, path, size: 0 });
          continue;
        }
        throw new LogsvcError('E_STATE_CORRUPT', `digest queue file ${path}: bad header`);
      }
      if (buf.readUInt32LE(4) !== QUEUE_FORMAT_VERSION) throw new LogsvcError('E_STATE_CORRUPT', `digest queue file ${path}: unsupported format version ${buf.readUInt32LE(4)}`);
      const scan = scanQueueFile(buf, base);
      let size = buf.length - QUEUE_HEADER_BYTES;
      for (const d of scan.damaged) {
        const tail = d.to >= buf.length && last;
        if (tail) {
          const aside = `${path}.damaged-${Date.now()}`;
          await atomicWriteFile(aside, buf.subarray(d.from));
          await truncate(path, d.from);
          size = d.from - QUEUE_HEADER_BYTES;
          this.opts.logger.error('digest queue: cut a damaged tail', { file: path, at: d.from, bytes: buf.length - d.from, keptAside: aside });
        } else {
          this.opts.logger.error('digest queue: damaged bytes skipped', { file: path, from: d.from, to: d.to });
        }
      }
      p.files.push({ base, path, size });
    }
    const cur = p.current;
    if (cur === undefined) {
      await this.newFile(p, 0);
    } else {
      p.fh = await open(cur.path, 'a');
      p.next = cur.base + cur.size;
    }
    return p;
  }

  private async newFile(p: Partition, base: number): Promise<void> {
    const path = join(p.dir, `${pad(base)}${FILE_SUFFIX}`);
    const fh = await open(path, 'w');
    try {
      await writeAll(fh, queueFileHeader());
    } catch (err) {
      // No room for the new file's header: it is removed, the current file stays the last one.
      await fh.close();
      await unlink(path).catch(() => undefined);
      throw err;
    }
    await fh.sync();
    await fsyncDir(p.dir);
    if (p.fh !== null) await p.fh.close();
    p.fh = fh;
    p.files.push({ base, path, size: 0 });
  }

  private part(partition: number): Partition {
    const p = this.parts[partition];
    if (p === undefined) throw new LogsvcError('E_INTERNAL', `digest queue has no partition ${partition}`);
    return p;
  }

  /**
   * After a write refused for want of space: truncate the current file to its last good length (a
   * shrink needs no space), refuse the batch and every append waiting, and hand the offsets back.
   * A failed truncate leaves the file's contents unknown: that is fatal.
   */
  private async cutBack(p: Partition, batch: Pending[], cause: unknown): Promise<void> {
    const cur = p.current!;
    const bytes = batch.reduce((n, b) => n + frameBytes(b.payload.length), 0);
    await p.fh!.truncate(QUEUE_HEADER_BYTES + cur.size);
    await p.fh!.datasync();
    const refusal = this.space.close(cause, bytes);
    for (const b of batch) b.reject(refusal);
    for (const b of p.pending) b.reject(refusal);
    p.pending = [];
    p.next = cur.base + cur.size;
  }

  onDurable(listener: (r: DurableRecord) => void): void {
    this.listeners.push(listener);
  }

  busy(partition: number): boolean {
    const p = this.parts[partition];
    return p !== undefined && (p.flushing || p.pending.length > 0);
  }

  append(partition: number, payload: Buffer, attachment?: unknown): Promise<number> {
    if (this.failed !== null) return Promise.reject(this.failed);
    const full = this.space.refusal;
    if (full !== null) return Promise.reject(full);
    // The reader treats larger frames as damage: refuse them here rather than lose them there.
    if (payload.length > MAX_RECORD_BYTES) return Promise.reject(new LogsvcError('E_BODY_TOO_LARGE', `digest queue record of ${payload.length} bytes is over the limit of ${MAX_RECORD_BYTES}`));
    const p = this.part(partition);
    const offset = p.next;
    const head = queueFrameHead(offset, payload);
    p.next += frameBytes(payload.length);
    return new Promise((resolve, reject) => {
      p.pending.push({ head, payload, attachment, resolve, reject, offset });
      if (!p.flushing) void this.flush(p);
    });
  }

  private async flush(p: Partition): Promise<void> {
    p.flushing = true;
    try {
      while (p.pending.length > 0 && this.failed === null) {
        const batch = p.pending;
        p.pending = [];
        try {
          const cur = p.current!;
          const target = cur.size >= this.fileBytes ? null : cur;
          try {
            if (target === null) await this.newFile(p, cur.base + cur.size);
            await writeAll(p.fh!, batch.flatMap((b) => [b.head, b.payload]));
          } catch (err) {
            // A write refused for want of space is not a failed fsync: what was durable stays so.
            // Cut the partial frames back, refuse this batch and what waits, and refuse appends
            // until the disk has room again (SpaceGate). Anything else is fatal, as before.
            if (!isNoSpaceError(err)) throw err;
            await this.cutBack(p, batch, err);
            continue;
          }
          await p.fh!.datasync();
          const written = p.current!;
          for (const b of batch) written.size += frameBytes(b.payload.length);
          for (const b of batch) b.resolve(b.offset);
          this.signals.notify(p.id);
          // Listeners (the digest) run after the acknowledgements have gone out: they are not on the
          // request's critical path. setImmediate callbacks run in order, so offsets stay ordered.
          if (this.listeners.length > 0) setImmediate(() => this.notify(p.id, batch));
          if (p.pending.length === 0) await this.rollIfFull(p);
        } catch (err) {
          this.failed = new LogsvcError('E_UNAVAILABLE', `digest queue partition ${p.id}: write or fsync failed (${(err as Error).message}); the node must stop`, { cause: err });
          for (const b of batch) b.reject(this.failed);
          for (const b of p.pending) b.reject(this.failed);
          p.pending = [];
          this.opts.onFatal(this.failed);
        }
      }
    } finally {
      p.flushing = false;
    }
  }

  /**
   * Starts the next file as soon as the current one is full, after the batch that filled it was
   * acknowledged, rather than before the next batch's write: the partition reads as busy meanwhile,
   * so ingest sends new records elsewhere instead of having them wait for a file create and two
   * fsyncs (docs/benchmarks.md, 2026-11-29). A failure here is left to the next write, which tries
   * again and treats the error as it always did.
   */
  private async rollIfFull(p: Partition): Promise<void> {
    const cur = p.current!;
    if (cur.size < this.fileBytes) return;
    try {
      await this.newFile(p, cur.base + cur.size);
    } catch (err) {
      this.opts.logger.warn('digest queue: could not start the next file; the next write tries again', { partition: p.id, error: (err as Error).message });
    }
  }

  private notify(partition: number, batch: Pending[]): void {
    for (const b of batch) {
      const rec: DurableRecord = { partition, offset: b.offset, nextOffset: b.offset + frameBytes(b.payload.length), payload: b.payload, attachment: b.attachment };
      for (const l of this.listeners) {
        try {
          l(rec);
        } catch (err) {
          this.opts.logger.error('digest queue listener failed', { partition, offset: b.offset, error: (err as Error).message });
        }
      }
    }
  }

  endOffset(partition: number): number {
    return this.part(partition).next;
  }

  async *read(partition: number, fromOffset: number): AsyncIterable<QueueRecord> {
    const p = this.part(partition);
    for (const f of [...p.files]) {
      if (f.base + f.size <= fromOffset) continue;
      let buf: Buffer;
      try {
        buf = await readFile(f.path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // truncated away meanwhile
        throw err;
      }
      // Only what was durable when this read started (appends may be in flight).
      const limit = Math.min(buf.length, QUEUE_HEADER_BYTES + f.size);
      const start = Math.max(QUEUE_HEADER_BYTES, fromOffset - f.base + QUEUE_HEADER_BYTES);
      const scan = scanQueueFile(buf.subarray(0, limit), f.base, start);
      for (const r of scan.records) {
        if (r.offset >= fromOffset) yield { partition, offset: r.offset, nextOffset: r.offset + frameBytes(r.payload.length), payload: r.payload };
      }
    }
  }

  follow(partition: number, fromOffset: number, handler: (r: QueueRecord) => Promise<void>, onError?: (err: Error) => void): FollowHandle {
    this.part(partition);
    return this.signals.follow(this, partition, fromOffset, handler, onError ?? ((err) => this.opts.logger.error('digest queue follow stopped', { partition, error: err.message })));
  }

  async truncateBelow(partition: number, offset: number): Promise<void> {
    const p = this.part(partition);
    // Whole files only. The file being appended to is first rolled over when every record in it
    // is below `offset` (the partition is wholly digested), so a quiet partition keeps no
    // digested bytes on disk; a file that is still written keeps what it holds until it rolls
    // over at fileBytes.
    await this.rollIfDigested(p, offset);
    let removed = false;
    while (p.files.length > 1 && p.files[0]!.base + p.files[0]!.size <= offset) {
      const f = p.files.shift()!;
      await unlink(f.path).catch(() => undefined);
      removed = true;
    }
    if (removed) await fsyncDir(p.dir);
  }

  /**
   * Starts a new, empty file at the partition's end when the current one holds at least
   * ROLL_DIGESTED_MIN_BYTES and all of it is below `offset`. Only between writes: appends arriving
   * meanwhile wait in `pending` (as during a flush) and are written to the new file. The new file is
   * durable (header, file and directory fsync'ed) before the caller unlinks the old one, and the
   * old one is wholly below a persisted checkpoint, so a crash at any point leaves a queue that
   * opens and replays the same records. Rolling is an optimisation: if the new file cannot be
   * made (a full disk), the current file stays and nothing is lost.
   */
  private async rollIfDigested(p: Partition, offset: number): Promise<void> {
    const cur = p.current;
    if (cur === undefined || cur.size < ROLL_DIGESTED_MIN_BYTES || cur.base + cur.size > offset) return;
    if (p.flushing || p.pending.length > 0 || this.failed !== null || this.space.refusal !== null) return;
    p.flushing = true;
    try {
      await this.newFile(p, cur.base + cur.size);
    } catch (err) {
      this.opts.logger.warn('digest queue: could not start a new file to reclaim a digested one; it stays until the next try', { partition: p.id, error: (err as Error).message });
    } finally {
      p.flushing = false;
      if (p.pending.length > 0) void this.flush(p);
    }
  }

  sizeBytes(): number {
    let n = 0;
    for (const p of this.parts) for (const f of p.files) n += f.size;
    return n;
  }

  recordBytes(r: QueueRecord): number {
    return r.nextOffset - r.offset;
  }

  bytesBetween(_partition: number, from: number, to: number): number {
    return Math.max(0, to - from);
  }

  async close(): Promise<void> {
    this.space.stop();
    for (const p of this.parts) {
      while (p.flushing) await new Promise((r) => setTimeout(r, 5));
      await p.fh?.close();
      p.fh = null;
    }
  }

  /** For tests and operators: remove the whole queue directory. */
  static async destroy(dir: string): Promise<void> {
    await rm(dir, { recursive: true, force: true });
  }
}
