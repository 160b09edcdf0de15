/**
 * Writing one segment: create (header, fsync, directory fsync), append blocks (each fdatasync'ed
 * before the append resolves, so a block is durable when the digest advances its checkpoint), and
 * close (footer + trailer, fsync). Recovery closes a segment left open by a crash, cutting a torn
 * last block first.
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
    await fh.sync();
    await fsyncDir(dir);
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
    await this.fh!.datasync();
    this.size += block.length;
    this.blocks.push(entry);
    return entry;
  }

  async close(now: number): Promise<SegmentFooter> {
    const footer: SegmentFooter = { blocks: this.blocks, ...summarize(this.blocks), closedAt: now };
    const bytes = encodeFooter(footer);
    await this.writeOrCutBack(bytes);
    await this.fh!.sync();
    await this.fh!.close();
    this.fh = null;
    this.size += bytes.length;
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

  /** Closes a segment found open at start-up; a damaged tail is cut (and kept aside) first. */
  static async recoverOpen(path: string, parsed: ParsedSegment, buf: Buffer, now: number): Promise<SegmentFooter> {
    const tail = parsed.damage.at(-1);
    let end = buf.length;
    if (tail !== undefined && tail.to >= buf.length) {
      await atomicWriteFile(`${path}.damaged-${now}`, buf.subarray(tail.at));
      end = tail.at;
      await truncate(path, end);
    }
    const footer: SegmentFooter = { blocks: parsed.blocks, ...summarize(parsed.blocks), closedAt: now };
    const bytes = encodeFooter(footer);
    const fh = await open(path, 'r+');
    await writeAll(fh, bytes, end);
    await fh.sync();
    await fh.close();
    await fsyncDir(dirname(path));
    return footer;
  }
}
