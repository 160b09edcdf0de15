/**
 * What a writer does when its disk is full (issue 24, defect 4): a write refused with ENOSPC/EDQUOT
 * closes the gate (the writer has cut its partial frame back), further writes are refused at once
 * with E_DISK_FULL (503 + Retry-After), and a probe (statfs every second) opens it again by itself
 * once the disk has room for what failed plus a margin. Reads are never affected.
 */
import { statfs } from 'node:fs/promises';
import { LogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';

/** Free bytes the disk must have beyond the failed write before writes resume. */
export const RESUME_MARGIN_BYTES = 1024 * 1024;
const PROBE_MS = 1000;

export class SpaceGate {
  private closedBy: { error: LogsvcError; needBytes: number } | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    /** What writes here, for messages: "digest queue", "global log", "segments". */
    private readonly what: string,
    /** A path on the disk to probe. */
    private readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /** Null while writes may go on; else the error to refuse them with. */
  get refusal(): LogsvcError | null {
    return this.closedBy?.error ?? null;
  }

  /** Throws E_DISK_FULL while the disk is full. */
  check(): void {
    if (this.closedBy !== null) throw this.closedBy.error;
  }

  /** A write of `bytes` failed for want of space (and was cut back): refuse until there is room. */
  close(cause: unknown, bytes: number): LogsvcError {
    const needBytes = bytes + RESUME_MARGIN_BYTES;
    if (this.closedBy === null) {
      const error = new LogsvcError('E_DISK_FULL', `the disk of the ${this.what} is full (${(cause as Error).message}); writes are refused until space is freed, reads are still served; retry later`, { cause });
      this.closedBy = { error, needBytes };
      this.logger.error(`${this.what}: disk full; refusing writes until space returns`, { dir: this.dir, error: (cause as Error).message });
      this.timer = setInterval(() => void this.probe(), PROBE_MS);
      this.timer.unref();
    } else this.closedBy.needBytes = Math.max(this.closedBy.needBytes, needBytes);
    return this.closedBy.error;
  }

  private async probe(): Promise<void> {
    if (this.closedBy === null) return;
    let free: number;
    try {
      const s = await statfs(this.dir);
      free = s.bavail * s.bsize;
    } catch {
      return;
    }
    if (this.closedBy !== null && free >= this.closedBy.needBytes) {
      this.logger.info(`${this.what}: disk has room again; writes resume`, { dir: this.dir, freeBytes: free });
      this.open();
    }
  }

  private open(): void {
    this.closedBy = null;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
