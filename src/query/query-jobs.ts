/**
 * QueryJobRegistry: the product's polled query jobs (api-facts §1.4). A job is created with a
 * query, polled for `{cancelled, done, events, metaData}`, and deleted; a job nobody polls is
 * stopped and forgotten (30 s; live jobs an hour). A live job's poll answers its latest complete
 * result over the moving window and starts a refresh when that result is older than a second.
 * Jobs belong to the principal that created them: anyone else gets 404, as for an unknown id.
 */
import { randomBytes } from 'node:crypto';
import { LogsvcError } from '../lib/errors.js';
import type { QueryOutcome, QueryRun } from './executor.js';
import type { QueryRequest, QueryService, Repo } from './query-service.js';
import { toJsonRow, type ResultRow } from './results.js';
import type { QuerySpec } from './scan.js';

export interface JobOptions {
  service: QueryService;
  now: () => number;
  idleMs: number;
  liveIdleMs: number;
  maxJobs: number;
  /** Prefix of job ids (the node's id, like the product's `<vhost>-<24 chars>`). */
  idPrefix: string;
}

interface Job {
  id: string;
  owner: string;
  repo: Repo;
  request: QueryRequest;
  /** Lookup tables the query names, loaded when the job was created (refreshes reuse them). */
  files: QuerySpec['files'];
  run: QueryRun;
  /** Live jobs: the newest finished run (what polls answer while a refresh computes). */
  last: QueryRun | null;
  lastPoll: number;
}

export interface PollResponse {
  cancelled: boolean;
  done: boolean;
  events: ResultRow[];
  metaData: Record<string, unknown>;
}

const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomId(n: number): string {
  const bytes = randomBytes(n);
  let s = '';
  for (const b of bytes) s += ID_CHARS[b % ID_CHARS.length];
  return s;
}

/** How long a client should wait before the next poll (ms). */
const POLL_RUNNING_MS = 500;
const POLL_LIVE_MS = 1000;
const POLL_DONE_MS = 5000;
/** A live job's result is refreshed when a poll finds it older than this. */
const LIVE_REFRESH_MS = 1000;

export class QueryJobRegistry {
  private readonly jobs = new Map<string, Job>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly opts: JobOptions) {
    this.timer = setInterval(() => this.expire(), 1000);
    this.timer.unref();
  }

  /** `spec` is `service.prepare(request, repo)`. */
  create(owner: string, repo: Repo, request: QueryRequest, spec: QuerySpec): { id: string; queryOnView: string } {
    if (this.jobs.size >= this.opts.maxJobs) {
      throw new LogsvcError('E_TOO_MANY_REQUESTS', `${this.jobs.size} query jobs are held on this node, the most allowed (query.max_jobs); delete finished jobs or retry shortly`);
    }
    const { service } = this.opts;
    const run = service.run(spec, repo);
    const id = `${this.opts.idPrefix}-${randomId(24)}`;
    // Kept with saved-search calls already put in (spec.text), so live refreshes need no lookup.
    this.jobs.set(id, { id, owner, repo, request: { ...request, queryString: spec.text }, files: spec.files, run, last: null, lastPoll: this.opts.now() });
    return { id, queryOnView: run.query.text };
  }

  private job(owner: string, repo: Repo, id: string): Job {
    const job = this.jobs.get(id);
    if (job === undefined || job.owner !== owner || job.repo.id !== repo.id) {
      throw new LogsvcError('E_NOT_FOUND', `query job "${id.slice(0, 100)}" does not exist (unknown, expired after it was not polled, or deleted)`);
    }
    return job;
  }

  poll(owner: string, repo: Repo, id: string): PollResponse {
    const job = this.job(owner, repo, id);
    job.lastPoll = this.opts.now();
    if (job.request.isLive) return this.pollLive(job);
    const { run } = job;
    if (run.error !== null) throw run.error;
    return this.response(run, run.outcome, run.finished, run.finished ? POLL_DONE_MS : POLL_RUNNING_MS);
  }

  private pollLive(job: Job): PollResponse {
    const { run } = job;
    if (run.finished) {
      if (run.error !== null) throw run.error;
      job.last = run;
      if (this.opts.now() - run.finishedAt! >= LIVE_REFRESH_MS) {
        const { service } = this.opts;
        try {
          const spec = service.spec(job.request);
          if (job.files !== undefined) spec.files = job.files;
          job.run = service.run(spec, job.repo);
        } catch (err) {
          // Too many queries right now: keep answering the last result; refresh on a later poll.
          if (!(err instanceof LogsvcError) || err.code !== 'E_TOO_MANY_REQUESTS') throw err;
        }
      }
    }
    const shown = job.last;
    if (shown === null) return this.response(run, null, false, POLL_RUNNING_MS);
    return this.response(shown, shown.outcome, true, POLL_LIVE_MS);
  }

  private response(run: QueryRun, outcome: QueryOutcome | null, done: boolean, pollAfter: number): PollResponse {
    const q = run.query;
    const events = done && outcome !== null ? outcome.rows.map(toJsonRow) : [];
    const extraData: Record<string, string> = { ...q.extraData };
    if (!q.isAggregate) extraData.hasMoreEvents = String(done && outcome !== null && outcome.matched > events.length);
    const metaData: Record<string, unknown> = {
      eventCount: events.length,
      extraData,
      filterQuery: {
        queryString: q.text,
        start: run.spec.ctx.start,
        end: run.spec.ctx.end,
        isLive: false,
        isInteractive: false,
        includeDeletedEvents: false,
        showQueryEventDistribution: false,
        noResultUntilDone: false,
      },
      isAggregate: q.isAggregate,
      pollAfter,
      processedBytes: run.processedBytes,
      processedEvents: run.processedEvents,
      queryStart: run.spec.ctx.start,
      queryEnd: run.spec.ctx.end,
      resultBufferSize: events.length,
      timeMillis: (run.finishedAt ?? Date.now()) - run.startedAt,
      totalWork: run.totalWork,
      workDone: done ? run.totalWork : run.workDone,
      warnings: outcome?.warnings ?? [],
    };
    if (q.fieldOrder !== null) metaData.fieldOrder = q.fieldOrder;
    return { cancelled: run.cancelled, done, events, metaData };
  }

  delete(owner: string, repo: Repo, id: string): void {
    const job = this.job(owner, repo, id);
    job.run.cancel();
    this.jobs.delete(job.id);
  }

  private expire(): void {
    const now = this.opts.now();
    for (const job of this.jobs.values()) {
      // A live job whose first result is not done yet follows the static rule (api-facts §1.4).
      const idle = job.request.isLive && job.last !== null ? this.opts.liveIdleMs : this.opts.idleMs;
      if (now - job.lastPoll > idle) {
        job.run.cancel();
        this.jobs.delete(job.id);
      }
    }
  }

  get size(): number {
    return this.jobs.size;
  }

  close(): void {
    clearInterval(this.timer);
    for (const job of this.jobs.values()) job.run.cancel();
    this.jobs.clear();
  }
}
