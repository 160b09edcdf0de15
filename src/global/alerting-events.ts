/**
 * The global events of alerting: alert and action definitions, and the runtime state the scheduler
 * must not lose (when an alert last triggered, per throttle-field value, and its last error). The
 * runtime state lives here, not in a node-local file, so that it survives a restart and, in a
 * cluster, whichever node runs the scheduler next knows it.
 */

/** How an alert's query runs when its owner is a user, or on behalf of the organization. */
export type AlertOwnership = { kind: 'user'; userId: string } | { kind: 'organization' };

/** An alert as stored: everything a create or update decided, nothing derived. */
export interface AlertDefinition {
  id: string;
  repositoryId: string;
  name: string;
  description: string;
  queryString: string;
  /** Relative start of the query window, as given ("1h", "10 minutes"). */
  queryStart: string;
  throttleTimeMillis: number;
  /** Empty: throttle the alert as a whole. */
  throttleField: string;
  /** True: the alert is disabled. */
  silenced: boolean;
  /** Action ids, run in this order. */
  actions: string[];
  labels: string[];
  ownership: AlertOwnership;
  createdAt: number;
  /**
   * The product's newer alert types (absent: a legacy alert). An aggregate alert runs its query
   * over the last `queryStart` like a legacy alert; a filter alert triggers on events as they are
   * ingested, each at most once (docs/data-lifecycle.md).
   */
  kind?: AlertKind;
  /**
   * Aggregate alerts: CompleteMode (absent) triggers on a complete result only, waiting up to 20
   * minutes for one; ImmediateMode triggers at once on an incomplete result too.
   */
  triggerMode?: 'CompleteMode' | 'ImmediateMode' | undefined;
  /**
   * Aggregate alerts: the search interval is over @ingesttimestamp (the product's queryTimestampType
   * IngestTimestamp) rather than @timestamp (absent).
   */
  ingestTime?: boolean | undefined;
  /** Scheduled searches: when they run and over which window (`queryStart` is the window's start). */
  schedule?: ScheduleSpec | undefined;
}

export type AlertKind = 'filter' | 'aggregate' | 'scheduled';

/**
 * A scheduled search's schedule: at each run time T of the cron expression (in its time zone) the
 * query runs once over [T - startMs, T - endMs].
 */
export interface ScheduleSpec {
  /** The cron expression as given. */
  cron: string;
  timeZone: string;
  /** Runs missed (the node was down, or busy) that are still made up, newest first; older ones are skipped. */
  backfillLimit: number;
  /** The window's start and end as written (v1: queryStart / queryEnd; v2: from the interval and offset). */
  start: string;
  end: string;
  startMs: number;
  endMs: number;
  /** Which API created it: v2 shows searchIntervalSeconds, backfillLimitV2 and maxWaitTimeSeconds. */
  v2: boolean;
  maxWaitTimeSeconds: number | null;
  /** v2 with queryTimestampType IngestTimestamp: each run searches the events ingested in its window, whatever their @timestamp. */
  ingestTime?: boolean | undefined;
  /** When it was created or last enabled: runs before it are never made up. Set by AlertService. */
  activeSince?: number | undefined;
}

export type ActionKind = 'webhook' | 'slack' | 'email' | 'repository' | 'pagerduty' | 'opsgenie' | 'victorops';

/**
 * An action as stored. Its properties (URLs with keys in them, ingest tokens, routing keys,
 * headers) are one JSON document sealed with the node's state key, as ingest tokens are.
 */
export interface ActionDefinition {
  id: string;
  repositoryId: string;
  name: string;
  kind: ActionKind;
  sealed: string;
  createdAt: number;
}

export type AlertingEvent =
  | { type: 'AlertSaved'; alert: AlertDefinition }
  | { type: 'AlertDeleted'; id: string }
  | { type: 'ActionSaved'; action: ActionDefinition }
  | { type: 'ActionDeleted'; id: string }
  /**
   * The alert triggered at `at`. `values`: the throttle-field values it triggered for (field
   * throttling only); each is held off until `at + throttleTimeMillis`.
   */
  | { type: 'AlertTriggered'; id: string; at: number; values?: string[] | undefined }
  /**
   * The trigger at `at` reached none of its actions (every one failed, or the node stopped first):
   * as in the product, it does not count, so the alert is not held off by it. `previous`: the last
   * trigger time before it; `values`: the throttle-field values it recorded.
   */
  | { type: 'AlertTriggerUndone'; id: string; at: number; previous: number | null; values?: string[] | undefined }
  /**
   * The outcome of the alert's last evaluation with a problem, or null once it ran cleanly.
   * `fromActions`: the problem is that of a trigger's actions (kept until the next trigger), not
   * of the evaluation (cleared by the next clean one, with or without rows).
   */
  | { type: 'AlertErrorSet'; id: string; error: string | null; at: number; fromActions?: boolean | undefined }
  /**
   * Scheduled search `id` ran for its run time `at` (the end of its window, epoch ms) and finished
   * at `finishedAt`; `triggered`: its query had rows and its actions were started. Recorded before
   * the actions run, so a restart neither repeats nor skips the run.
   */
  | { type: 'ScheduledSearchExecuted'; id: string; at: number; finishedAt: number; triggered: boolean }
  /**
   * Whether node `nodeId` evaluates alerts (its `alerts.enabled`), published at every start, so the
   * cluster picks its alert runner among the nodes that do.
   */
  | { type: 'AlertNodeSet'; nodeId: number; runsAlerts: boolean };
