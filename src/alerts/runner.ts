/**
 * Which node runs alerts: the lowest-numbered live node among those whose config lets them
 * (`alerts.enabled`), so a cluster evaluates each alert once, and a node with alerts switched off
 * never leaves the cluster without a runner. Each node publishes its setting at start.
 */
import type { AlertingState, GlobalStore } from '../global/index.js';

/** Whether `selfId` is the alert runner among `nodes` (sorted by id, with liveness). */
export function isAlertRunner(selfId: number, nodes: readonly { id: number; isAvailable: boolean }[], alerting: AlertingState): boolean {
  return nodes.find((n) => n.isAvailable && !alerting.nodesWithoutAlerts.has(n.id))?.id === selfId;
}

/** Records whether this node runs alerts, when that differs from what global state says. */
export async function publishAlertNode(store: GlobalStore, nodeId: number, runsAlerts: boolean): Promise<void> {
  await store.transact((s) => {
    const same = s.alerting.nodesWithoutAlerts.has(nodeId) === !runsAlerts;
    return { events: same ? [] : [{ type: 'AlertNodeSet', nodeId, runsAlerts }], result: undefined };
  });
}
