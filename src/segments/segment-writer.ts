/**
 * Writing one segment: create (header), append blocks, and close (every block made durable, then
 * footer + trailer, fsync). Appends are not synced one by one: `sync()` makes everything appended
 * so far durable (the file's first sync also fsyncs its directory, whose entry a new file needs), and
 * the digest calls it before it persists a checkpoint or reports a position that claims those blocks
 * (docs/ARCHITECTURE.md, "Exactly once"). Recovery closes a segment left open by a crash, cutting it
 * at its first damaged block: an unsynced tail may have reached the disk out of order.
 */
import { open, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { atomicWriteFile, ensureDir, fsyncDir, isNoSpaceError, writeAll } from '../storage/index.js';
import type { BlockMeta } from './block.js';
import { encodeFooter, encodeSegmentHeader, summarize, type BlockEntry, type ParsedSegment, type SegmentFooter, type SegmentMeta } from './segment-file.js';

export class SegmentWriter {
  private constructor(
    readonly path: string,
    readonly meta: SegmentMeta,
    private fh: FileHandle | null,
    private size: number,
    readonly blocks: BlockEntry[],
  ) {}

  /** Bytes known durable (the file's own contents; its directory entry once `dirSynced`). */
  private syncedTo = 0;
  private dirSynced = false;
  private syncing: Promise<void> | null = null;

  static async create(dir: string, meta: SegmentMeta): Promise<SegmentWriter> {
    await ensureDir(dir);
    const path = join(dir, `${meta.id}.seg`);
    const header = encodeSegmentHeader(meta);
    const fh = await open(path, 'wx');
    try {
      await writeAll(fh, header, 0);
    } catch (err) {
      // No room for the header: no half-made segment is left behind.
      await fh.close();
      await unlink(path).catch(() => undefined);
      throw err;
    }
    return new SegmentWriter(path, meta, fh, header.length, []);
  }

  get blockCount(): number {
    return this.blocks.length;
  }

  get bytes(): number {
    return this.size;
  }

  async append(block: Buffer, meta: BlockMeta): Promise<BlockEntry> {
    const entry: BlockEntry = { ...meta, pos: this.size };
    await this.writeOrCutBack(block);
    this.size += block.length;
    this.blocks.push(entry);
    return entry;
  }

  /** Whether some appended bytes (or the file's directory entry) are not known durable yet. */
  get unsynced(): boolean {
    return this.syncedTo < this.size || !this.dirSynced;
  }

  /**
   * Makes every block appended before the call durable: one fdatasync (an fsync and a directory
   * fsync the first time), shared with a sync already under way when that one covers the same bytes.
   */
  async sync(): Promise<void> {
    const target = this.size;
    while (this.syncedTo < target || !this.dirSynced) {
      if (this.syncing === null) this.syncing = this.syncOnce().finally(() => (this.syncing = null));
      await this.syncing;
    }
  }

  private async syncOnce(): Promise<void> {
    const to = this.size;
    if (this.fh !== null) {
      if (this.syncedTo === 0) await this.fh.sync();
      else await this.fh.datasync();
    }
    if (!this.dirSynced) {
      await fsyncDir(dirname(this.path));
      this.dirSynced = true;
    }
    this.syncedTo = Math.max(this.syncedTo, to);
  }

  async close(now: number): Promise<SegmentFooter> {
    // The blocks first: a footer on disk claims them, and a footer reaching the disk before the
    // blocks it lists would make a restart trust blocks that are not there.
    await this.sync();
    const footer: SegmentFooter = { blocks: this.blocks, ...summarize(this.blocks), closedAt: now };
    const bytes = encodeFooter(footer);
    await this.writeOrCutBack(bytes);
    await this.fh!.sync();
    await this.fh!.close();
    this.fh = null;
    this.size += bytes.length;
    this.syncedTo = this.size;
    return footer;
  }

  /**
   * Writes at the end; a write refused for want of space is cut back to the last good length (the
   * caller may try again once there is room: the segment is as it was).
   */
  private async writeOrCutBack(bytes: Buffer): Promise<void> {
    try {
      await writeAll(this.fh!, bytes, this.size);
    } catch (err) {
      if (isNoSpaceError(err)) await this.fh!.truncate(this.size);
      throw err;
    }
  }

  /**
   * Closes a segment found open at start-up. Everything from its first damage on is cut (and kept
   * aside): blocks appended since the last sync may have reached the disk in any order, so an intact
   * block past a damaged one does not mean the damaged one's events are elsewhere, and its higher
   * queue position would make the replay skip them. Those events are still in the queue: nothing
   * that claims them (checkpoint, progress marks, footer) was persisted before they were synced.
   */
  static async recoverOpen(path: string, parsed: ParsedSegment, buf: Buffer, now: number): Promise<SegmentFooter> {
    const first = parsed.damage[0];
    let end = buf.length;
    let blocks = parsed.blocks;
    if (first !== undefined) {
      await atomicWriteFile(`${path}.damaged-${now}`, buf.subarray(first.at));
      end = first.at;
      blocks = blocks.filter((b) => b.pos < first.at);
      await truncate(path, end);
    }
    const footer: SegmentFooter = { blocks, ...summarize(blocks), closedAt: now };
    const bytes = encodeFooter(footer);
    const fh = await open(path, 'r+');
    await writeAll(fh, bytes, end);
    await fh.sync();
    await fh.close();
    await fsyncDir(dirname(path));
    return footer;
  }
}
