/**
 * Event redaction (the product's `redactEvents`): requests become tasks in global state; on every
 * node, this service rewrites each closed segment of the task's repository it holds whose time
 * range meets the task's: the events the task's query matches within its range, ingested before
 * the task was made, are left out of a new copy that replaces the segment (segments/rewrites.ts:
 * crash-safe, never under a running query). A segment left with no events is deleted
 * (segments/deletions.ts). When nothing is left to rewrite here, the node records that it is done.
 *
 * Segments still open (the digest appends to them) are rewritten once closed: a node is not done
 * while one that meets the range is open, nor before the digest has flushed what it held in
 * memory when the task was made (`settleMs`).
 */
import { readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { LogsvcError } from '../lib/errors.js';
import { SerialRuns } from '../lib/serial-runs.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { requireUser, canSeeRepository, principalHas, type Principal } from '../auth/index.js';
import type { GlobalEvent, GlobalStore, RedactionTask, Repository } from '../global/index.js';
import { addEvent, assembleBlock, blockLength, decodeBlockEvents, emptyColumns, encodeBlockContent, encodedBlockAt } from '../segments/block.js';
import { lz4Codec } from '../segments/codec.js';
import { SEGMENT_FORMAT_VERSION, segmentVersion } from '../segments/segment-file.js';
import type { SegmentCatalog, SegmentInfo } from '../segments/catalog.js';
import type { SegmentDeletions } from '../segments/deletions.js';
import type { SegmentRewrites } from '../segments/rewrites.js';
import { compileParserStages } from '../query/compile.js';
import { chainStages } from '../query/pipeline.js';
import { BlockView, ColumnEvent } from '../query/block-view.js';
import type { MapStage } from '../query/runtime.js';

/** Longest redaction query. */
export const MAX_REDACTION_QUERY_CHARS = 64 * 1024;
/** Tasks not yet done on every node, per repository. */
export const MAX_ACTIVE_REDACTIONS = 20;

export interface RedactionDeps {
  store: GlobalStore;
  catalog: SegmentCatalog;
  rewrites: SegmentRewrites;
  deletions: SegmentDeletions;
  selfId: number;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  /** How long after a task is made the digest may still hold its events in memory. */
  settleMs: number;
  /**
   * A cluster (segments have several holders): whether this node rewrites a segment ('rewrite':
   * it is not listed yet, or this node is its first live holder), waits for the holder that does
   * ('skip'), or is done with it (a rewrite of it is listed; replication brings that copy here).
   * Rewrites then get an id that follows from the old one and the task.
   */
  holderRole?: (seg: SegmentInfo) => 'rewrite' | 'skip' | 'done';
}

export interface RedactionRequest {
  repositoryName: unknown;
  start: unknown;
  end: unknown;
  query: unknown;
  userMessage: unknown;
}

export type RedactionStatus = 'running' | 'done' | 'cancelled';

const bad = (field: string, message: string): LogsvcError => new LogsvcError('E_VALIDATION', `${field}: ${message}`);

export class RedactionService {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly runs = new SerialRuns(
    () => this.pass(),
    (err) => this.d.logger.error('redaction pass failed', { error: (err as Error).message }),
  );
  private unsubscribe: (() => void) | null = null;
  /** Task id -> ids of segments already rewritten (or found clean) for it on this node. */
  private readonly processed = new Map<string, Set<string>>();
  /** Counts per task on this node since it started (reported when done). */
  private readonly counts = new Map<string, { segments: number; events: number }>();

  constructor(private readonly d: RedactionDeps) {}

  // ---- API ----

  /** Records a redaction task; returns its id. Root, or a member with deletion rights. */
  async request(p: Principal, r: RedactionRequest): Promise<string> {
    requireUser(p, 'redacting events');
    if (typeof r.query !== 'string' || r.query.trim() === '') throw bad('query', 'required: the events to redact (a filter query; use * for every event in the range)');
    if (r.query.length > MAX_REDACTION_QUERY_CHARS) throw bad('query', `longer than ${MAX_REDACTION_QUERY_CHARS} characters`);
    const start = typeof r.start === 'number' ? r.start : NaN;
    const end = typeof r.end === 'number' ? r.end : NaN;
    if (!Number.isFinite(start)) throw bad('start', 'required, a date and time');
    if (!Number.isFinite(end)) throw bad('end', 'required, a date and time');
    if (start > end) throw bad('start', 'must not be after end');
    if (r.userMessage !== undefined && r.userMessage !== null && (typeof r.userMessage !== 'string' || r.userMessage.length > 4096)) throw bad('userMessage', 'a string of at most 4096 characters');
    const query = r.query;
    // Refused now if it does not compile, or is no filter: the same compile each node does.
    stagesOf(query, start, end, this.d.clock.now());
    const id = randomUUID();
    await this.d.store.transact((s) => {
      const repo = this.repositoryFor(s.repositoryByName(String(r.repositoryName)), p, String(r.repositoryName));
      const active = s.redactions.of(repo.id).filter((t) => this.statusOf(t) === 'running');
      if (active.length >= MAX_ACTIVE_REDACTIONS) throw new LogsvcError('E_CONFLICT', `repository "${repo.name}" already has ${active.length} redactions under way, the most allowed; wait for them or cancel one`);
      const createdBy = p.kind === 'user' ? (s.users.get(p.userId)?.username ?? null) : null;
      const task = { id, repositoryId: repo.id, start, end, query, userMessage: typeof r.userMessage === 'string' ? r.userMessage : null, createdBy, createdAt: this.d.clock.now() };
      return { events: [{ type: 'RedactionRequested', task }], result: undefined };
    });
    return id;
  }

  list(p: Principal, repositoryName: string, includeFinished: boolean): RedactionTask[] {
    const s = this.d.store.state;
    const repo = this.repositoryFor(s.repositoryByName(repositoryName), p, repositoryName, false);
    return s.redactions.of(repo.id).filter((t) => includeFinished || this.statusOf(t) === 'running');
  }

  /** Stops a task on the nodes that have not finished it (what they rewrote stays rewritten). */
  async cancel(p: Principal, repositoryName: string, id: string): Promise<boolean> {
    requireUser(p, 'cancelling a redaction');
    return this.d.store.transact((s) => {
      const repo = this.repositoryFor(s.repositoryByName(repositoryName), p, repositoryName);
      const t = s.redactions.tasks.get(id);
      if (t === undefined || t.repositoryId !== repo.id) throw new LogsvcError('E_NOT_FOUND', `redaction "${id.slice(0, 100)}" does not exist in repository "${repo.name}"`);
      if (this.statusOf(t) !== 'running') return { events: [], result: false };
      return { events: [{ type: 'RedactionCancelled', id, at: this.d.clock.now() }], result: true };
    });
  }

  /** running until every registered node reported it done; cancelled once cancelled. */
  statusOf(t: RedactionTask): RedactionStatus {
    if (t.cancelledAt !== null) return 'cancelled';
    for (const n of this.d.store.state.nodes.keys()) if (!t.nodes.has(n)) return 'running';
    return 'done';
  }

  private repositoryFor(repo: Repository | undefined, p: Principal, name: string, change = true): Repository {
    const state = this.d.store.state;
    if (repo === undefined || !canSeeRepository(state, p, repo)) throw new LogsvcError('E_NOT_FOUND', `repository "${name.slice(0, 200)}" does not exist or you have no access to it`);
    if (change && (p.kind === 'ingest' || !principalHas(state, p, repo, 'deleteEvents'))) {
      throw new LogsvcError('E_FORBIDDEN', `redacting events of repository "${repo.name}" requires root, deletion rights on it, or a group role with DeleteEvents there`);
    }
    return repo;
  }

  // ---- the work on this node ----

  start(): void {
    this.unsubscribe = this.d.store.onApplied((e: GlobalEvent) => {
      if (e.type === 'RedactionRequested') this.kick();
    });
    this.kick();
    this.timer = setInterval(() => this.kick(), this.d.intervalMs);
    this.timer.unref();
  }

  kick(): void {
    this.runs.kick();
  }

  /** One pass over the tasks this node has not finished. */
  async pass(): Promise<void> {
    const state = this.d.store.state;
    for (const id of this.processed.keys()) if (!state.redactions.tasks.has(id)) this.processed.delete(id);
    for (const task of state.redactions.tasks.values()) {
      if (this.stopped) return;
      if (task.cancelledAt !== null || task.nodes.has(this.d.selfId)) continue;
      const repo = state.repositories.get(task.repositoryId);
      if (repo === undefined) continue;
      await this.work(task, repo);
    }
  }

  private async work(task: RedactionTask, repo: Repository): Promise<void> {
    const { catalog, clock } = this.d;
    const stages = stagesOf(task.query, task.start, task.end, clock.now());
    const done = this.processed.get(task.id) ?? new Set<string>();
    this.processed.set(task.id, done);
    const counts = this.counts.get(task.id) ?? { segments: 0, events: 0 };
    this.counts.set(task.id, counts);
    const meets = (s: SegmentInfo): boolean => s.blocks.some((b) => b.maxTs >= task.start && b.minTs <= task.end);
    let openLeft = false;
    for (const seg of catalog.forRepository(task.repositoryId)) {
      if (this.stopped || this.d.store.state.redactions.tasks.get(task.id)?.cancelledAt !== null) return;
      if (done.has(seg.meta.id) || !meets(seg)) continue;
      if (!seg.closed) {
        openLeft = true;
        continue;
      }
      const role = this.d.holderRole?.(seg) ?? 'rewrite';
      if (role === 'done') {
        done.add(seg.meta.id);
        continue;
      }
      if (role === 'skip') {
        openLeft = true;
        continue;
      }
      const out = await this.redactSegment(seg, task, repo, stages);
      counts.events += out.events;
      if (out.events > 0) counts.segments++;
      done.add(out.id);
    }
    if (openLeft || clock.now() < task.createdAt + this.d.settleMs) return;
    // Settled: every segment that meets the range was gone through (new ones could only hold later events).
    const again = catalog.forRepository(task.repositoryId).some((s) => meets(s) && !done.has(s.meta.id));
    if (again) return;
    await this.d.store.transact((s) => {
      const t = s.redactions.tasks.get(task.id);
      const fresh = t !== undefined && t.cancelledAt === null && !t.nodes.has(this.d.selfId);
      return { events: fresh ? [{ type: 'RedactionNodeDone' as const, id: task.id, node: this.d.selfId, at: clock.now(), segmentsRewritten: counts.segments, eventsRedacted: counts.events, error: null }] : [], result: undefined };
    });
    this.d.logger.info('redaction done on this node', { task: task.id, repository: repo.name, segments: counts.segments, events: counts.events });
  }

  /** Rewrites one segment without the task's events; the id of what now holds its other events. */
  private async redactSegment(seg: SegmentInfo, task: RedactionTask, repo: Repository, stages: MapStage[]): Promise<{ id: string; events: number }> {
    const buf = await readFile(seg.path);
    const sameFormat = segmentVersion(buf, seg.path) === SEGMENT_FORMAT_VERSION;
    const origin = { repoName: repo.name, partition: seg.meta.partition, tags: seg.meta.tags };
    const blocks: Buffer[] = [];
    let removed = 0;
    let matched = false;
    const feed = chainStages(stages, () => {
      matched = true;
    });
    for (const b of seg.blocks) {
      const whole = buf.subarray(b.pos, b.pos + blockLength(b));
      const meets = b.maxTs >= task.start && b.minTs <= task.end;
      if (!meets && sameFormat) {
        blocks.push(whole);
        continue;
      }
      const events = decodeBlockEvents(buf, b.pos, b, lz4Codec);
      const view = BlockView.fromEncoded(encodedBlockAt(buf, b.pos, b, lz4Codec), origin);
      const cols = emptyColumns();
      for (let i = 0; i < events.length; i++) {
        const e = events[i]!;
        if (meets && e.timestamp >= task.start && e.timestamp <= task.end && e.ingestTimestamp <= task.createdAt) {
          matched = false;
          feed(new ColumnEvent(view, i));
          if (matched) {
            removed++;
            continue;
          }
        }
        addEvent(cols, e);
      }
      if (cols.count === events.length && sameFormat) {
        blocks.push(whole);
      } else if (cols.count > 0) {
        // The block keeps the queue positions it covered: replays still skip what it held.
        const content = { ...encodeBlockContent(cols), firstOffset: b.firstOffset, firstIndex: b.firstIndex, lastOffset: b.lastOffset, lastIndex: b.lastIndex };
        blocks.push(assembleBlock(content, lz4Codec));
      }
      // A large segment is many blocks: let requests in between.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (removed === 0) return { id: seg.meta.id, events: 0 };
    // The queue positions of the whole old segment stay remembered, even if its last blocks go.
    await this.d.deletions.rememberMarks([seg]);
    if (blocks.length === 0) {
      await this.d.deletions.delete(this.d.catalog, [seg]);
      return { id: seg.meta.id, events: removed };
    }
    const out = this.d.holderRole === undefined
      ? await this.d.rewrites.replace(this.d.catalog, seg, blocks, this.d.clock.now())
      : await this.d.rewrites.replace(this.d.catalog, seg, blocks, task.createdAt, task.id);
    if (!out.replaced) return { id: seg.meta.id, events: 0 };
    out.unlinked.catch((err: unknown) => this.d.logger.error('unlinking a redacted segment\'s old file failed', { file: seg.path, error: (err as Error).message }));
    return { id: out.id, events: removed };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.unsubscribe?.();
    await this.runs.stop();
  }
}

/** The task's query as per-event stages (a filter: aggregates are refused). */
function stagesOf(query: string, start: number, end: number, now: number): MapStage[] {
  try {
    return compileParserStages(query, { start, end, timeZoneOffsetMinutes: 0, now, live: false });
  } catch (err) {
    throw new LogsvcError('E_VALIDATION', `query: ${(err as Error).message}`);
  }
}
