import t from 'tap';
import { GlobalState, MAX_THROTTLE_VALUES, type AlertDefinition, type GlobalEvent } from '../../../src/global/index.js';

const alert = (o: Partial<AlertDefinition> = {}): AlertDefinition => ({
  id: 'al1',
  repositoryId: 'r1',
  name: 'errors',
  description: '',
  queryString: 'level=ERROR',
  queryStart: '1h',
  throttleTimeMillis: 1000,
  throttleField: 'host',
  silenced: false,
  actions: ['ac1', 'ac2'],
  labels: ['l'],
  ownership: { kind: 'user', userId: 'u1' },
  createdAt: 5,
  ...o,
});

function state(...events: GlobalEvent[]): GlobalState {
  const s = new GlobalState();
  const base: GlobalEvent[] = [
    { type: 'RepositoryCreated', id: 'r1', name: 'web', description: '', at: 1 },
    { type: 'RepositoryCreated', id: 'r2', name: 'db', description: '', at: 2 },
    { type: 'ActionSaved', action: { id: 'ac1', repositoryId: 'r1', name: 'hook', kind: 'webhook', sealed: 'S1', createdAt: 3 } },
    { type: 'ActionSaved', action: { id: 'ac2', repositoryId: 'r1', name: 'mail', kind: 'email', sealed: 'S2', createdAt: 4 } },
    { type: 'ActionSaved', action: { id: 'ac3', repositoryId: 'r2', name: 'other', kind: 'slack', sealed: 'S3', createdAt: 4 } },
    { type: 'AlertSaved', alert: alert() },
  ];
  for (const e of [...base, ...events]) s.apply(e, s.seq + 1);
  return s;
}

t.test('saved alerts and actions, per repository; a new alert has empty runtime state', async (t) => {
  const s = state();
  t.strictSame(s.alerting.alertsOf('r1').map((a) => a.id), ['al1']);
  t.strictSame(s.alerting.actionsOf('r1').map((a) => a.id), ['ac1', 'ac2']);
  t.strictSame(s.alerting.actionsOf('r2').map((a) => a.id), ['ac3']);
  t.strictSame(s.alerting.runtime.get('al1'), { lastTriggeredAt: null, throttled: new Map(), lastError: null, lastErrorAt: null, lastErrorFromActions: false });
});

t.test('the model keeps its own copy of a saved alert', async (t) => {
  const a = alert();
  const s = state({ type: 'AlertSaved', alert: a });
  a.actions.push('zzz');
  a.labels.length = 0;
  t.strictSame(s.alerting.alerts.get('al1')!.actions, ['ac1', 'ac2']);
  t.strictSame(s.alerting.alerts.get('al1')!.labels, ['l']);
});

t.test('AlertTriggered: last trigger, values held, expired values pruned, the oldest forgotten beyond the cap', async (t) => {
  const s = state({ type: 'AlertTriggered', id: 'al1', at: 100, values: ['a', 'b'] }, { type: 'AlertTriggered', id: 'al1', at: 600, values: ['c', 'a'] });
  const rt = s.alerting.runtime.get('al1')!;
  t.equal(rt.lastTriggeredAt, 600);
  t.strictSame([...rt.throttled], [['b', 100], ['c', 600], ['a', 600]], 'a re-triggered value moves to the young end');
  s.apply({ type: 'AlertTriggered', id: 'al1', at: 1100, values: ['d'] }, s.seq + 1);
  t.strictSame([...rt.throttled], [['c', 600], ['a', 600], ['d', 1100]], 'b (100 + 1000 <= 1100) is pruned');
  s.apply({ type: 'AlertTriggered', id: 'al1', at: 1200 }, s.seq + 1);
  t.equal(rt.lastTriggeredAt, 1200, 'a whole-alert trigger only moves the time');
  t.equal(rt.throttled.size, 3);

  const many = Array.from({ length: MAX_THROTTLE_VALUES + 3 }, (_, i) => `v${i}`);
  s.apply({ type: 'AlertTriggered', id: 'al1', at: 1300, values: many }, s.seq + 1);
  t.equal(rt.throttled.size, MAX_THROTTLE_VALUES);
  t.equal(rt.throttled.has('c'), false, 'the oldest go first');
  t.equal(rt.throttled.has(`v${MAX_THROTTLE_VALUES + 2}`), true);
});

t.test('AlertErrorSet and AlertSaved: an update clears the error, and the held values when the field changes', async (t) => {
  const s = state({ type: 'AlertTriggered', id: 'al1', at: 100, values: ['a'] }, { type: 'AlertErrorSet', id: 'al1', error: 'boom', at: 150 });
  const rt = s.alerting.runtime.get('al1')!;
  t.strictSame([rt.lastError, rt.lastErrorAt], ['boom', 150]);
  s.apply({ type: 'AlertSaved', alert: alert({ name: 'renamed' }) }, s.seq + 1);
  t.strictSame([rt.lastError, rt.lastErrorAt], [null, null]);
  t.equal(rt.throttled.size, 1, 'same field: values kept');
  t.equal(rt.lastTriggeredAt, 100, 'the last trigger is kept');
  s.apply({ type: 'AlertSaved', alert: alert({ throttleField: 'user' }) }, s.seq + 1);
  t.equal(rt.throttled.size, 0, 'another field: the old values mean nothing');
  s.apply({ type: 'AlertErrorSet', id: 'al1', error: null, at: 200 }, s.seq + 1);
  t.strictSame([rt.lastError, rt.lastErrorAt], [null, null]);
});

t.test('deleting an action removes it from alerts; deleting an alert its runtime; a repository takes its own', async (t) => {
  const s = state({ type: 'ActionDeleted', id: 'ac1' });
  t.strictSame(s.alerting.alerts.get('al1')!.actions, ['ac2']);
  t.equal(s.alerting.actions.has('ac1'), false);
  s.apply({ type: 'RepositoryDeleted', id: 'r1' }, s.seq + 1);
  t.equal(s.alerting.alerts.size, 0);
  t.equal(s.alerting.runtime.size, 0);
  t.strictSame([...s.alerting.actions.keys()], ['ac3'], "another repository's actions stay");
  const d = state({ type: 'AlertDeleted', id: 'al1' });
  t.equal(d.alerting.alerts.size + d.alerting.runtime.size, 0);
});

t.test('events naming missing things change nothing', async (t) => {
  const s = state();
  const before = JSON.stringify(s.alerting.toSnapshot());
  for (const e of [
    { type: 'AlertTriggered', id: 'nope', at: 1, values: ['x'] },
    { type: 'AlertErrorSet', id: 'nope', error: 'x', at: 1 },
    { type: 'AlertDeleted', id: 'nope' },
    { type: 'ActionDeleted', id: 'nope' },
  ] as GlobalEvent[]) {
    s.apply(e, s.seq + 1);
  }
  t.equal(JSON.stringify(s.alerting.toSnapshot()), before);
});

t.test('snapshots carry everything, runtime included; snapshots without alerting load empty', async (t) => {
  const s = state({ type: 'AlertTriggered', id: 'al1', at: 100, values: ['a', 'b'] }, { type: 'AlertErrorSet', id: 'al1', error: 'e', at: 120 });
  const copy = GlobalState.fromSnapshot(s.toSnapshot());
  t.strictSame(copy.alerting.toSnapshot(), s.alerting.toSnapshot());
  t.strictSame([...copy.alerting.runtime.get('al1')!.throttled], [['a', 100], ['b', 100]]);
  const { alerting: _a, ...old } = s.toSnapshot();
  const fromOld = GlobalState.fromSnapshot(old);
  t.equal(fromOld.alerting.alerts.size, 0);
});
