/**
 * Node health: the checks the product reports (disk usage, event latency, not-alive nodes), the
 * data-dir write probe, the start-up grace period, and the status that `/api/v1/status` publishes.
 * Disk and probe results are refreshed on a timer, so requests never wait on the filesystem.
 */
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../lib/clock.js';
import type { LatencyWindow } from '../lib/latency-window.js';
import type { Logger } from '../lib/logger.js';
import { diskUsage, type DiskUsage } from '../storage/index.js';
import { formatUptime, thresholdStatus, worst, type CheckResult, type CheckStatus } from './checks.js';

export interface HealthOptions {
  dataDir: string;
  secondaryDir: string;
  backupDir: string;
  gracePeriodMs: number;
  checkIntervalMs: number;
  diskWarnPercent: number;
  diskDownPercent: number;
  latencyWarnSeconds: number;
  latencyDownSeconds: number;
  version: string;
}

export interface HealthReport {
  status: CheckStatus;
  statusMessage: string;
  uptime: string;
  version: string;
  checks: CheckResult[];
}

type DiskReading = { ok: true; usage: DiskUsage } | { ok: false; error: string } | null;

export class HealthService {
  private readonly startedAt: number;
  private disks: Record<'primary' | 'secondary' | 'backup', DiskReading> = { primary: null, secondary: null, backup: null };
  private writable: { ok: boolean; error: string } = { ok: true, error: '' };
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  private readonly extraChecks: (() => CheckResult)[] = [];

  constructor(
    private readonly opts: HealthOptions,
    private readonly clock: Clock,
    private readonly latency: LatencyWindow,
    private readonly nodes: () => { notAlive: number; total: number },
    private readonly logger: Logger,
    /** A fatal condition found elsewhere (a failed global-state write), or null. */
    private readonly fatal: () => string | null = () => null,
  ) {
    this.startedAt = clock.now();
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.opts.checkIntervalMs);
    this.timer.unref();
  }

  /** Adds a check computed on each report (it must not block: read cached state, e.g. the kafka check). */
  addCheck(check: () => CheckResult): void {
    this.extraChecks.push(check);
  }

  markStopping(): void {
    this.stopping = true;
  }

  /** Whether the node's stop has begun (new queries and ingest are refused: src/http/stopping-gate.ts). */
  isStopping(): boolean {
    return this.stopping;
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh(): Promise<void> {
    const read = async (path: string): Promise<DiskReading> => {
      if (path === '') return null;
      try {
        return { ok: true, usage: await diskUsage(path) };
      } catch (err) {
        return { ok: false, error: `cannot stat ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
      }
    };
    const [primary, secondary, backup] = await Promise.all([read(this.opts.dataDir), read(this.opts.secondaryDir), read(this.opts.backupDir)]);
    this.disks = { primary, secondary, backup };
    const wasOk = this.writable.ok;
    this.writable = await this.probeWritable();
    if (wasOk && !this.writable.ok) this.logger.error('data dir is not writable', { error: this.writable.error });
  }

  private async probeWritable(): Promise<{ ok: boolean; error: string }> {
    const probe = join(this.opts.dataDir, '.health-probe');
    try {
      const fh = await open(probe, 'w');
      try {
        await fh.write('probe\n');
        await fh.sync();
      } finally {
        await fh.close();
      }
      await unlink(probe);
      return { ok: true, error: '' };
    } catch (err) {
      return { ok: false, error: `data dir ${this.opts.dataDir} is not writable: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
    }
  }

  private diskCheck(name: string, reading: DiskReading): CheckResult {
    if (reading === null) return { name, status: 'OK', statusMessage: 'not enabled', fields: {} };
    if (!reading.ok) return { name, status: 'DOWN', statusMessage: reading.error, fields: {} };
    const u = reading.usage;
    const status = thresholdStatus(u.usedPercent, this.opts.diskWarnPercent, this.opts.diskDownPercent);
    return {
      name,
      status,
      statusMessage: status === 'OK' ? '' : `disk usage ${u.usedPercent.toFixed(2)}% is at or above the ${status === 'DOWN' ? this.opts.diskDownPercent : this.opts.diskWarnPercent}% threshold`,
      fields: { used: `${u.usedPercent.toFixed(2)}%`, total: `${u.totalBytes}b`, free: `${u.freeBytes}b`, path: u.path },
    };
  }

  private latencyCheck(): CheckResult {
    const s = this.latency.summary();
    const sec = (ms: number): string => `${(ms / 1000).toFixed(3)}s`;
    if (s.size === 0) return { name: 'event-latency-p99', status: 'OK', statusMessage: 'no events digested recently', fields: { size: '0' } };
    const status = thresholdStatus(s.p99 / 1000, this.opts.latencyWarnSeconds, this.opts.latencyDownSeconds);
    return {
      name: 'event-latency-p99',
      status,
      statusMessage: status === 'OK' ? '' : `p99 ingest-to-digest latency ${sec(s.p99)} is high`,
      fields: { p99: sec(s.p99), min: sec(s.min), p50: sec(s.p50), p95: sec(s.p95), max: sec(s.max), size: String(s.size) },
    };
  }

  private notAliveCheck(): CheckResult {
    const { notAlive, total } = this.nodes();
    return {
      name: 'not-alive-count',
      status: notAlive > 0 ? 'WARN' : 'OK',
      statusMessage: notAlive > 0 ? `${notAlive} of ${total} cluster nodes are not alive` : '',
      fields: { 'not-alive': String(notAlive), 'number-of-nodes': String(total) },
    };
  }

  /** The primary disk's last reading, or null before the first (or after a failed) probe. */
  primaryDisk(): DiskUsage | null {
    const p = this.disks.primary;
    return p !== null && p.ok ? p.usage : null;
  }

  /** Why the primary disk cannot take more data (usage at the DOWN threshold), or null. */
  diskProblem(): string | null {
    const p = this.disks.primary;
    if (p === null || !p.ok) return p === null ? null : p.error;
    return p.usage.usedPercent >= this.opts.diskDownPercent ? `disk ${p.usage.path} is ${p.usage.usedPercent.toFixed(1)}% full (limit ${this.opts.diskDownPercent}%)` : null;
  }

  inGracePeriod(): boolean {
    return this.clock.now() - this.startedAt < this.opts.gracePeriodMs;
  }

  report(): HealthReport {
    const checks = [
      this.diskCheck('backup-disk-usage', this.disks.backup),
      this.latencyCheck(),
      this.notAliveCheck(),
      this.diskCheck('primary-disk-usage', this.disks.primary),
      this.diskCheck('secondary-disk-usage', this.disks.secondary),
    ];
    for (const c of this.extraChecks) checks.push(c());
    if (!this.writable.ok) checks.push({ name: 'data-dir-writable', status: 'DOWN', statusMessage: this.writable.error, fields: { path: this.opts.dataDir } });
    const fatal = this.fatal();
    if (fatal !== null) checks.push({ name: 'global-state', status: 'DOWN', statusMessage: fatal, fields: {} });
    let status = worst(checks.map((c) => c.status));
    let statusMessage = status === 'OK' ? 'everything is working' : checks.filter((c) => c.status !== 'OK').map((c) => `${c.name}: ${c.statusMessage}`).join('; ');
    if (status === 'DOWN' && this.inGracePeriod()) {
      status = 'WARN';
      statusMessage = `starting up (grace period); ${statusMessage}`;
    }
    if (this.stopping) {
      status = 'DOWN';
      statusMessage = 'node is shutting down';
    }
    return { status, statusMessage, uptime: formatUptime(this.clock.now() - this.startedAt), version: this.opts.version, checks };
  }

  /** The status `/api/v1/status` publishes. Shutting down or an unwritable data dir is DOWN at once. */
  status(): CheckStatus {
    if (this.stopping || !this.writable.ok || this.fatal() !== null) return 'DOWN';
    return this.report().status;
  }
}
