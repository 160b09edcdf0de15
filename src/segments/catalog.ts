/**
 * The segment catalog: every segment on this node with its datasource, partition, time range and
 * blocks. Built at start-up from the files (closed segments from their footers, open ones by
 * scanning and closing them) and kept current by the digest. It answers the digest's dedup question
 * — the highest queue position of each (partition, datasource) that is already durable — and, later,
 * the query planner's pruning questions.
 */
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { decodeFooter, FOOTER_MAGIC, parseSegment, segmentVersion, TRAILER_BYTES, type BlockEntry, type SegmentMeta } from './segment-file.js';
import { SegmentWriter } from './segment-writer.js';
import { atomicWriteFile, crc32c, ensureDir } from '../storage/index.js';
import type { SegmentFooter } from './segment-file.js';

export interface Position {
  offset: number;
  index: number;
}

export function positionAfter(a: Position, b: Position): boolean {
  return a.offset > b.offset || (a.offset === b.offset && a.index > b.index);
}

export interface SegmentInfo {
  path: string;
  meta: SegmentMeta;
  blocks: BlockEntry[];
  closed: boolean;
  bytes: number;
}

const hwmKey = (partition: number, ds: string): string => `${partition}/${ds}`;

/** `<segments dir>/void.json`: blocks voided by a lost digest epoch (a cluster), see `voidAfter`. */
const VOID_FILE = 'void.json';

interface VoidRecord {
  /** Segment id -> index of its first void block (it and every later block are void). */
  segments: Record<string, number>;
  /** Partition -> the last ended epoch of this node whose blocks were voided. */
  fencedEpochs: Record<string, number>;
  /** Partition -> the highest ended digest epoch applied by `voidEpochs` (absent before replication). */
  endsApplied?: Record<string, number>;
}

export class SegmentCatalog {
  private readonly segments = new Map<string, SegmentInfo>();
  /** forRepository's lists, made at first ask after a change (every query asks, once or twice). */
  private readonly repoLists = new Map<string, readonly SegmentInfo[]>();
  private readonly hwm = new Map<string, Position>();
  private voids: VoidRecord = { segments: {}, fencedEpochs: {} };
  private voidsWritten: Promise<void> = Promise.resolve();
  /**
   * The segment files of each running query's snapshot (one entry a snapshot: pinning and
   * releasing cost a query nothing per file; asking whether a file is held, rare, walks them).
   */
  private readonly pins = new Set<{ paths: readonly string[] }>();
  /** Work waiting for a path's last pin to go (a deferred unlink). */
  private readonly onUnpinned = new Map<string, (() => void)[]>();

  constructor(readonly dir: string) {}

  /** Loads every segment under `dir`, closing those a crash left open. */
  static async load(dir: string, logger: Logger, now: number): Promise<SegmentCatalog> {
    const cat = new SegmentCatalog(dir);
    try {
      cat.voids = JSON.parse(await readFile(join(dir, VOID_FILE), 'utf8')) as VoidRecord;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const path of await listSegmentFiles(dir)) {
      try {
        const info = await readSegmentInfo(path, logger, now);
        cat.put(info);
      } catch (err) {
        logger.error('segment skipped: unreadable', { file: path, error: (err as Error).message });
      }
    }
    return cat;
  }

  put(info: SegmentInfo): void {
    const voidFrom = this.voids.segments[info.meta.id];
    if (voidFrom !== undefined) info = { ...info, blocks: info.blocks.slice(0, voidFrom) };
    this.segments.set(info.meta.id, info);
    this.repoLists.clear();
    for (const b of info.blocks) this.noteDurable(info.meta.partition, info.meta.ds, { offset: b.lastOffset, index: b.lastIndex });
  }

  noteDurable(partition: number, ds: string, p: Position): void {
    const k = hwmKey(partition, ds);
    const cur = this.hwm.get(k);
    if (cur === undefined || positionAfter(p, cur)) this.hwm.set(k, p);
  }

  /** The last queue position of `ds` from `partition` held in a durable segment, or null. */
  highWater(partition: number, ds: string): Position | null {
    return this.hwm.get(hwmKey(partition, ds)) ?? null;
  }

  /** Every (datasource, durable high-water mark) of `partition`: a digest owner's progress report. */
  marksOf(partition: number): [string, Position][] {
    const prefix = `${partition}/`;
    const out: [string, Position][] = [];
    for (const [k, p] of this.hwm) if (k.startsWith(prefix)) out.push([k.slice(prefix.length), p]);
    return out;
  }

  /** The last ended epoch of `partition` whose blocks were voided here (0: none). */
  fencedEpoch(partition: number): number {
    return this.voids.fencedEpochs[String(partition)] ?? 0;
  }

  /**
   * A digest epoch of this node on `partition` ended at `marks`: the next owner went on from them,
   * so every local block of that partition past its datasource's mark (all of a datasource without
   * one) is void: left out of queries and of the high-water marks from now on, also after a restart
   * (recorded in void.json, written atomically before this resolves). Blocks are in queue order
   * within a segment, so a segment's void blocks are its tail. Call only while this node does not
   * digest the partition. Returns the number of blocks voided.
   */
  async voidAfter(partition: number, marks: ReadonlyMap<string, Position>, epoch: number): Promise<number> {
    let voided = 0;
    for (const info of this.segments.values()) {
      // Segments that carry their epoch are voided by that epoch's end (voidEpochs), whoever wrote them.
      if (info.meta.partition !== partition || info.meta.epoch !== undefined) continue;
      voided += this.trim(info, marks);
    }
    this.voids.fencedEpochs[String(partition)] = Math.max(this.fencedEpoch(partition), epoch);
    await this.saveVoids();
    this.recomputeMarks(partition);
    return voided;
  }

  /**
   * Segments that carry their digest epoch (a cluster's, own or replicas): every block of an ended
   * epoch past the marks it ended with is void (the next owner went on from them), here as on every
   * other holder. `ends` gives an epoch's end marks, undefined while it runs. Call only while this
   * node does not digest the partition; cheap when no epoch ended since the last call.
   */
  async voidEpochs(partition: number, ends: ReadonlyMap<number, ReadonlyMap<string, Position>>): Promise<number> {
    let last = 0;
    for (const e of ends.keys()) last = Math.max(last, e);
    const applied = this.voids.endsApplied?.[String(partition)] ?? 0;
    if (last <= applied) return 0;
    let voided = 0;
    for (const info of this.segments.values()) {
      if (info.meta.partition !== partition || info.meta.epoch === undefined) continue;
      const end = ends.get(info.meta.epoch);
      if (end !== undefined) voided += this.trim(info, end);
    }
    (this.voids.endsApplied ??= {})[String(partition)] = last;
    await this.saveVoids();
    this.recomputeMarks(partition);
    return voided;
  }

  /**
   * Adds a segment copied from another node: the blocks its epoch's end (if it ended) makes void are
   * left out before anything of it counts as durable here, and recorded so a restart does the same.
   */
  async putReplica(info: SegmentInfo, end: ReadonlyMap<string, Position> | undefined): Promise<void> {
    if (end !== undefined && this.trimBlocks(info.meta.id, info.blocks, end.get(info.meta.ds)) < info.blocks.length) await this.saveVoids();
    this.put(info);
  }

  /** Index of the first block past `mark` (all void when there is none), recorded; the blocks kept. */
  private trimBlocks(id: string, blocks: readonly BlockEntry[], mark: Position | undefined): number {
    const keep = blocks.findIndex((b) => mark === undefined || positionAfter({ offset: b.lastOffset, index: b.lastIndex }, mark));
    if (keep === -1) return blocks.length;
    const prior = this.voids.segments[id];
    this.voids.segments[id] = prior === undefined ? keep : Math.min(prior, keep);
    return keep;
  }

  /** Voids the blocks of a catalogued segment past its datasource's mark; returns how many. */
  private trim(info: SegmentInfo, marks: ReadonlyMap<string, Position>): number {
    const keep = this.trimBlocks(info.meta.id, info.blocks, marks.get(info.meta.ds));
    if (keep >= info.blocks.length) return 0;
    this.segments.set(info.meta.id, { ...info, blocks: info.blocks.slice(0, keep) });
    this.repoLists.clear();
    return info.blocks.length - keep;
  }

  /**
   * Writes void.json, one write after another, each with the record as it is at its turn: two
   * writes racing (the digest's fencing, a copy arriving, a deletion) could otherwise rename an
   * older record over a newer one, and a void block would come back at the next start.
   */
  private saveVoids(): Promise<void> {
    const next = this.voidsWritten.then(async () => {
      await ensureDir(this.dir);
      await atomicWriteFile(join(this.dir, VOID_FILE), `${JSON.stringify(this.voids)}\n`);
    });
    this.voidsWritten = next.catch(() => undefined);
    return next;
  }

  /** The marks of a partition are what its remaining local blocks say, nothing more. */
  private recomputeMarks(partition: number): void {
    for (const k of [...this.hwm.keys()]) if (k.startsWith(`${partition}/`)) this.hwm.delete(k);
    for (const info of this.segments.values()) {
      if (info.meta.partition !== partition) continue;
      for (const b of info.blocks) this.noteDurable(partition, info.meta.ds, { offset: b.lastOffset, index: b.lastIndex });
    }
  }

  all(): SegmentInfo[] {
    return [...this.segments.values()];
  }

  /** The segments of `repo`, in the catalog's order; the same list until the catalog changes. */
  forRepository(repo: string): readonly SegmentInfo[] {
    let out = this.repoLists.get(repo);
    if (out === undefined) {
      const list: SegmentInfo[] = [];
      for (const s of this.segments.values()) if (s.meta.repo === repo) list.push(s);
      out = list;
      this.repoLists.set(repo, out);
    }
    return out;
  }

  get(id: string): SegmentInfo | undefined {
    return this.segments.get(id);
  }

  /** Takes a segment out of the catalog (its high-water mark stays: replays still skip its events). */
  remove(id: string): void {
    this.segments.delete(id);
    this.repoLists.clear();
  }

  /**
   * Forgets a segment whose file is gone for good (deleted, not just taken out of the catalog): its
   * void record too. Call only after the unlink, so a crash in between keeps the record (a file
   * still there would otherwise come back whole at the next start).
   */
  async forget(id: string): Promise<void> {
    this.segments.delete(id);
    this.repoLists.clear();
    if (this.voids.segments[id] === undefined) return;
    delete this.voids.segments[id];
    await this.saveVoids();
  }

  /** Holds `paths` for a query's snapshot; the returned function releases them (once). */
  pin(paths: readonly string[]): () => void {
    const held = { paths };
    this.pins.add(held);
    return () => {
      if (!this.pins.delete(held) || this.onUnpinned.size === 0) return;
      for (const [p, waiting] of [...this.onUnpinned]) {
        if (this.pinned(p)) continue;
        this.onUnpinned.delete(p);
        for (const fn of waiting) fn();
      }
    };
  }

  private pinned(path: string): boolean {
    for (const { paths } of this.pins) if (paths.includes(path)) return true;
    return false;
  }

  /** Runs `fn` now if no snapshot holds `path`, else when the last one releases it. */
  whenUnpinned(path: string, fn: () => void): void {
    if (!this.pinned(path)) {
      fn();
      return;
    }
    const list = this.onUnpinned.get(path) ?? [];
    list.push(fn);
    this.onUnpinned.set(path, list);
  }
}

export async function listSegmentFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, depth: number): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const n of names.sort()) {
      const p = join(d, n);
      if (n.endsWith('.seg')) out.push(p);
      else if (depth < 2 && !n.includes('.')) await walk(p, depth + 1);
    }
  };
  await walk(dir, 0);
  return out;
}

/** Reads a closed segment's footer without reading its blocks; null if it has no valid footer. */
async function readFooter(path: string): Promise<{ footer: SegmentFooter; size: number } | null> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    if (size < TRAILER_BYTES) return null;
    const head = Buffer.alloc(8);
    await fh.read(head, 0, 8, 0);
    const version = segmentVersion(head, path);
    const trailer = Buffer.alloc(TRAILER_BYTES);
    await fh.read(trailer, 0, TRAILER_BYTES, size - TRAILER_BYTES);
    if (!trailer.subarray(8).equals(FOOTER_MAGIC)) return null;
    const len = trailer.readUInt32LE(0);
    if (len > size - TRAILER_BYTES) return null;
    const body = Buffer.alloc(len);
    await fh.read(body, 0, len, size - TRAILER_BYTES - len);
    if (crc32c(body) !== trailer.readUInt32LE(4)) return null;
    return { footer: decodeFooter(body, version), size };
  } finally {
    await fh.close();
  }
}

async function readHeaderMeta(path: string): Promise<SegmentMeta> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(16);
    await fh.read(head, 0, 16, 0);
    const len = head.readUInt32LE(8);
    const rest = Buffer.alloc(Math.min(len, 1024 * 1024));
    await fh.read(rest, 0, rest.length, 16);
    return parseSegment(Buffer.concat([head, rest]), path).meta;
  } finally {
    await fh.close();
  }
}

export async function readSegmentInfo(path: string, logger: Logger, now: number): Promise<SegmentInfo> {
  const closed = await readFooter(path);
  if (closed !== null) {
    return { path, meta: await readHeaderMeta(path), blocks: closed.footer.blocks, closed: true, bytes: closed.size };
  }
  // Open (or footer damaged): scan every block, then close it.
  const buf = await readFile(path);
  const parsed = parseSegment(buf, path);
  for (const d of parsed.damage) logger.error('segment damage found', { file: path, at: d.at, to: d.to, reason: d.reason });
  const footer = await SegmentWriter.recoverOpen(path, parsed, buf, now);
  return { path, meta: parsed.meta, blocks: footer.blocks, closed: true, bytes: (await stat(path)).size };
}
