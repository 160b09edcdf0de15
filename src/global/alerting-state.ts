/**
 * The alerting part of global state: alert and action definitions and each alert's runtime state
 * (last trigger, throttle-field values still held off, last error). Applying an event is pure and
 * deterministic, like the rest of GlobalState; bounds that shape the state are constants here, not
 * configuration, so that every node and every replay ends in the same state.
 */
import type { ActionDefinition, AlertDefinition, AlertingEvent } from './alerting-events.js';

/**
 * Throttle-field values remembered per alert (and carried by one AlertTriggered); the oldest are
 * forgotten beyond it. Values are 22-character keys (alerts/throttle.ts), so this is ~45 KB.
 */
export const MAX_THROTTLE_VALUES = 2_000;

export interface AlertRuntime {
  lastTriggeredAt: number | null;
  /** Throttle-field value -> when the alert last triggered for it (insertion order = age). */
  throttled: Map<string, number>;
  lastError: string | null;
  lastErrorAt: number | null;
  /** Whether lastError comes from a trigger's actions rather than from the evaluation. */
  lastErrorFromActions: boolean;
  /** Scheduled searches: the run time (window end) of the last run, and when that run finished. */
  lastExecutedAt?: number | null;
  lastRunFinishedAt?: number | null;
}

export interface AlertingSnapshot {
  alerts: AlertDefinition[];
  actions: ActionDefinition[];
  runtime: {
    id: string;
    lastTriggeredAt: number | null;
    throttled: [string, number][];
    lastError: string | null;
    lastErrorAt: number | null;
    lastErrorFromActions?: boolean;
    lastExecutedAt?: number | null;
    lastRunFinishedAt?: number | null;
  }[];
  /** Absent when every node runs alerts. */
  nodesWithoutAlerts?: number[];
}

const copyAlert = (a: AlertDefinition): AlertDefinition => ({
  ...a,
  actions: [...a.actions],
  labels: [...a.labels],
  ownership: { ...a.ownership },
  ...(a.schedule === undefined ? {} : { schedule: { ...a.schedule } }),
});

export class AlertingState {
  readonly alerts = new Map<string, AlertDefinition>();
  readonly actions = new Map<string, ActionDefinition>();
  readonly runtime = new Map<string, AlertRuntime>();
  /** Nodes whose config says alerts.enabled = false: never the alert runner. */
  readonly nodesWithoutAlerts = new Set<number>();

  alertsOf(repositoryId: string): AlertDefinition[] {
    return [...this.alerts.values()].filter((a) => a.repositoryId === repositoryId);
  }

  actionsOf(repositoryId: string): ActionDefinition[] {
    return [...this.actions.values()].filter((a) => a.repositoryId === repositoryId);
  }

  apply(e: AlertingEvent): void {
    switch (e.type) {
      case 'AlertSaved': {
        const prev = this.alerts.get(e.alert.id);
        this.alerts.set(e.alert.id, copyAlert(e.alert));
        const rt = this.runtime.get(e.alert.id);
        if (rt === undefined) {
          this.runtime.set(e.alert.id, { lastTriggeredAt: null, throttled: new Map(), lastError: null, lastErrorAt: null, lastErrorFromActions: false });
          return;
        }
        // A changed definition starts without the old error; values of another field mean nothing.
        rt.lastError = null;
        rt.lastErrorAt = null;
        rt.lastErrorFromActions = false;
        if (prev !== undefined && prev.throttleField !== e.alert.throttleField) rt.throttled.clear();
        return;
      }
      case 'AlertDeleted':
        this.alerts.delete(e.id);
        this.runtime.delete(e.id);
        return;
      case 'ActionSaved':
        this.actions.set(e.action.id, { ...e.action });
        return;
      case 'ActionDeleted': {
        if (!this.actions.delete(e.id)) return;
        for (const a of this.alerts.values()) {
          if (a.actions.includes(e.id)) a.actions = a.actions.filter((id) => id !== e.id);
        }
        return;
      }
      case 'AlertTriggered': {
        const alert = this.alerts.get(e.id);
        const rt = this.runtime.get(e.id);
        if (alert === undefined || rt === undefined) return;
        rt.lastTriggeredAt = e.at;
        if (e.values === undefined) return;
        for (const [v, at] of rt.throttled) {
          if (at + alert.throttleTimeMillis <= e.at) rt.throttled.delete(v);
        }
        for (const v of e.values) {
          rt.throttled.delete(v);
          rt.throttled.set(v, e.at);
        }
        for (const v of rt.throttled.keys()) {
          if (rt.throttled.size <= MAX_THROTTLE_VALUES) break;
          rt.throttled.delete(v);
        }
        return;
      }
      case 'AlertTriggerUndone': {
        const rt = this.runtime.get(e.id);
        if (rt === undefined) return;
        if (rt.lastTriggeredAt === e.at) rt.lastTriggeredAt = e.previous;
        for (const v of e.values ?? []) if (rt.throttled.get(v) === e.at) rt.throttled.delete(v);
        return;
      }
      case 'ScheduledSearchExecuted': {
        const rt = this.runtime.get(e.id);
        if (rt === undefined) return;
        // Runs are recorded in order; a late duplicate never moves the cursor back.
        if (rt.lastExecutedAt !== undefined && rt.lastExecutedAt !== null && rt.lastExecutedAt >= e.at) return;
        rt.lastExecutedAt = e.at;
        rt.lastRunFinishedAt = e.finishedAt;
        if (e.triggered) rt.lastTriggeredAt = e.at;
        return;
      }
      case 'AlertNodeSet':
        if (e.runsAlerts) this.nodesWithoutAlerts.delete(e.nodeId);
        else this.nodesWithoutAlerts.add(e.nodeId);
        return;
      case 'AlertErrorSet': {
        const rt = this.runtime.get(e.id);
        if (rt === undefined) return;
        rt.lastError = e.error;
        rt.lastErrorAt = e.error === null ? null : e.at;
        rt.lastErrorFromActions = e.error !== null && e.fromActions === true;
        return;
      }
      default: {
        const never: never = e;
        throw new Error(`unknown alerting event ${JSON.stringify(never)}`);
      }
    }
  }

  /** A repository was deleted: its alerts and actions go with it. */
  dropRepository(repositoryId: string): void {
    for (const a of this.alertsOf(repositoryId)) {
      this.alerts.delete(a.id);
      this.runtime.delete(a.id);
    }
    for (const a of this.actionsOf(repositoryId)) this.actions.delete(a.id);
  }

  toSnapshot(): AlertingSnapshot {
    return {
      alerts: [...this.alerts.values()].map(copyAlert),
      actions: [...this.actions.values()].map((a) => ({ ...a })),
      runtime: [...this.runtime].map(([id, r]) => ({
        id,
        lastTriggeredAt: r.lastTriggeredAt,
        throttled: [...r.throttled],
        lastError: r.lastError,
        lastErrorAt: r.lastErrorAt,
        ...(r.lastErrorFromActions ? { lastErrorFromActions: true } : {}),
        ...(r.lastExecutedAt === undefined || r.lastExecutedAt === null ? {} : { lastExecutedAt: r.lastExecutedAt, lastRunFinishedAt: r.lastRunFinishedAt ?? null }),
      })),
      ...(this.nodesWithoutAlerts.size > 0 ? { nodesWithoutAlerts: [...this.nodesWithoutAlerts] } : {}),
    };
  }

  loadSnapshot(s: AlertingSnapshot): void {
    for (const n of s.nodesWithoutAlerts ?? []) this.nodesWithoutAlerts.add(n);
    for (const a of s.alerts) this.alerts.set(a.id, copyAlert(a));
    for (const a of s.actions) this.actions.set(a.id, { ...a });
    for (const r of s.runtime) {
      this.runtime.set(r.id, {
        lastTriggeredAt: r.lastTriggeredAt,
        throttled: new Map(r.throttled),
        lastError: r.lastError,
        lastErrorAt: r.lastErrorAt,
        lastErrorFromActions: r.lastErrorFromActions === true,
        ...(r.lastExecutedAt === undefined || r.lastExecutedAt === null ? {} : { lastExecutedAt: r.lastExecutedAt, lastRunFinishedAt: r.lastRunFinishedAt ?? null }),
      });
    }
  }
}
