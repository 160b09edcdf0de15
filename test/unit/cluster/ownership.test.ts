/**
 * Ownership as a table: (layout, live nodes, handovers) -> owner per partition. Rows are written by
 * hand; then an exhaustive sweep over every live set and handover phase of a small layout checks the
 * rule's invariants against a direct statement of it.
 */
import t from 'tap';
import { firstLiveHost, handoversNeeded, ownedBy, owners, type Handover, type HandoverPhase } from '../../../src/cluster/ownership.js';

const layout = [
  [1, 2, 3],
  [2, 3, 1],
  [3, 1, 2],
];

interface Row {
  name: string;
  live: number[];
  handovers?: Handover[];
  want: (number | null)[];
}

const rows: Row[] = [
  { name: 'all alive: first host', live: [1, 2, 3], want: [1, 2, 3] },
  { name: 'node 1 dead: next host', live: [2, 3], want: [2, 2, 3] },
  { name: 'node 2 dead', live: [1, 3], want: [1, 3, 3] },
  { name: 'node 3 dead', live: [1, 2], want: [1, 2, 1] },
  { name: 'only node 1', live: [1], want: [1, 1, 1] },
  { name: 'only node 3', live: [3], want: [3, 3, 3] },
  { name: 'nobody alive', live: [], want: [null, null, null] },
  { name: 'an unknown live node changes nothing', live: [1, 2, 3, 9], want: [1, 2, 3] },
  {
    name: 'node 1 back, handover of p0 from 2 in progress: 2 keeps it',
    live: [1, 2, 3],
    handovers: [{ partition: 0, from: 2, to: 1, phase: 'flushing' }],
    want: [2, 2, 3],
  },
  { name: 'handover requested: still the current owner', live: [1, 2, 3], handovers: [{ partition: 0, from: 2, to: 1, phase: 'requested' }], want: [2, 2, 3] },
  { name: 'handover flushed: still the current owner', live: [1, 2, 3], handovers: [{ partition: 0, from: 2, to: 1, phase: 'flushed' }], want: [2, 2, 3] },
  { name: 'handover completed: the first live host', live: [1, 2, 3], handovers: [{ partition: 0, from: 2, to: 1, phase: 'completed' }], want: [1, 2, 3] },
  {
    name: 'the current owner dies mid-handover: the plain rule',
    live: [1, 3],
    handovers: [{ partition: 0, from: 2, to: 1, phase: 'flushing' }],
    want: [1, 3, 3],
  },
  {
    name: 'the receiver dies mid-handover: the current owner keeps it',
    live: [2, 3],
    handovers: [{ partition: 0, from: 2, to: 1, phase: 'flushing' }],
    want: [2, 2, 3],
  },
  {
    name: 'a later completed entry ends an earlier one',
    live: [1, 2, 3],
    handovers: [
      { partition: 0, from: 2, to: 1, phase: 'flushing' },
      { partition: 0, from: 2, to: 1, phase: 'completed' },
    ],
    want: [1, 2, 3],
  },
  { name: 'a handover of a partition outside the layout is ignored', live: [1, 2, 3], handovers: [{ partition: 7, from: 3, to: 1, phase: 'flushing' }], want: [1, 2, 3] },
  {
    name: 'layout change: a node no longer listed keeps it until the handover completes',
    live: [1, 2, 3],
    handovers: [{ partition: 1, from: 9, to: 2, phase: 'flushing' }],
    want: [1, 2, 3],
  },
  {
    name: 'two handovers at once',
    live: [1, 2, 3],
    handovers: [
      { partition: 0, from: 3, to: 1, phase: 'flushing' },
      { partition: 2, from: 1, to: 3, phase: 'requested' },
    ],
    want: [3, 2, 1],
  },
];

t.test('table', async (t) => {
  for (const r of rows) t.strictSame(owners(layout, new Set(r.live), r.handovers ?? []), r.want, r.name);
});

t.test('a live unlisted node keeps a partition it is handing over after a layout change', async (t) => {
  t.strictSame(owners([[1, 2]], new Set([1, 2, 9]), [{ partition: 0, from: 9, to: 1, phase: 'flushed' }]), [9]);
  t.strictSame(owners([[1, 2]], new Set([1, 2]), [{ partition: 0, from: 9, to: 1, phase: 'flushed' }]), [1], 'unless it is dead');
});

t.test('empty layouts and host lists', async (t) => {
  t.strictSame(owners([], new Set([1])), []);
  t.strictSame(owners([[]], new Set([1])), [null]);
  t.equal(firstLiveHost([], new Set([1])), null);
});

t.test('ownedBy', async (t) => {
  t.strictSame(ownedBy([1, 2, 1, null, 1], 1), [0, 2, 4]);
  t.strictSame(ownedBy([null], 1), []);
});

t.test('handoversNeeded: only where a live owner is not the first live host', async (t) => {
  t.strictSame(handoversNeeded(layout, new Set([1, 2, 3]), [2, 2, 3]), [{ partition: 0, from: 2, to: 1, phase: 'requested' }]);
  t.strictSame(handoversNeeded(layout, new Set([1, 2, 3]), [1, 2, 3]), []);
  t.strictSame(handoversNeeded(layout, new Set([1, 3]), [1, 2, 3]), [], 'a dead owner: failover, not handover');
  t.strictSame(handoversNeeded(layout, new Set([1, 2, 3]), [null, undefined as unknown as null, 3]), [], 'no current owner');
  t.strictSame(handoversNeeded([[1, 2]], new Set([1, 2, 9]), [9]), [{ partition: 0, from: 9, to: 1, phase: 'requested' }], 'layout change');
  t.strictSame(handoversNeeded([[1]], new Set([2]), [2]), [], 'no live host to hand to');
});

t.test('exhaustive: every live set x every handover (from, to, phase) of a 3-host partition', async (t) => {
  const hosts = [1, 2, 3];
  const phases: HandoverPhase[] = ['requested', 'flushing', 'flushed', 'completed'];
  let cases = 0;
  for (let mask = 0; mask < 8; mask++) {
    const live = new Set(hosts.filter((_, i) => (mask & (1 << i)) !== 0));
    const plain = hosts.find((h) => live.has(h)) ?? null;
    const hos: (Handover | null)[] = [null];
    for (const from of hosts) for (const to of hosts) if (from !== to) for (const phase of phases) hos.push({ partition: 0, from, to, phase });
    for (const h of hos) {
      cases++;
      const got = owners([hosts], live, h === null ? [] : [h])[0];
      const want = h !== null && h.phase !== 'completed' && live.has(h.from) ? h.from : plain;
      if (got === undefined) t.fail('no entry for the partition');
      else if (got !== want) t.fail(`live=${[...live]} handover=${JSON.stringify(h)}: got ${got}, want ${want}`);
      // Invariants: an owner is always alive; with anyone alive there is an owner.
      if (got !== null && got !== undefined && !live.has(got)) t.fail('dead owner');
      if (live.size > 0 && got === null) t.fail('no owner while a host is alive');
    }
  }
  t.equal(cases, 8 * (1 + 6 * 4));
});
