/**
 * AlertScheduler: every `alerts.evaluate_interval_ms`, each enabled alert with actions is run as a
 * query over its window (now minus `queryStart` to now) through the query engine; when the result
 * has at least one row (and no warnings), it triggers: the trigger is recorded in global state
 * (durable before any action runs, so a restart does not trigger again inside the throttle time),
 * then its actions run one after another, each with timeout and retries, and the outcome becomes
 * the alert's `lastError` (cleared by a clean trigger).
 *
 * Re-running a static query over the moving window is how a live query job refreshes too; it
 * costs one query per alert per interval and needs no per-alert state in the digest. At most
 * `alerts.max_concurrent_evaluations` alerts are evaluated at once, the least recently evaluated
 * first; an evaluation slot covers the query only (bounded by `alerts.query_timeout_ms`), and the
 * actions of a trigger run in a DeliveryQueue of their own, so a hanging action or a slow query
 * cannot starve the other alerts. An alert is not evaluated again while its previous trigger is
 * still being delivered. When the node's query slots are all taken, an evaluation is skipped;
 * after BUSY_SKIPS_BEFORE_ERROR skips in a row the alert's lastError says so. Only the cluster's
 * alert runner evaluates.
 */
import { randomUUID } from 'node:crypto';
import { describeError, isLogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { ActionDefinition, AlertDefinition, GlobalState, GlobalStore } from '../global/index.js';
import { toJsonRow, type QueryRequest, type QueryRun, type QueryService } from '../query/index.js';
import type { ActionProperties } from './action-input.js';
import type { ActionDispatcher, RetryPolicy } from './actions/dispatcher.js';
import { DeliveryQueue } from './delivery-queue.js';
import { userMayRead } from '../auth/index.js';
import { viewTarget } from '../views/view-service.js';
import { domainById, type AlertDomain } from './access.js';
import { freshRows, heldOff } from './throttle.js';
import { searchUrl, type TriggerContext } from './trigger.js';
import { runCursor, Schedule } from './schedule.js';
import { parseRelative } from '../query/time.js';

export interface SchedulerSettings {
  intervalMs: number;
  /** Evaluations (queries) at once. */
  maxConcurrent: number;
  /** Triggers whose actions are delivered at once. */
  maxConcurrentDeliveries: number;
  /** Longest an alert's query may run before it is cancelled. */
  queryTimeoutMs: number;
  maxMessageEvents: number;
  retry: RetryPolicy;
}

export interface SchedulerDeps {
  store: GlobalStore;
  queries: Pick<QueryService, 'prepare' | 'run'>;
  openAction: (a: ActionDefinition) => ActionProperties;
  dispatcher: Pick<ActionDispatcher, 'deliver'>;
  clock: Clock;
  logger: Logger;
  /** This node's external URL, for {url}. */
  baseUrl: string;
  /** Whether this node is the one that runs alerts now. */
  isRunner: () => boolean;
  settings: SchedulerSettings;
  /** Counts evaluations and failed actions (the node's Prometheus metrics). */
  metrics?: { alertEvaluated(outcome: 'ok' | 'error'): void; actionFailed(kind: string): void };
}

/** Longest lastError kept (several failing actions' messages joined). */
const MAX_ERROR_CHARS = 4000;
/** Evaluations in a row skipped for want of a query slot before the alert's lastError says so. */
export const BUSY_SKIPS_BEFORE_ERROR = 3;
/** How far behind now a filter alert's ingest-time window ends (events on their way to the digest). */
export const FILTER_LAG_MS = 2000;
/**
 * A search over ingest time (filter alerts, IngestTimestamp aggregate alerts and scheduled searches)
 * reads the events whose @timestamp is at most this far before (or after) the ingest-time window:
 * the event-time range bounds what is scanned. Events further from their ingest time are not seen.
 */
export const INGEST_TIME_REACH_MS = 3_600_000;
/**
 * An aggregate alert in CompleteMode whose results stay incomplete (the query produced warnings)
 * triggers on what it has after this long, as the product's CompleteMode ("waits up to 20 minutes
 * for a complete result").
 */
export const COMPLETE_WAIT_MS = 20 * 60_000;
/**
 * Longest a graceful stop waits for deliveries under way (at most the action timeout): the
 * trigger is already recorded, so an aborted delivery is a notification lost for the throttle
 * time; supervisors (and our tests) send SIGKILL about 10 s after SIGTERM.
 */
const MAX_STOP_GRACE_MS = 5000;
/**
 * An alert with a throttle time of 0 holds nothing off, so its trigger time need not be durable at
 * every trigger: it is recorded at most this often (timeOfLastTrigger lags by up to this much)
 * instead of one fsynced global event per evaluation interval.
 */
export const UNTHROTTLED_RECORD_MS = 60_000;
/**
 * An alert whose query fails (an error, a memory budget, a timeout) is evaluated again only after
 * a delay that doubles with each failure in a row, from one interval up to this: a query that
 * hurts the node is not re-run every interval. A clean evaluation or a changed query resets it.
 */
export const MAX_FAILURE_BACKOFF_MS = 60 * 60_000;

/** What an evaluation that triggered hands to delivery. */
interface Triggered {
  alert: AlertDefinition;
  trigger: TriggerContext;
  /** How to take the recorded trigger back if no action succeeds; null when nothing was held. */
  undo: { at: number; previous: number | null; values?: string[] | undefined } | null;
}

export class AlertScheduler {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly stopper = new AbortController();
  /** Alert id -> its evaluation and, when it triggered, the delivery of its actions. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Evaluation slots taken (queries running or about to). */
  private evaluating = 0;
  private readonly deliveries: DeliveryQueue;
  private readonly runs = new Set<QueryRun>();
  /** Alert id -> monotonic time its last evaluation started. */
  private readonly lastStarted = new Map<string, number>();
  /** Alert id -> evaluations skipped in a row because the node's query slots were taken. */
  private readonly busySkips = new Map<string, number>();
  /** Alert id -> failed evaluations in a row of its query text, and the monotonic time before which it is not run again. */
  private readonly failures = new Map<string, { query: string; count: number; notBefore: number }>();
  /** Filter alerts: the ingest time up to which events were evaluated (this node, since it started). */
  private readonly filterSince = new Map<string, number>();
  /** Scheduled searches: each one's parsed schedule, with the expression and zone it was parsed from. */
  private readonly schedules = new Map<string, { key: string; schedule: Schedule }>();
  /** Aggregate alerts in CompleteMode: the monotonic time their results were first incomplete (in a row). */
  private readonly incompleteSince = new Map<string, number>();

  constructor(private readonly d: SchedulerDeps) {
    this.deliveries = new DeliveryQueue(d.settings.maxConcurrentDeliveries);
  }

  start(): void {
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.tick();
      this.schedule();
    }, this.d.settings.intervalMs);
    this.timer.unref();
  }

  /** Starts evaluations of due alerts, up to the concurrency bound. */
  tick(): void {
    if (this.stopped || !this.d.isRunner()) return;
    const state = this.d.store.state;
    const now = this.d.clock.now();
    const due = [...state.alerting.alerts.values()]
      .filter((a) => !a.silenced && a.actions.length > 0 && !this.inFlight.has(a.id) && !this.backingOff(a.id, a.queryString))
      .filter((a) => a.kind !== 'scheduled' || this.dueRuns(a, now).times.length > 0)
      .sort((a, b) => (this.lastStarted.get(a.id) ?? -1) - (this.lastStarted.get(b.id) ?? -1));
    for (const a of due) {
      if (this.evaluating >= this.d.settings.maxConcurrent) break;
      this.lastStarted.set(a.id, this.d.clock.monotonic());
      this.evaluating++;
      const p = this.evaluateAndDeliver(a.id)
        .catch((err: unknown) => this.d.logger.error('alert evaluation failed', { alert: a.id, error: describeError(err) }))
        .finally(() => this.inFlight.delete(a.id));
      this.inFlight.set(a.id, p);
    }
    for (const id of this.lastStarted.keys()) {
      if (state.alerting.alerts.has(id)) continue;
      this.lastStarted.delete(id);
      this.busySkips.delete(id);
      this.failures.delete(id);
      this.schedules.delete(id);
      this.incompleteSince.delete(id);
    }
  }

  /** Scheduled search `a`'s run times due at `now` (oldest first), at most its backfill limit plus the current one. */
  private dueRuns(a: AlertDefinition, now: number): { times: number[]; skipped: boolean } {
    const spec = a.schedule;
    if (spec === undefined) return { times: [], skipped: false };
    const key = `${spec.cron}\u0000${spec.timeZone}`;
    let cached = this.schedules.get(a.id);
    if (cached === undefined || cached.key !== key) {
      try {
        cached = { key, schedule: Schedule.parse(spec.cron, spec.timeZone) };
      } catch {
        // Validated when saved; a zone this Node no longer knows runs nothing.
        return { times: [], skipped: false };
      }
      this.schedules.set(a.id, cached);
    }
    const last = this.d.store.state.alerting.runtime.get(a.id)?.lastExecutedAt ?? null;
    // Over ingest time, run T waits until what was acknowledged before T is searchable.
    return cached.schedule.due(runCursor(spec, a.createdAt, last), spec.ingestTime === true ? now - FILTER_LAG_MS : now, spec.backfillLimit + 1);
  }



  /** True while alert `id` waits out the backoff after its query (this text of it) failed. */
  private backingOff(id: string, query: string): boolean {
    const f = this.failures.get(id);
    if (f === undefined) return false;
    if (f.query !== query) {
      this.failures.delete(id);
      return false;
    }
    return this.d.clock.monotonic() < f.notBefore;
  }

  /** Alert `id`'s query failed: its lastError says so, and its next evaluation waits longer each time. */
  private async queryFailed(id: string, query: string, text: string): Promise<null> {
    const prev = this.failures.get(id);
    const count = prev !== undefined && prev.query === query ? prev.count + 1 : 1;
    const delay = Math.min(MAX_FAILURE_BACKOFF_MS, this.d.settings.intervalMs * 2 ** Math.min(count - 1, 30));
    this.failures.set(id, { query, count, notBefore: this.d.clock.monotonic() + delay });
    // A fixed text (no retry time in it): an unchanged error is not written to global state again.
    return this.problem(id, `${text}; while it keeps failing it is evaluated less often (the wait doubles up to ${MAX_FAILURE_BACKOFF_MS / 60_000} minutes)`);
  }

  /** The evaluation in an evaluation slot; a trigger's actions after it, in a delivery slot. */
  private async evaluateAndDeliver(id: string): Promise<void> {
    for (;;) {
      const before = this.d.store.state.alerting.runtime.get(id)?.lastExecutedAt;
      let triggered: Triggered | null;
      try {
        triggered = await this.evaluate(id);
        this.d.metrics?.alertEvaluated('ok');
      } catch (err) {
        this.d.metrics?.alertEvaluated('error');
        throw err;
      } finally {
        this.evaluating--;
      }
      if (triggered !== null) await this.deliveries.run(() => this.deliver(triggered));
      // A scheduled search catching up makes its due runs one after another, in order (waiting a
      // tick between them would let new run times push made-up ones past the backfill limit).
      const a = this.d.store.state.alerting.alerts.get(id);
      const advanced = this.d.store.state.alerting.runtime.get(id)?.lastExecutedAt !== before;
      const more = advanced && a !== undefined && a.kind === 'scheduled' && !a.silenced && !this.stopped && this.d.isRunner() && this.dueRuns(a, this.d.clock.now()).times.length > 0;
      if (!more || this.evaluating >= this.d.settings.maxConcurrent) return;
      this.evaluating++;
    }
  }

  /** One evaluation of alert `id`: query, throttle, trigger. The trigger to deliver, or null. */
  async evaluate(id: string): Promise<Triggered | null> {
    const state = this.d.store.state;
    const alert = state.alerting.alerts.get(id);
    const repo = alert === undefined ? undefined : domainById(state, alert.repositoryId);
    if (alert === undefined || repo === undefined || alert.silenced || alert.actions.length === 0) return null;
    const now = this.d.clock.now();
    if (alert.kind === 'scheduled') return this.runScheduled(alert, repo, now);
    const runtime = state.alerting.runtime.get(id);
    if (heldOff(alert, runtime, now)) {
      // A filter alert's events during its throttle time are held off, not saved for later.
      if (alert.kind === 'filter') this.filterSince.set(id, now - FILTER_LAG_MS);
      return null;
    }
    const ownerProblem = this.ownerProblem(state, alert, repo);
    if (ownerProblem !== null) return this.problem(id, ownerProblem);

    // An aggregate alert over ingest time: the events ingested in the last interval, their own timestamps within reach of it.
    const ingestWindow = alert.kind === 'aggregate' && alert.ingestTime === true ? now - (parseRelative(alert.queryStart) ?? 0) : null;
    const request: QueryRequest =
      ingestWindow === null
        ? { queryString: alert.queryString, start: alert.queryStart, end: undefined, isLive: false, timeZoneOffsetMinutes: 0, arguments: {} }
        : { queryString: alert.queryString, start: ingestWindow - INGEST_TIME_REACH_MS, end: now + INGEST_TIME_REACH_MS, isLive: false, timeZoneOffsetMinutes: 0, arguments: {} };
    // A filter alert sees each event once: those ingested since its last clean evaluation (up to
    // a short lag, so events still on their way to the digest are seen by the next one).
    // After a restart it starts where the last trigger's window ended (or at the alert's creation).
    const since = alert.kind === 'filter' ? (this.filterSince.get(id) ?? Math.max(alert.createdAt, (runtime?.lastTriggeredAt ?? -Infinity) - FILTER_LAG_MS)) : 0;
    // The window never moves back (a new alert's start is later than now minus the lag).
    const filterWindow = alert.kind === 'filter' ? { since, until: Math.max(since, now - FILTER_LAG_MS) } : null;
    let run: QueryRun;
    try {
      // prepare, not spec: it loads the lookup files the query's match()/lookup() calls name.
      const window =
        filterWindow !== null ? `@ingesttimestamp > ${filterWindow.since} @ingesttimestamp <= ${filterWindow.until}` : ingestWindow !== null ? `@ingesttimestamp > ${ingestWindow} @ingesttimestamp <= ${now}` : '';
      const target = searchTarget(state, repo, window);
      run = this.d.queries.run(await this.d.queries.prepare(request, target), target);
    } catch (err) {
      // Too many queries right now: the next interval tries again; said only when it lasts.
      if (isLogsvcError(err) && err.code === 'E_TOO_MANY_REQUESTS') return this.busy(id);
      this.busySkips.delete(id);
      return this.queryFailed(id, alert.queryString, `the query failed: ${(err as Error).message}`);
    }
    this.busySkips.delete(id);
    const timedOut = await this.runBounded(run);
    if (this.stopped) return null;
    if (timedOut) return this.queryFailed(id, alert.queryString, `the query did not finish within ${this.d.settings.queryTimeoutMs} ms (alerts.query_timeout_ms); not evaluated`);
    if (run.error !== null) return this.queryFailed(id, alert.queryString, `the query failed: ${run.error.message}`);
    this.failures.delete(id);
    const outcome = run.outcome!;
    if (outcome.warnings.length === 0) this.incompleteSince.delete(id);
    else if (outcome.rows.length === 0) return null;
    else if (!this.triggersIncomplete(alert)) {
      // An incomplete result neither triggers nor counts as a clean evaluation.
      const wait = alert.kind === 'aggregate' ? `; in CompleteMode the alert waits up to ${COMPLETE_WAIT_MS / 60_000} minutes for a complete result, then triggers on what it has` : '';
      return this.problem(id, `not triggered because the query produced warnings (an incomplete result): ${outcome.warnings.join('; ')}${wait}`);
    }
    if (filterWindow !== null) this.filterSince.set(id, filterWindow.until);
    if (outcome.rows.length === 0) return this.cleanEvaluation(id);

    let rows = outcome.rows.map(toJsonRow);
    let values: string[] | undefined;
    if (alert.throttleField !== '') {
      const fresh = freshRows(rows, alert.throttleField, runtime?.throttled, alert.throttleTimeMillis, now);
      if (fresh.rows.length === 0) return this.cleanEvaluation(id);
      rows = fresh.rows;
      // With no throttle time nothing is held, so there is nothing to remember.
      values = alert.throttleTimeMillis === 0 ? undefined : fresh.values;
    }
    // The query ran on the definition read at the start; one updated, silenced or deleted since
    // must not trigger (the next evaluation uses what is stored now).
    const recorded = await this.d.store.transact((s) => {
      const unchanged = s.alerting.alerts.get(id) === alert;
      const last = s.alerting.runtime.get(id)?.lastTriggeredAt ?? null;
      // A filter alert records every trigger: after a restart its window starts where the last one ended.
      const coalesced = alert.kind !== 'filter' && alert.throttleTimeMillis === 0 && last !== null && now - last < UNTHROTTLED_RECORD_MS;
      const events = unchanged && !coalesced ? [{ type: 'AlertTriggered' as const, id, at: now, values }] : [];
      return { events, result: { unchanged, previous: last, written: events.length > 0 } };
    });
    if (!recorded.unchanged) return null;
    this.d.logger.info('alert triggered', { alert: id, name: alert.name, repository: repo.name, rows: rows.length });

    const trigger: TriggerContext = {
      alertId: id,
      alertName: alert.name,
      description: alert.description,
      queryString: alert.queryString,
      queryStart: alert.queryStart,
      repositoryName: repo.name,
      triggeredAt: now,
      startMs: run.spec.ctx.start,
      endMs: run.spec.ctx.end,
      rows: rows.slice(0, this.d.settings.maxMessageEvents),
      eventCount: rows.length,
      warnings: outcome.warnings,
      url: searchUrl(this.d.baseUrl, repo.name, alert.queryString, alert.queryStart),
    };
    // A throttle time of 0 holds nothing off: nothing to take back.
    const undo = recorded.written && alert.throttleTimeMillis > 0 ? { at: now, previous: recorded.previous, values } : null;
    return { alert, trigger, undo };
  }

  /**
   * Whether an incomplete result (rows, with warnings) triggers alert `alert`: an aggregate alert
   * in ImmediateMode at once; one in CompleteMode once its results have been incomplete for
   * COMPLETE_WAIT_MS (counted on this node since it started evaluating them); other kinds never.
   */
  private triggersIncomplete(alert: AlertDefinition): boolean {
    if (alert.kind !== 'aggregate') return false;
    if (alert.triggerMode === 'ImmediateMode') return true;
    const now = this.d.clock.monotonic();
    const since = this.incompleteSince.get(alert.id);
    if (since === undefined) {
      this.incompleteSince.set(alert.id, now);
      return false;
    }
    return now - since >= COMPLETE_WAIT_MS;
  }

  /** Waits for `run`, cancelling it after alerts.query_timeout_ms; true when it timed out. */
  private async runBounded(run: QueryRun): Promise<boolean> {
    this.runs.add(run);
    let timedOut = false;
    // A cancelled run ends early with partial results: never a reason to trigger.
    const timer = setTimeout(() => {
      timedOut = true;
      run.cancel();
    }, this.d.settings.queryTimeoutMs);
    try {
      await run.done;
    } finally {
      clearTimeout(timer);
      this.runs.delete(run);
    }
    return timedOut;
  }

  /** Skips an evaluation because the node's query slots are taken; said in lastError only when it lasts. */
  private async busy(id: string): Promise<null> {
    const skips = (this.busySkips.get(id) ?? 0) + 1;
    this.busySkips.set(id, skips);
    if (skips < BUSY_SKIPS_BEFORE_ERROR) return null;
    // A fixed text: an unchanged error is not written again, however long the node stays busy.
    return this.problem(id, `not evaluated: all of this node's query slots (query.max_concurrent) were taken at ${BUSY_SKIPS_BEFORE_ERROR} or more evaluations in a row; it is tried again every interval`);
  }

  /**
   * One run of scheduled search `alert`: the oldest due run time T (runs missed past its backfill
   * limit are skipped), its query over [T - start, T - end], the run recorded in global state
   * (before any action, so a restart neither repeats nor skips it), and a trigger when it has rows.
   * A run whose query fails is recorded too, with the failure as lastError: a failing query is
   * not retried for the same window. Only a run refused for want of a query slot stays due.
   */
  private async runScheduled(alert: AlertDefinition, repo: AlertDomain, now: number): Promise<Triggered | null> {
    const id = alert.id;
    const spec = alert.schedule!;
    const { times, skipped } = this.dueRuns(alert, now);
    const at = times[0];
    if (at === undefined) return null;
    if (skipped) this.d.logger.warn('scheduled search: runs missed past its backfill limit are skipped', { alert: id, name: alert.name, backfillLimit: spec.backfillLimit, from: new Date(at).toISOString() });
    const ownerProblem = this.ownerProblem(this.d.store.state, alert, repo);
    // Not recorded: once the owner is fixed, the run is made up (within the backfill limit).
    if (ownerProblem !== null) return this.problem(id, ownerProblem);
    // A query's range includes both ends: a window ends 1 ms before its run time, so an event at a run
    // time falls in the next window only.
    // Over ingest time: the events ingested in [T - interval, T), their own timestamps within reach of it.
    const ingest = spec.ingestTime === true;
    const request: QueryRequest = ingest
      ? { queryString: alert.queryString, start: at - spec.startMs - INGEST_TIME_REACH_MS, end: at + INGEST_TIME_REACH_MS, isLive: false, timeZoneOffsetMinutes: 0, arguments: {} }
      : { queryString: alert.queryString, start: at - spec.startMs, end: at - spec.endMs - 1, isLive: false, timeZoneOffsetMinutes: 0, arguments: {} };
    const target = searchTarget(this.d.store.state, repo, ingest ? `@ingesttimestamp >= ${at - spec.startMs} @ingesttimestamp < ${at}` : '');
    let run: QueryRun;
    try {
      run = this.d.queries.run(await this.d.queries.prepare(request, target), target);
    } catch (err) {
      if (isLogsvcError(err) && err.code === 'E_TOO_MANY_REQUESTS') return this.busy(id);
      this.busySkips.delete(id);
      return (await this.recordRun(alert, at, false)) ? this.problem(id, `the run for ${new Date(at).toISOString()} failed: ${(err as Error).message}`) : null;
    }
    this.busySkips.delete(id);
    const timedOut = await this.runBounded(run);
    if (this.stopped) return null;
    const failure = timedOut
      ? `the run for ${new Date(at).toISOString()} did not finish within ${this.d.settings.queryTimeoutMs} ms (alerts.query_timeout_ms)`
      : run.error !== null
        ? `the run for ${new Date(at).toISOString()} failed: ${run.error.message}`
        : run.outcome!.warnings.length > 0 && run.outcome!.rows.length > 0
          ? `the run for ${new Date(at).toISOString()} did not trigger because the query produced warnings: ${run.outcome!.warnings.join('; ')}`
          : null;
    const rows = failure === null ? run.outcome!.rows.map(toJsonRow) : [];
    if (!(await this.recordRun(alert, at, rows.length > 0))) return null;
    if (failure !== null) return this.problem(id, failure);
    if (rows.length === 0) return this.cleanEvaluation(id);
    this.d.logger.info('scheduled search triggered', { alert: id, name: alert.name, repository: repo.name, runTime: new Date(at).toISOString(), rows: rows.length });
    const trigger: TriggerContext = {
      alertId: id,
      alertName: alert.name,
      description: alert.description,
      queryString: alert.queryString,
      queryStart: spec.start,
      queryEnd: spec.end,
      triggerType: 'scheduled-search',
      repositoryName: repo.name,
      triggeredAt: at,
      startMs: run.spec.ctx.start,
      endMs: run.spec.ctx.end,
      rows: rows.slice(0, this.d.settings.maxMessageEvents),
      eventCount: rows.length,
      warnings: [],
      url: searchUrl(this.d.baseUrl, repo.name, alert.queryString, spec.start),
    };
    return { alert, trigger, undo: null };
  }

  /** Records scheduled search `alert`'s run for `at`, unless its definition changed meanwhile (then it runs again). */
  private async recordRun(alert: AlertDefinition, at: number, triggered: boolean): Promise<boolean> {
    return this.d.store.transact((s) => {
      const unchanged = s.alerting.alerts.get(alert.id) === alert;
      return { events: unchanged ? [{ type: 'ScheduledSearchExecuted' as const, id: alert.id, at, finishedAt: this.d.clock.now(), triggered }] : [], result: unchanged };
    });
  }

  /** Runs a trigger's actions in order; their problems become the alert's lastError. */
  private async deliver({ alert, trigger, undo }: Triggered): Promise<void> {
    // Waiting for a delivery slot takes time: an alert deleted or silenced meanwhile stays quiet.
    const now = this.d.store.state.alerting.alerts.get(alert.id);
    if (now === undefined || now.silenced) return;
    // A graceful stop lets deliveries under way finish; only its deadline (the abort) ends them.
    const aborted = this.stopper.signal;
    const errors: string[] = [];
    let attempted = 0;
    for (const actionId of alert.actions) {
      if (aborted.aborted) break;
      const def = this.d.store.state.alerting.actions.get(actionId);
      if (def === undefined) continue;
      attempted++;
      const problem = await this.runAction(def, trigger);
      if (problem !== null) errors.push(problem);
    }
    // No action reached (all failed, or the stop came first): as in the product, the trigger does
    // not count and the alert is not held off; the next evaluation (after a restart, too) tries again.
    const reachedNone = errors.length === attempted && (attempted > 0 || aborted.aborted);
    if (reachedNone && undo !== null) {
      await this.d.store.transact(() => ({ events: [{ type: 'AlertTriggerUndone', id: alert.id, ...undo }], result: undefined }));
    }
    if (aborted.aborted) return;
    // A scheduled search's run is done once recorded: its actions' failure is reported, not retried.
    const retried = reachedNone && alert.kind !== 'scheduled';
    const text = errors.length === 0 ? null : `${errors.join('; ')}${retried ? '; no action succeeded, so the alert is not held off and tries again at the next evaluation' : ''}`;
    await this.setError(alert.id, text, true);
  }

  /**
   * An evaluation that ran cleanly and did not trigger: a problem of an earlier evaluation (query
   * error, owner, warnings, busy) is over; a problem of the last trigger's actions stays until the
   * next trigger reports afresh.
   */
  private async cleanEvaluation(id: string): Promise<null> {
    const rt = this.d.store.state.alerting.runtime.get(id);
    if (rt !== undefined && rt.lastError !== null && !rt.lastErrorFromActions) await this.setError(id, null);
    return null;
  }

  /** Records an evaluation's problem; nothing to deliver. */
  private async problem(id: string, text: string): Promise<null> {
    await this.setError(id, text);
    return null;
  }

  /** Runs one action of a trigger; the problem to report, or null. */
  private async runAction(def: ActionDefinition, trigger: TriggerContext): Promise<string | null> {
    let props: ActionProperties;
    try {
      props = this.d.openAction(def);
    } catch (err) {
      return `action "${def.name}" cannot be read: ${(err as Error).message}`;
    }
    const inv = { actionId: def.id, invocationId: randomUUID() };
    const out = await this.d.dispatcher.deliver(props, trigger, inv, this.d.settings.retry, this.stopper.signal);
    const fields = { alert: trigger.alertId, action: def.id, kind: def.kind, invocation: inv.invocationId, attempts: out.attempts };
    if (out.error === null) {
      this.d.logger.info('alert action delivered', fields);
      return null;
    }
    this.d.logger.warn('alert action failed', { ...fields, code: out.error.code, error: out.error.message });
    this.d.metrics?.actionFailed(def.kind);
    return `action "${def.name}" (${def.kind}) failed after ${out.attempts} attempt${out.attempts === 1 ? '' : 's'}: ${out.error.message}`;
  }

  /** Why the alert's owner may not run its query, or null. */
  private ownerProblem(s: GlobalState, alert: AlertDefinition, repo: AlertDomain): string | null {
    if (alert.ownership.kind !== 'user') return null;
    const u = s.users.get(alert.ownership.userId);
    if (u === undefined) return `not run: the user who owns the alert no longer exists; update the alert (as a member of the ${repo.kind}) to take it over`;
    if (!userMayRead(s, u.id, repo.access)) return `not run: the alert's owner "${u.username}" is no longer a member of ${repo.kind} "${repo.name}"; update the alert (as a member) to take it over`;
    return null;
  }

  /** Records a problem (or its absence) when it differs from what is recorded. */
  private async setError(id: string, error: string | null, fromActions = false): Promise<void> {
    const text = error === null ? null : error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS - 3)}...` : error;
    if (text !== null) this.d.logger.warn('alert problem', { alert: id, error: text });
    await this.d.store.transact((s) => {
      const rt = s.alerting.runtime.get(id);
      const same = rt === undefined || (rt.lastError === text && (text === null || rt.lastErrorFromActions === fromActions));
      return { events: same ? [] : [{ type: 'AlertErrorSet', id, error: text, at: this.d.clock.now(), ...(fromActions && text !== null ? { fromActions: true } : {}) }], result: undefined };
    });
  }

  /**
   * Stops evaluating: cancels running queries at once; deliveries under way (and triggers waiting
   * for a delivery slot) get up to the action timeout, at most MAX_STOP_GRACE_MS, to finish, then
   * their calls and retries are aborted.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    for (const r of this.runs) r.cancel();
    const all = Promise.all([...this.inFlight.values()]);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(this.d.settings.retry.timeoutMs, MAX_STOP_GRACE_MS))));
    await Promise.race([all, grace]);
    clearTimeout(timer);
    this.stopper.abort();
    await all;
  }
}

/**
 * What an alert's query searches: its repository, or its view's connections each with the
 * connection's filter; `window` (a filter alert's ingest-time window) is applied to every source
 * after the connection's filter (on a line of its own: a filter may end in a // comment).
 */
function searchTarget(state: GlobalState, domain: AlertDomain, window: string): { id: string; name: string; sources?: { id: string; name: string; filter: string }[] } {
  if (domain.view === undefined) return window === '' ? { id: domain.id, name: domain.name } : { id: domain.id, name: domain.name, sources: [{ id: domain.id, name: domain.name, filter: window }] };
  const t = viewTarget(state, domain.view);
  if (window === '') return t;
  return { ...t, sources: t.sources.map((src) => ({ ...src, filter: src.filter === '' ? window : `${src.filter}\n| ${window}` })) };
}
