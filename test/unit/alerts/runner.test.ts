/** The alert runner is the lowest-numbered live node whose config runs alerts; the setting survives a snapshot. */
import t from 'tap';
import { isAlertRunner } from '../../../src/alerts/runner.js';
import { GlobalState } from '../../../src/global/index.js';

const nodes = [
  { id: 1, isAvailable: true },
  { id: 2, isAvailable: true },
  { id: 3, isAvailable: true },
];

t.test('a node with alerts switched off is never the runner; the next live one is', async (t) => {
  const s = new GlobalState();
  t.equal(isAlertRunner(1, nodes, s.alerting), true, 'by default the lowest live node');
  t.equal(isAlertRunner(2, nodes, s.alerting), false);
  s.apply({ type: 'AlertNodeSet', nodeId: 1, runsAlerts: false }, 1);
  t.equal(isAlertRunner(1, nodes, s.alerting), false, 'node 1 has alerts.enabled = false');
  t.equal(isAlertRunner(2, nodes, s.alerting), true, 'node 2 runs them');
  t.equal(isAlertRunner(3, [{ id: 1, isAvailable: true }, { id: 2, isAvailable: false }, { id: 3, isAvailable: true }], s.alerting), true, 'skipping a node that is down');

  const copy = GlobalState.fromSnapshot(s.toSnapshot());
  t.equal(isAlertRunner(2, nodes, copy.alerting), true, 'the setting survives a snapshot');
  s.apply({ type: 'AlertNodeSet', nodeId: 1, runsAlerts: true }, 2);
  t.equal(isAlertRunner(1, nodes, s.alerting), true, 'switched on again');
  t.strictSame(s.toSnapshot().alerting, { alerts: [], actions: [], runtime: [] }, 'nothing in the snapshot when every node runs alerts');
});
