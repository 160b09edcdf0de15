/**
 * Validation of a scheduled search as the product's GraphQL inputs spell it: v1
 * (`createScheduledSearch`: queryStart / queryEnd as relative times, `actions`) and v2
 * (`createScheduledSearchV2`: searchIntervalSeconds / searchIntervalOffsetSeconds,
 * `actionIdsOrNames`). Both become one stored form: an alert of kind `scheduled` whose window is
 * [T - start, T - end] for each run time T of its schedule (docs/data-lifecycle.md).
 */
import { LogsvcError } from '../lib/errors.js';
import { parseRelative } from '../query/time.js';
import type { ScheduleSpec } from '../global/index.js';
import type { AlertInput, FieldNames } from './alert-input.js';
import { GRAPHQL_FIELDS } from './alert-input.js';
import { MAX_WINDOW_MS } from './limits.js';
import { MAX_BACKFILL_LIMIT, Schedule } from './schedule.js';

export interface ScheduledInput {
  alert: AlertInput;
  schedule: ScheduleSpec;
  names: FieldNames;
}

type Args = Record<string, unknown>;

const bad = (field: string, message: string): LogsvcError => new LogsvcError('E_VALIDATION', `${field}: ${message}`);

function backfill(v: unknown, field: string, required: boolean): number {
  if (v === undefined || v === null) {
    if (required) throw bad(field, 'required: how many missed runs to make up (0: none)');
    return 0;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_BACKFILL_LIMIT) throw bad(field, `must be a whole number from 0 to ${MAX_BACKFILL_LIMIT}`);
  return v;
}

function seconds(v: unknown, field: string, min: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v * 1000 > MAX_WINDOW_MS) throw bad(field, `must be a whole number of seconds from ${min} to ${MAX_WINDOW_MS / 1000}`);
  return v;
}

function relative(v: unknown, field: string, allowNow: boolean): number {
  if (typeof v !== 'string') throw bad(field, `required, a relative time such as "1h"${allowNow ? ' or "now"' : ''}`);
  if (allowNow && v.trim().toLowerCase() === 'now') return 0;
  const ms = parseRelative(v);
  if (ms === null) throw bad(field, `"${v.slice(0, 100)}" is not a relative time (a number and a unit such as "30s", "10m", "24h")`);
  if (ms < 0 || ms > MAX_WINDOW_MS) throw bad(field, 'must be at most 365 days back');
  return ms;
}

function alertPart(i: Args, queryStart: string, actions: unknown): AlertInput {
  return {
    name: i.name,
    description: i.description,
    queryString: i.queryString,
    queryStart,
    throttleTimeMillis: 0,
    throttleField: null,
    silenced: i.enabled === undefined || i.enabled === null ? false : typeof i.enabled === 'boolean' ? !i.enabled : i.enabled,
    actions,
    labels: i.labels,
    runAsUserId: i.runAsUserId,
    ownershipType: i.queryOwnershipType,
  };
}

/** `createScheduledSearch` / `updateScheduledSearch` input. */
export function scheduledInputV1(i: Args): ScheduledInput {
  const names: FieldNames = { ...GRAPHQL_FIELDS, queryStart: 'queryStart', actions: 'actions', throttleTimeMillis: 'schedule', throttleField: 'schedule' };
  Schedule.parse(i.schedule, i.timeZone);
  const startMs = relative(i.queryStart, 'queryStart', false);
  const endMs = relative(i.queryEnd, 'queryEnd', true);
  if (startMs <= endMs) throw bad('queryStart', `must lie before queryEnd (${String(i.queryStart)} is not further back than ${String(i.queryEnd)})`);
  const start = (i.queryStart as string).trim();
  const end = (i.queryEnd as string).trim();
  const schedule: ScheduleSpec = {
    cron: (i.schedule as string).trim(),
    timeZone: (i.timeZone as string).trim(),
    backfillLimit: backfill(i.backfillLimit, 'backfillLimit', true),
    start,
    end,
    startMs,
    endMs,
    v2: false,
    maxWaitTimeSeconds: null,
  };
  return { alert: alertPart(i, start, i.actions), schedule, names };
}

/** `createScheduledSearchV2` / `updateScheduledSearchV2` input. */
export function scheduledInputV2(i: Args): ScheduledInput {
  const names: FieldNames = { ...GRAPHQL_FIELDS, queryStart: 'searchIntervalSeconds', actions: 'actionIdsOrNames', throttleTimeMillis: 'schedule', throttleField: 'schedule' };
  const ingestTime = i.queryTimestampType === 'IngestTimestamp';
  // As in the product: an offset goes with event timestamps, a wait for ingest delay with ingest timestamps.
  if (ingestTime && i.searchIntervalOffsetSeconds !== undefined && i.searchIntervalOffsetSeconds !== null && i.searchIntervalOffsetSeconds !== 0) {
    throw bad('searchIntervalOffsetSeconds', 'only goes with queryTimestampType EventTimestamp (with IngestTimestamp each run searches what was ingested in its interval)');
  }
  Schedule.parse(i.schedule, i.timeZone);
  const interval = seconds(i.searchIntervalSeconds, 'searchIntervalSeconds', 1);
  const offset = i.searchIntervalOffsetSeconds === undefined || i.searchIntervalOffsetSeconds === null ? 0 : seconds(i.searchIntervalOffsetSeconds, 'searchIntervalOffsetSeconds', 0);
  if ((interval + offset) * 1000 > MAX_WINDOW_MS) throw bad('searchIntervalOffsetSeconds', 'the interval and its offset reach back more than 365 days');
  const start = `${interval + offset}s`;
  const end = offset === 0 ? 'now' : `${offset}s`;
  const maxWait = i.maxWaitTimeSeconds === undefined || i.maxWaitTimeSeconds === null ? null : seconds(i.maxWaitTimeSeconds, 'maxWaitTimeSeconds', 0);
  const schedule: ScheduleSpec = {
    cron: (i.schedule as string).trim(),
    timeZone: (i.timeZone as string).trim(),
    backfillLimit: backfill(i.backfillLimit, 'backfillLimit', false),
    start,
    end,
    startMs: (interval + offset) * 1000,
    endMs: offset * 1000,
    v2: true,
    maxWaitTimeSeconds: maxWait,
    ...(ingestTime ? { ingestTime: true } : {}),
  };
  return { alert: alertPart(i, start, i.actionIdsOrNames), schedule, names };
}
