/**
 * AlertScheduler decisions with a real global store and stand-ins for the query engine and the
 * dispatcher (the parts an integration test cannot steer): skips for want of a query slot become
 * visible after a few intervals, a query past alerts.query_timeout_ms is cancelled and reported.
 */
import t, { type Test } from 'tap';
import { AlertScheduler, BUSY_SKIPS_BEFORE_ERROR, COMPLETE_WAIT_MS, MAX_FAILURE_BACKOFF_MS, type SchedulerSettings } from '../../../src/alerts/scheduler.js';
import { EmbeddedGlobalLog, GlobalStore, type AlertDefinition } from '../../../src/global/index.js';
import { LogsvcError } from '../../../src/lib/errors.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { systemClock, type Clock } from '../../../src/lib/clock.js';
import type { QueryRun } from '../../../src/query/index.js';
import { MapEvent } from '../../../src/query/runtime.js';
import { tempDir } from '../global/fixtures.js';

const SETTINGS: SchedulerSettings = {
  intervalMs: 1_000_000,
  maxConcurrent: 2,
  maxConcurrentDeliveries: 2,
  queryTimeoutMs: 100,
  maxMessageEvents: 10,
  retry: { retries: 0, backoffMs: 0, timeoutMs: 1000 },
};

const ALERT: AlertDefinition = {
  id: 'al1',
  repositoryId: 'r1',
  name: 'errors',
  description: '',
  queryString: 'level=ERROR',
  queryStart: '1h',
  throttleTimeMillis: 0,
  throttleField: '',
  silenced: false,
  actions: ['ac1'],
  labels: [],
  ownership: { kind: 'organization' },
  createdAt: 1,
};

/** A query run that ends when `finish` is called (or, cancelled, at once with what it has). */
function fakeRun(rows: Record<string, string>[], warnings: string[] = []): QueryRun & { finish: () => void } {
  let finish!: () => void;
  const done = new Promise<void>((r) => (finish = r));
  const run = {
    done,
    error: null,
    cancelled: false,
    outcome: { rows: rows.map((r) => new MapEvent(r)), matched: rows.length, warnings },
    spec: { ctx: { start: 0, end: 1 } },
    cancel() {
      run.cancelled = true;
      finish();
    },
    finish,
  };
  return run as unknown as QueryRun & { finish: () => void };
}

async function setup(t: Test, runs: () => QueryRun, opts: { clock?: Clock; settings?: SchedulerSettings } = {}): Promise<{ store: GlobalStore; scheduler: AlertScheduler; delivered: string[] }> {
  const store = await GlobalStore.open(new EmbeddedGlobalLog(await tempDir(t)), { snapshotEvery: 1000, logger: silentLogger });
  t.teardown(() => store.close());
  await store.transact(() => ({
    events: [
      { type: 'RepositoryCreated', id: 'r1', name: 'web', description: '', at: 1 },
      { type: 'ActionSaved', action: { id: 'ac1', repositoryId: 'r1', name: 'hook', kind: 'webhook', sealed: 'x', createdAt: 1 } },
      { type: 'AlertSaved', alert: ALERT },
    ],
    result: undefined,
  }));
  const delivered: string[] = [];
  const scheduler = new AlertScheduler({
    store,
    queries: { prepare: async () => ({}) as never, run: runs },
    openAction: () => ({ kind: 'webhook', url: 'http://x', method: 'POST', headers: [], bodyTemplate: '', ignoreSSL: false, useProxy: false }),
    dispatcher: {
      deliver: async (_p, trigger) => {
        delivered.push(trigger.alertId);
        return { attempts: 1, error: null };
      },
    },
    clock: opts.clock ?? systemClock,
    logger: silentLogger,
    baseUrl: 'http://node',
    isRunner: () => true,
    settings: opts.settings ?? SETTINGS,
  });
  t.teardown(() => scheduler.stop());
  return { store, scheduler, delivered };
}

const lastError = (store: GlobalStore): string | null => store.state.alerting.runtime.get('al1')!.lastError;

t.test('evaluations skipped because the node runs too many queries become visible after a few', async (t) => {
  const busy = new LogsvcError('E_TOO_MANY_REQUESTS', '4 queries are running, the most this node runs at once (query.max_concurrent); retry shortly');
  const { store, scheduler } = await setup(t, () => {
    throw busy;
  });
  for (let i = 1; i < BUSY_SKIPS_BEFORE_ERROR; i++) {
    t.equal(await scheduler.evaluate('al1'), null);
    t.equal(lastError(store), null, `skip ${i}: not yet an error`);
  }
  await scheduler.evaluate('al1');
  const text = lastError(store);
  t.equal(text, `not evaluated: all of this node's query slots (query.max_concurrent) were taken at ${BUSY_SKIPS_BEFORE_ERROR} or more evaluations in a row; it is tried again every interval`);
  const seq = store.state.seq;
  await scheduler.evaluate('al1');
  await scheduler.evaluate('al1');
  t.equal(store.state.seq, seq, 'staying busy writes no further events');
});

t.test('a query past alerts.query_timeout_ms is cancelled, reported and never triggers on its partial rows', async (t) => {
  let run!: ReturnType<typeof fakeRun>;
  const { store, scheduler, delivered } = await setup(t, () => (run = fakeRun([{ level: 'ERROR' }])));
  const started = Date.now();
  t.equal(await scheduler.evaluate('al1'), null, 'nothing to deliver');
  t.ok(Date.now() - started < 1000, 'ended at the timeout');
  t.ok(run.cancelled, 'the run was cancelled');
  t.match(lastError(store), /^the query did not finish within 100 ms \(alerts\.query_timeout_ms\)/);
  t.equal(store.state.alerting.runtime.get('al1')!.lastTriggeredAt, null);
  t.strictSame(delivered, []);
});

t.test('a query that fails or warns makes that visible', async (t) => {
  let mode: 'error' | 'warn' = 'error';
  const { store, scheduler } = await setup(t, () => {
    const r = fakeRun([{ level: 'ERROR' }], mode === 'warn' ? ['the result was cut at 100 groups'] : []);
    if (mode === 'error') (r as { error: LogsvcError | null }).error = new LogsvcError('E_QUERY', 'lookup file "x.csv" does not exist');
    r.finish();
    return r;
  });
  await scheduler.evaluate('al1');
  t.match(lastError(store), /^the query failed: lookup file "x\.csv" does not exist; while it keeps failing it is evaluated less often/);
  mode = 'warn';
  await scheduler.evaluate('al1');
  t.equal(lastError(store), 'not triggered because the query produced warnings (an incomplete result): the result was cut at 100 groups');
  t.equal(store.state.alerting.runtime.get('al1')!.lastTriggeredAt, null);
});

t.test('a problem of the evaluation is cleared by the next clean evaluation, with or without rows; an action problem stays until the next trigger', async (t) => {
  let mode: 'error' | 'none' | 'rows' = 'error';
  let deliverError: string | null = 'hook down';
  const { store, scheduler } = await setup(t, () => {
    const r = fakeRun(mode === 'rows' ? [{ level: 'ERROR' }] : []);
    if (mode === 'error') (r as { error: LogsvcError | null }).error = new LogsvcError('E_QUERY', 'boom');
    r.finish();
    return r;
  });
  const settle = async (): Promise<void> => {
    const triggered = await scheduler.evaluate('al1');
    if (triggered !== null) await (scheduler as unknown as { deliver: (x: unknown) => Promise<void> }).deliver(triggered);
  };
  // The dispatcher stand-in fails while deliverError is set.
  (scheduler as unknown as { d: { dispatcher: { deliver: unknown } } }).d.dispatcher.deliver = async () =>
    deliverError === null ? { attempts: 1, error: null } : { attempts: 1, error: new LogsvcError('E_ACTION_FAILED', deliverError) };

  await settle();
  t.match(lastError(store), /^the query failed: boom;/);
  mode = 'none';
  await settle();
  t.equal(lastError(store), null, 'a clean evaluation without rows clears the query error');

  mode = 'rows';
  await settle();
  t.match(lastError(store), /^action "hook" \(webhook\) failed after 1 attempt: hook down; no action succeeded, so the alert is not held off and tries again at the next evaluation$/);
  mode = 'none';
  await settle();
  t.match(lastError(store), /hook down/, 'an action problem stays through evaluations without a trigger');
  mode = 'rows';
  deliverError = null;
  await settle();
  t.equal(lastError(store), null, 'the next trigger reports afresh');
});

t.test('an alert silenced or updated while its query runs does not trigger', async (t) => {
  let run!: ReturnType<typeof fakeRun>;
  const { store, scheduler, delivered } = await setup(t, () => (run = fakeRun([{ level: 'ERROR' }])));
  (scheduler as unknown as { d: { settings: SchedulerSettings } }).d.settings = { ...SETTINGS, queryTimeoutMs: 10_000 };
  for (const change of [{ silenced: true }, { queryString: 'level=WARN' }]) {
    const evaluation = scheduler.evaluate('al1');
    await new Promise((r) => setImmediate(r));
    await store.transact(() => ({ events: [{ type: 'AlertSaved', alert: { ...ALERT, ...change } }], result: undefined }));
    run.finish();
    t.equal(await evaluation, null, `${JSON.stringify(change)}: nothing to deliver`);
    t.equal(store.state.alerting.runtime.get('al1')!.lastTriggeredAt, null, 'no trigger recorded');
    await store.transact(() => ({ events: [{ type: 'AlertSaved', alert: ALERT }], result: undefined }));
  }
  const evaluation = scheduler.evaluate('al1');
  await new Promise((r) => setImmediate(r));
  run.finish();
  t.not(await evaluation, null, 'unchanged, the same evaluation triggers');
  t.strictSame(delivered, []);
});

t.test('an alert with a throttle time of 0 triggers every evaluation but records its trigger time at most once a minute', async (t) => {
  const { store, scheduler } = await setup(t, () => {
    const r = fakeRun([{ level: 'ERROR' }]);
    r.finish();
    return r;
  });
  const seqBefore = store.state.seq;
  t.not(await scheduler.evaluate('al1'), null);
  const first = store.state.alerting.runtime.get('al1')!.lastTriggeredAt;
  t.type(first, 'number');
  const seqAfterFirst = store.state.seq;
  t.equal(seqAfterFirst - seqBefore, 1, 'the first trigger is recorded');
  for (let i = 0; i < 3; i++) t.not(await scheduler.evaluate('al1'), null, `evaluation ${i + 2} triggers too`);
  t.equal(store.state.seq, seqAfterFirst, 'no further global events within UNTHROTTLED_RECORD_MS');
  t.equal(store.state.alerting.runtime.get('al1')!.lastTriggeredAt, first);
});

t.test('a trigger none of whose actions succeeded does not count: the alert is not held off by it', async (t) => {
  const { store, scheduler } = await setup(t, () => {
    const r = fakeRun([{ level: 'ERROR', host: 'a' }]);
    r.finish();
    return r;
  });
  let fail = true;
  (scheduler as unknown as { d: { dispatcher: { deliver: unknown } } }).d.dispatcher.deliver = async () => (fail ? { attempts: 3, error: new LogsvcError('E_ACTION_FAILED', 'down') } : { attempts: 1, error: null });
  const deliver = (x: unknown): Promise<void> => (scheduler as unknown as { deliver: (x: unknown) => Promise<void> }).deliver(x);
  const rt = () => store.state.alerting.runtime.get('al1')!;
  for (const throttleField of ['', 'host']) {
    await store.transact(() => ({ events: [{ type: 'AlertSaved', alert: { ...ALERT, throttleTimeMillis: 3_600_000, throttleField } }], result: undefined }));
    fail = true;
    const first = await scheduler.evaluate('al1');
    t.not(first, null, `${throttleField || 'whole alert'}: triggers`);
    t.type(rt().lastTriggeredAt, 'number', 'the trigger is recorded before delivery');
    await deliver(first);
    t.equal(rt().lastTriggeredAt, null, 'every action failed: the trigger is taken back');
    t.equal(rt().throttled.size, 0, 'no value held');
    fail = false;
    const second = await scheduler.evaluate('al1');
    t.not(second, null, 'the next evaluation triggers again');
    await deliver(second);
    t.type(rt().lastTriggeredAt, 'number');
    t.equal(await scheduler.evaluate('al1'), null, 'delivered: now it is held off');
    await store.transact(() => ({ events: [{ type: 'AlertDeleted', id: 'al1' }, { type: 'AlertSaved', alert: ALERT }], result: undefined }));
  }
});

t.test('an alert whose query keeps failing is evaluated less and less often, until a clean run or a new query', async (t) => {
  let at = 1_000_000;
  const clock: Clock = { now: () => at, monotonic: () => at };
  let fail = true;
  let runs = 0;
  const { store, scheduler } = await setup(
    t,
    () => {
      runs++;
      const r = fakeRun([]);
      if (fail) (r as { error: LogsvcError | null }).error = new LogsvcError('E_QUERY_MEMORY', 'the query needs more than its memory budget of 256 MiB (query.max_query_memory_bytes)');
      r.finish();
      return r;
    },
    { clock, settings: { ...SETTINGS, intervalMs: 1000 } },
  );
  /** One scheduler tick at time `at`; resolves when what it started has finished. */
  const tick = async (): Promise<void> => {
    scheduler.tick();
    const inFlight = (scheduler as unknown as { inFlight: Map<string, Promise<void>> }).inFlight;
    await Promise.all([...inFlight.values()]);
  };
  await tick();
  t.equal(runs, 1);
  t.match(lastError(store), /^the query failed: the query needs more than its memory budget .*; while it keeps failing it is evaluated less often/);
  // Waits of 1, 2, 4 intervals: runs only once each has passed.
  for (const wait of [1000, 2000, 4000]) {
    const before = runs;
    at += wait - 1;
    await tick();
    t.equal(runs, before, `not run again before ${wait} ms`);
    at += 1;
    await tick();
    t.equal(runs, before + 1, `run again after ${wait} ms`);
  }
  // The wait is bounded.
  for (let i = 0; i < 40; i++) {
    at += MAX_FAILURE_BACKOFF_MS;
    await tick();
  }
  const capped = runs;
  at += MAX_FAILURE_BACKOFF_MS;
  await tick();
  t.equal(runs, capped + 1, `at most ${MAX_FAILURE_BACKOFF_MS} ms between tries`);
  // A changed query is tried at once; a clean run clears the error and the backoff.
  await store.transact(() => ({ events: [{ type: 'AlertSaved', alert: { ...ALERT, queryString: 'level=WARN' } }], result: undefined }));
  fail = false;
  await tick();
  t.equal(runs, capped + 2, 'a changed query is not held back');
  t.equal(lastError(store), null);
  await tick();
  t.equal(runs, capped + 3, 'a clean evaluation runs every interval');
});

t.test('an aggregate alert in CompleteMode waits for a complete result, up to COMPLETE_WAIT_MS; in ImmediateMode it does not', async (t) => {
  let at = 1_000_000;
  const clock: Clock = { now: () => at, monotonic: () => at };
  let warnings = ['collect: more than 1 distinct values'];
  const { store, scheduler, delivered } = await setup(
    t,
    () => {
      const r = fakeRun([{ host: 'h1' }], warnings);
      r.finish();
      return r;
    },
    { clock },
  );
  const save = (o: Partial<AlertDefinition>) => store.transact(() => ({ events: [{ type: 'AlertSaved', alert: { ...ALERT, kind: 'aggregate', ...o } }], result: undefined }));
  const deliver = async (): Promise<boolean> => {
    const trig = await scheduler.evaluate('al1');
    if (trig === null) return false;
    delivered.push('al1');
    return true;
  };
  await save({ triggerMode: 'CompleteMode' });
  t.equal(await deliver(), false, 'an incomplete result does not trigger');
  t.match(lastError(store), /in CompleteMode the alert waits up to 20 minutes for a complete result/);
  at += COMPLETE_WAIT_MS - 1;
  t.equal(await deliver(), false, 'still waiting just before the limit');
  at += 1;
  t.equal(await deliver(), true, 'after 20 minutes of incomplete results it triggers on what it has');
  // A complete result ends the wait; the next incomplete one waits again.
  await save({ triggerMode: 'CompleteMode', throttleTimeMillis: 0, name: 'again' });
  warnings = [];
  t.equal(await deliver(), true, 'a complete result triggers at once');
  warnings = ['cut'];
  t.equal(await deliver(), false, 'the wait starts afresh');
  await save({ triggerMode: 'ImmediateMode', name: 'immediate' });
  t.equal(await deliver(), true, 'ImmediateMode triggers on the incomplete result at once');
  await store.transact(() => ({ events: [{ type: 'AlertSaved', alert: { ...ALERT, name: 'legacy' } }], result: undefined }));
  t.equal(await deliver(), false, 'a legacy alert never triggers on an incomplete result');
});
