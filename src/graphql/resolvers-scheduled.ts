/**
 * Resolvers of scheduled searches (the product's ScheduledSearch type and its v1 and v2
 * mutations), over alerts of kind `scheduled` (src/alerts: AlertService stores them, the
 * AlertScheduler runs them). This file only translates shapes.
 */
import type { AlertView } from '../alerts/index.js';
import { nextPlannedRun } from '../alerts/schedule.js';
import { scheduledInputV1, scheduledInputV2, type ScheduledInput } from '../alerts/scheduled-input.js';
import { alertShape } from './resolvers-alerting.js';
import type { GraphqlContext } from './context.js';

type Args = Record<string, unknown>;
type Resolver = (args: Args, ctx: GraphqlContext) => unknown;

export function scheduledSearchShape(v: AlertView, ctx: GraphqlContext): Record<string, unknown> {
  const base = alertShape(v, ctx);
  const a = v.alert;
  const spec = a.schedule!;
  return {
    ...base,
    start: spec.start,
    end: spec.end,
    searchIntervalSeconds: Math.round((spec.startMs - spec.endMs) / 1000),
    searchIntervalOffsetSeconds: Math.round(spec.endMs / 1000),
    maxWaitTimeSeconds: spec.maxWaitTimeSeconds,
    timeZone: spec.timeZone,
    schedule: spec.cron,
    backfillLimit: spec.backfillLimit,
    backfillLimitV2: spec.backfillLimit,
    queryTimestampType: spec.ingestTime === true ? 'IngestTimestamp' : 'EventTimestamp',
    lastScheduledSearch: v.lastRunFinishedAt,
    lastExecuted: v.lastExecutedAt,
    lastTriggered: v.lastTriggeredAt,
    timeOfNextPlannedExecution: () => (a.silenced ? null : nextPlannedRun(spec, a.createdAt, v.lastExecutedAt, Date.now())),
  };
}

/** The scheduled-search fields of a repository. */
export function scheduledSearchFields(domain: string, ctx: GraphqlContext): Record<string, unknown> {
  const alerts = ctx.services.alerts;
  return {
    scheduledSearches: () => alerts.list(ctx.principal, domain, 'scheduled').map((v) => scheduledSearchShape(v, ctx)),
    scheduledSearch: (a: Args) => scheduledSearchShape(alerts.get(ctx.principal, domain, a.id as string, 'scheduled'), ctx),
  };
}

function create(parse: (i: Args) => ScheduledInput): Resolver {
  return async (a, ctx) => {
    const i = a.input as Args;
    const { alert, schedule, names } = parse(i);
    return scheduledSearchShape(await ctx.services.alerts.create(ctx.principal, i.viewName as string, alert, names, { kind: 'scheduled', schedule }), ctx);
  };
}

function update(parse: (i: Args) => ScheduledInput): Resolver {
  return async (a, ctx) => {
    const i = a.input as Args;
    const { alert, schedule, names } = parse(i);
    return scheduledSearchShape(await ctx.services.alerts.update(ctx.principal, i.viewName as string, i.id as string, alert, names, { kind: 'scheduled', schedule }), ctx);
  };
}

export const scheduledSearchMutations: Record<string, Resolver> = {
  createScheduledSearch: create(scheduledInputV1),
  createScheduledSearchV2: create(scheduledInputV2),
  updateScheduledSearch: update(scheduledInputV1),
  updateScheduledSearchV2: update(scheduledInputV2),
  deleteScheduledSearch: async (a, ctx) => {
    const i = a.input as Args;
    await ctx.services.alerts.delete(ctx.principal, i.viewName as string, i.id as string, 'scheduled');
    return true;
  },
};
