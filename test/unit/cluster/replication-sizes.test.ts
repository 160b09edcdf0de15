import t from 'tap';
import { replicationSizes, type SizesInput } from '../../../src/cluster/replication-sizes.js';
import { SegmentHoldings, type SegmentEntry, type StoredSegment } from '../../../src/global/segment-holdings.js';

const seg = (id: string, bytes: number): StoredSegment => ({
  id, repo: 'r', ds: 'd', partition: 0, epoch: 1, writer: 1, file: `r/d/${id}.seg`, bytes, crc: 1, events: bytes / 10, minTs: 0, maxTs: 10,
  firstOffset: 0, firstIndex: 0, lastOffset: 1, lastIndex: 0,
});

/** Segments held as given: id -> [bytes, holders, desired holders]. */
function held(spec: Record<string, [number, number[], number[]]>): SizesInput['segments'] {
  const h = new SegmentHoldings();
  let seq = 0;
  for (const [id, [bytes, holders]] of Object.entries(spec)) for (const n of holders) h.apply({ type: 'SegmentStored', node: n, segment: seg(id, bytes) }, ++seq);
  return Object.entries(spec).map(([id, [, , desired]]) => ({ entry: h.segments.get(id) as SegmentEntry, desired }));
}

const base = { factor: 2, configuredFactor: 2, nodes: [1, 2, 3], partitions: [[1, 2], [2, 3], [3, 1]] };

t.test('every node alive: each segment on two nodes is properly replicated', async (t) => {
  const r = replicationSizes({ ...base, live: new Set([1, 2, 3]), segments: held({ a: [100, [1, 2], [1, 2]], b: [200, [2, 3], [2, 3]] }) });
  t.same(r.cluster.live, { missing: { segments: 0, bytes: 0 }, under: { segments: 0, bytes: 0 }, over: { segments: 0, bytes: 0 }, properly: { segments: 2, bytes: 300 } });
  t.same(r.cluster.target.properly, { segments: 2, bytes: 300 });
  t.same(r.nodes.map((n) => [n.node, n.segments, n.bytes, n.events]), [[1, 1, 100, 10], [2, 2, 300, 30], [3, 1, 200, 20]]);
  t.same(r.nodes.map((n) => n.canBeSafelyUnregistered), [false, false, false], 'each node leaving would leave a segment on one live node');
  t.same(r.nodes.map((n) => n.heldTooFewWithout), [1, 2, 1]);
  t.same(r.nodes.map((n) => n.solitaryBytes), [0, 0, 0]);
});

t.test('a dead holder does not count: its segments are under-replicated, those held by it alone missing', async (t) => {
  const r = replicationSizes({ ...base, live: new Set([1, 3]), segments: held({ a: [100, [1, 2], [1, 2]], b: [200, [2, 3], [2, 3]], c: [50, [2], [2, 3]], d: [7, [1, 3], [3, 1]] }) });
  t.same(r.cluster.live.under, { segments: 2, bytes: 300 });
  t.same(r.cluster.live.missing, { segments: 1, bytes: 50 });
  t.same(r.cluster.live.properly, { segments: 1, bytes: 7 });
  const n2 = r.nodes.find((n) => n.node === 2)!;
  t.equal(n2.solitaryBytes, 50, 'held by node 2 alone');
  t.equal(n2.segments, 3, 'global state still lists what the dead node holds');
  const n3 = r.nodes.find((n) => n.node === 3)!;
  t.equal(n3.inboundBytes, 50, 'node 3 should hold c and lacks it');
  t.equal(n3.targetBytes, 257);
});

t.test('safe to unregister: every segment it holds is on the factor of other live nodes, and it is no partition\'s only host', async (t) => {
  const segments = held({ a: [100, [1, 2, 3], [1, 2]], b: [200, [2, 3], [2, 3]] });
  const r = replicationSizes({ ...base, live: new Set([1, 2, 3]), segments });
  const n1 = r.nodes.find((n) => n.node === 1)!;
  t.equal(n1.canBeSafelyUnregistered, true, 'a is on 2 and 3 as well');
  t.equal(n1.outboundBytes, 0);
  t.equal(r.nodes.find((n) => n.node === 3)!.outboundBytes, 100, 'node 3 holds a surplus copy of a');
  t.same(r.cluster.live.over, { segments: 1, bytes: 100 });
  const dead = replicationSizes({ ...base, live: new Set([1, 2]), segments });
  t.equal(dead.nodes.find((n) => n.node === 1)!.canBeSafelyUnregistered, false, 'not while node 3, one of the other holders, is dead');
  const only = replicationSizes({ ...base, partitions: [[1], [2, 3]], live: new Set([1, 2, 3]), segments });
  t.same(only.nodes.find((n) => n.node === 1)!.onlyHostOf, [0]);
  t.equal(only.nodes.find((n) => n.node === 1)!.canBeSafelyUnregistered, false, 'the only host of partition 0');
  const unregistered = replicationSizes({ ...base, nodes: [2, 3], live: new Set([1, 2, 3]), segments });
  t.equal(unregistered.nodes.find((n) => n.node === 1)!.canBeSafelyUnregistered, false, 'a node not registered cannot be unregistered');
});

t.test('two nodes: without one, a single other live copy is enough', async (t) => {
  const r = replicationSizes({ factor: 2, configuredFactor: 2, nodes: [1, 2], partitions: [[1, 2]], live: new Set([1, 2]), segments: held({ a: [10, [1, 2], [1, 2]] }) });
  t.same(r.nodes.map((n) => n.canBeSafelyUnregistered), [true, true]);
  const down = replicationSizes({ factor: 2, configuredFactor: 2, nodes: [1, 2], partitions: [[1, 2]], live: new Set([1]), segments: held({ a: [10, [1, 2], [1, 2]] }) });
  t.same(down.cluster.live.under, { segments: 1, bytes: 10 }, 'one of two nodes down: visible as under-replicated');
  t.same(down.nodes.map((n) => n.canBeSafelyUnregistered), [false, true], 'node 2 may go (node 1 holds its copy); node 1 may not');
});
