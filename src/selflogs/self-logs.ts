/**
 * The node's own log lines, ingested into the system repository `humio` through the normal durable
 * path (IngestService: digest queue, digest, segments), so they can be searched like any other data.
 *
 * Never blocks, never loops: a log call only pushes onto a bounded buffer (lines past
 * `bufferLines` are dropped and counted); a timer flushes the buffer once a second as one
 * ingest record. A flush that the node refuses (backpressure, full disk, no repository) drops its
 * lines and counts them; its problem is written to stderr only (the base logger), at most once a
 * minute, so a failing self-ingest cannot feed itself.
 */
import type { EventGroup, IngestEvent } from '../events/index.js';
import type { LogEntry, Logger } from '../lib/logger.js';

export const SELF_LOG_REPOSITORY = 'humio';
const FLUSH_MS = 1000;
/** Lines per ingest record at most. */
const MAX_BATCH = 2000;
/** Extra fields of one line kept (after level, module, message), and characters per value. */
const MAX_FIELDS = 32;
const MAX_VALUE_CHARS = 4096;
const PROBLEM_EVERY_MS = 60_000;

export interface SelfLogSink {
  /** The repository's id, or undefined when it does not exist (then lines are dropped). */
  repositoryId(): string | undefined;
  /** Throws when ingest is refused right now (backpressure). */
  admit(): void;
  ingest(repositoryId: string, groups: EventGroup[], ingestTs: number): Promise<void>;
}

export interface SelfLogOptions {
  /** Where the self-logger's own problems go (stderr; never back into the buffer). */
  stderr: Logger;
  bufferLines: number;
  nodeId: number;
  onDropped?: (n: number) => void;
}

function valueText(v: unknown): string {
  const s = typeof v === 'string' ? v : v instanceof Error ? v.message : (JSON.stringify(v) ?? String(v));
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}...` : s;
}

/** One log call as an event: level, module and message as fields, the other fields beside them. */
export function logEvent(e: LogEntry, nodeId: number): IngestEvent {
  const fields: Record<string, string> = { level: e.level.toUpperCase(), module: 'node', message: e.message, node: String(nodeId) };
  let extra = '';
  let n = 0;
  for (const [k, v] of Object.entries(e.fields ?? {})) {
    if (k === 'module') {
      fields.module = valueText(v);
      continue;
    }
    if (n++ >= MAX_FIELDS || k in fields) continue;
    const s = valueText(v);
    fields[k] = s;
    extra += ` ${k}=${/[\s"=]/.test(s) ? JSON.stringify(s) : s}`;
  }
  const rawstring = `${new Date(e.time).toISOString()} ${fields.level} [${fields.module}] ${e.message}${extra}`;
  return { timestamp: e.time, timezone: 'Z', rawstring, fields };
}

export class SelfLogs {
  private buffer: LogEntry[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private lastProblemAt = -Infinity;
  private sink: SelfLogSink | null = null;
  dropped = 0;

  constructor(private readonly opts: SelfLogOptions) {}

  /** The tap for teeLogger: queue the line, or drop it when the buffer is full. */
  readonly push = (e: LogEntry): void => {
    if (this.buffer.length >= this.opts.bufferLines) {
      this.drop(1);
      return;
    }
    this.buffer.push(e);
  };

  /** Lines are buffered from the node's first line on; they are ingested once the sink is there. */
  start(sink: SelfLogSink): void {
    this.sink = sink;
    this.timer ??= setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Ingests what is buffered (one flush at a time); resolves when done. Never rejects. */
  flush(): Promise<void> {
    if (this.flushing !== null) return this.flushing;
    if (this.buffer.length === 0 || this.sink === null) return Promise.resolve();
    this.flushing = this.flushOnce(this.sink).finally(() => (this.flushing = null));
    return this.flushing;
  }

  /** Stops the timer and ingests what is left (while ingest still works). */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  private async flushOnce(sink: SelfLogSink): Promise<void> {
    const batch = this.buffer.length > MAX_BATCH ? this.buffer.splice(0, MAX_BATCH) : this.buffer.splice(0);
    const repo = sink.repositoryId();
    if (repo === undefined) {
      this.problem(batch.length, `repository "${SELF_LOG_REPOSITORY}" does not exist`);
      return;
    }
    try {
      sink.admit();
      await sink.ingest(repo, [{ tags: {}, events: batch.map((e) => logEvent(e, this.opts.nodeId)) }], Date.now());
    } catch (err) {
      this.problem(batch.length, (err as Error).message);
    }
  }

  private drop(n: number): void {
    this.dropped += n;
    this.opts.onDropped?.(n);
  }

  private problem(lines: number, why: string): void {
    this.drop(lines);
    const now = Date.now();
    if (now - this.lastProblemAt < PROBLEM_EVERY_MS) return;
    this.lastProblemAt = now;
    this.opts.stderr.warn(`own log lines not ingested into ${SELF_LOG_REPOSITORY}; dropped`, { lines, reason: why, droppedSoFar: this.dropped });
  }
}
