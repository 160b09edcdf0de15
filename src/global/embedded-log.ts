/**
 * The single-node global log: files in `<data-dir>/global/`.
 *
 *   events-<firstSeq>.log   header ("LSGE", u32 LE version) + frames of msgpack {seq, event}
 *   snapshot-<seq>.bin      header ("LSGS", u32 LE version) + one frame of msgpack SnapshotData
 *
 * Appends are fdatasync'ed before they resolve. A snapshot is written atomically, then a new log file
 * is started; the two newest snapshots and the logs since the older of them are kept, so a damaged
 * newest snapshot falls back to the previous one. On open, a damaged tail of the newest log (a crash
 * mid-append, or a flipped bit) is cut off and kept aside as `<file>.damaged-<time>`; damage anywhere
 * else would drop events that later ones depend on, so it stops the node with E_STATE_CORRUPT.
 */
import { open, readdir, readFile, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { LogsvcError } from '../lib/errors.js';
import { pack, unpack } from '../lib/msgpack.js';
import { atomicWriteFile, encodeFrame, ensureDir, fsyncDir, isNoSpaceError, scanFrames, writeAll } from '../storage/index.js';
import type { GlobalEvent } from './events.js';
import type { GlobalLog, LoadedLog } from './log.js';
import type { SnapshotData } from './model.js';

export const GLOBAL_LOG_FORMAT_VERSION = 1;
const LOG_MAGIC = Buffer.from('LSGE');
const SNAP_MAGIC = Buffer.from('LSGS');
const HEADER_BYTES = 8;
const KEEP_SNAPSHOTS = 2;

function header(magic: Buffer): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  magic.copy(h, 0);
  h.writeUInt32LE(GLOBAL_LOG_FORMAT_VERSION, 4);
  return h;
}

function checkHeader(buf: Buffer, magic: Buffer, file: string): void {
  if (buf.length < HEADER_BYTES || !buf.subarray(0, 4).equals(magic)) {
    throw new LogsvcError('E_STATE_CORRUPT', `global state file ${file}: bad header`);
  }
  const version = buf.readUInt32LE(4);
  if (version !== GLOBAL_LOG_FORMAT_VERSION) {
    throw new LogsvcError('E_STATE_CORRUPT', `global state file ${file}: format version ${version} is not supported (expected ${GLOBAL_LOG_FORMAT_VERSION})`);
  }
}

/** The first intact frame at or after `from` that holds an event numbered `expected` or later. */
function laterIntactEvent(buf: Buffer, from: number, expected: number): { offset: number; seq: number } | null {
  for (let pos = from; pos + 8 <= buf.length; pos++) {
    const scan = scanFrames(buf.subarray(0, Math.min(buf.length, pos + 8 + buf.readUInt32LE(pos))), pos);
    const f = scan.frames[0];
    if (f === undefined) continue;
    try {
      const rec = unpack(f.payload) as { seq?: unknown };
      if (typeof rec?.seq === 'number' && rec.seq >= expected) return { offset: pos, seq: rec.seq };
    } catch {
      // not a record
    }
  }
  return null;
}

const pad = (n: number): string => String(n).padStart(12, '0');
const seqOf = (name: string, prefix: string, suffix: string): number | null => {
  if (!name.startsWith(prefix) || !name.endsWith(suffix)) return null;
  const n = Number(name.slice(prefix.length, name.length - suffix.length));
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
};

export class EmbeddedGlobalLog implements GlobalLog {
  private fh: FileHandle | null = null;
  private failed: LogsvcError | null = null;

  constructor(private readonly dir: string) {}

  private async listed(prefix: string, suffix: string): Promise<{ seq: number; name: string }[]> {
    const names = await readdir(this.dir);
    return names
      .map((name) => ({ name, seq: seqOf(name, prefix, suffix) }))
      .filter((x): x is { name: string; seq: number } => x.seq !== null)
      .sort((a, b) => a.seq - b.seq);
  }

  async open(): Promise<LoadedLog> {
    await ensureDir(this.dir);
    const repairs: string[] = [];

    let snapshot: SnapshotData | null = null;
    const snapshots = await this.listed('snapshot-', '.bin');
    for (const s of [...snapshots].reverse()) {
      try {
        snapshot = this.readSnapshot(await readFile(join(this.dir, s.name)), s.name);
        break;
      } catch (err) {
        repairs.push(`snapshot ${s.name} is damaged (${(err as Error).message}); using an older one`);
      }
    }
    if (snapshot === null && snapshots.length > 0) {
      throw new LogsvcError('E_STATE_CORRUPT', `global state: every snapshot in ${this.dir} is damaged`);
    }

    const logs = await this.listed('events-', '.log');
    const events: LoadedLog['events'] = [];
    let expected = (snapshot?.seq ?? 0) + 1;
    for (let i = 0; i < logs.length; i++) {
      const { name } = logs[i]!;
      const path = join(this.dir, name);
      const last = i === logs.length - 1;
      const buf = await readFile(path);
      if (buf.length < HEADER_BYTES && last) {
        // Crash between creating the file and writing its header: nothing in it was ever acknowledged.
        await atomicWriteFile(path, header(LOG_MAGIC));
        repairs.push(`global log ${name} had an incomplete header; rewritten empty`);
        continue;
      }
      checkHeader(buf, LOG_MAGIC, name);
      const scan = scanFrames(buf, HEADER_BYTES);
      for (const f of scan.frames) {
        // A record holds one event ({seq, event}) or a transaction's events ({seq, events}).
        const rec = unpack(f.payload) as { seq: number; event?: GlobalEvent; events?: GlobalEvent[] };
        const batch = rec.events ?? (rec.event === undefined ? [] : [rec.event]);
        batch.forEach((event, i) => {
          const seq = rec.seq + i;
          if (seq < expected) return; // covered by the snapshot
          if (seq !== expected) {
            throw new LogsvcError('E_STATE_CORRUPT', `global log ${name}: expected event ${expected} at offset ${f.offset}, found ${seq}`);
          }
          events.push({ seq, event });
          expected++;
        });
      }
      if (scan.stop !== undefined) {
        if (!last) {
          throw new LogsvcError('E_STATE_CORRUPT', `global log ${name}: ${scan.stop.reason} at offset ${scan.stop.offset}, and later log files depend on it`);
        }
        const later = laterIntactEvent(buf, scan.stop.offset + 1, expected);
        if (later !== null) {
          // Not a torn tail: acknowledged events follow the damage, and skipping the damaged one
          // would apply later events without it.
          throw new LogsvcError(
            'E_STATE_CORRUPT',
            `global log ${name}: ${scan.stop.reason} at offset ${scan.stop.offset}, but intact event ${later.seq} follows at offset ${later.offset}; refusing to drop acknowledged events`,
          );
        }
        const aside = `${path}.damaged-${Date.now()}`;
        await atomicWriteFile(aside, buf.subarray(scan.validEnd));
        await truncate(path, scan.validEnd);
        const fh = await open(path, 'r+');
        await fh.sync();
        await fh.close();
        repairs.push(
          `global log ${name}: ${scan.stop.reason} at offset ${scan.stop.offset}; kept ${scan.frames.length} events before it, ` +
            `moved ${buf.length - scan.validEnd} damaged bytes to ${aside}`,
        );
      }
    }

    const current = logs.at(-1);
    if (current === undefined) {
      await this.startLog(expected);
    } else {
      this.fh = await open(join(this.dir, current.name), 'a');
    }
    return { snapshot, events, repairs };
  }

  private readSnapshot(buf: Buffer, name: string): SnapshotData {
    checkHeader(buf, SNAP_MAGIC, name);
    const scan = scanFrames(buf, HEADER_BYTES);
    const frame = scan.frames[0];
    if (frame === undefined || scan.stop !== undefined || scan.frames.length !== 1) {
      throw new Error(scan.stop?.reason ?? 'no snapshot record');
    }
    return unpack(frame.payload) as SnapshotData;
  }

  private async startLog(firstSeq: number): Promise<void> {
    if (this.fh !== null) await this.fh.close();
    const path = join(this.dir, `events-${pad(firstSeq)}.log`);
    const fh = await open(path, 'a');
    const stat = await fh.stat();
    if (stat.size === 0) {
      await writeAll(fh, header(LOG_MAGIC));
      await fh.sync();
      await fsyncDir(this.dir);
    }
    this.fh = fh;
  }

  append(seq: number, event: GlobalEvent): Promise<void> {
    return this.write(seq, { seq, event });
  }

  appendBatch(firstSeq: number, events: GlobalEvent[]): Promise<void> {
    return this.write(firstSeq, events.length === 1 ? { seq: firstSeq, event: events[0] } : { seq: firstSeq, events });
  }

  private async write(seq: number, record: object): Promise<void> {
    if (this.failed !== null) throw this.failed;
    if (this.fh === null) throw new LogsvcError('E_STATE_WRITE_FAILED', 'global log is not open');
    const fh = this.fh;
    let before = -1;
    try {
      before = (await fh.stat()).size;
      await writeAll(fh, encodeFrame(pack(record)));
    } catch (err) {
      // A write refused for want of space is not a failed fsync (issue 24): the partial frame is cut
      // back and this change is refused (503); the log stays usable for the next one.
      if (isNoSpaceError(err) && before >= 0) {
        let cut = true;
        await fh.truncate(before).catch(() => (cut = false));
        if (cut) throw new LogsvcError('E_DISK_FULL', `global state change (event ${seq}) refused: the disk is full (${(err as Error).message}); retry once space is freed`, { cause: err });
      }
      this.failed = new LogsvcError('E_STATE_WRITE_FAILED', `global log append of event ${seq} failed: ${(err as Error).message}`, { cause: err });
      throw this.failed;
    }
    try {
      await fh.datasync();
    } catch (err) {
      // After a failed write or fsync the file's durable contents are unknown: refuse all further
      // appends rather than acknowledge anything more.
      this.failed = new LogsvcError('E_STATE_WRITE_FAILED', `global log append of event ${seq} failed: ${(err as Error).message}`, { cause: err });
      throw this.failed;
    }
  }

  async writeSnapshot(data: SnapshotData): Promise<void> {
    const body = Buffer.concat([header(SNAP_MAGIC), encodeFrame(pack(data))]);
    await atomicWriteFile(join(this.dir, `snapshot-${pad(data.seq)}.bin`), body);
    await this.startLog(data.seq + 1);
    const snapshots = await this.listed('snapshot-', '.bin');
    const kept = snapshots.slice(-KEEP_SNAPSHOTS);
    // Until there are two snapshots, keep every log: the only snapshot has no fallback otherwise.
    const oldestKept = kept.length < KEEP_SNAPSHOTS ? 0 : (kept[0]?.seq ?? 0);
    for (const s of snapshots.slice(0, -KEEP_SNAPSHOTS)) await unlink(join(this.dir, s.name));
    // Logs that start at or before the oldest kept snapshot and are followed by another log are covered.
    const logs = await this.listed('events-', '.log');
    for (let i = 0; i < logs.length - 1; i++) {
      if (logs[i + 1]!.seq <= oldestKept + 1) await unlink(join(this.dir, logs[i]!.name));
    }
    await fsyncDir(this.dir);
  }

  async close(): Promise<void> {
    await this.fh?.close();
    this.fh = null;
  }
}

