import t from 'tap';
import { chooseHolder, desiredHolders, entirelyVoid, readsHere, sufficientlyHeld, type Placement } from '../../../src/cluster/placement.js';
import { SegmentHoldings, type StoredSegment } from '../../../src/global/segment-holdings.js';

const seg = (id: string, over: Partial<StoredSegment> = {}): StoredSegment => ({
  id, repo: 'r', ds: 'd', partition: 0, epoch: 1, writer: 1, file: `r/d/${id}.seg`, bytes: 10, crc: 1, events: 5, minTs: 0, maxTs: 10,
  firstOffset: 100, firstIndex: 0, lastOffset: 200, lastIndex: 3, ...over,
});

t.test('holders are stamped with sequence numbers and asked as of one', async (t) => {
  const h = new SegmentHoldings();
  h.apply({ type: 'SegmentStored', node: 1, segment: seg('a') }, 10);
  h.apply({ type: 'SegmentStored', node: 2, segment: seg('a') }, 12);
  h.apply({ type: 'SegmentStored', node: 2, segment: seg('a') }, 13); // again: no change
  t.strictSame(h.holdersAt('a', 9), [], 'before it was listed');
  t.strictSame(h.holdersAt('a', 11), [1]);
  t.strictSame(h.holdersAt('a', 12), [1, 2]);
  h.apply({ type: 'SegmentDropped', node: 1, id: 'a', reason: 'checksum' }, 20);
  t.strictSame(h.holdersAt('a', 19), [1, 2], 'as of before the drop');
  t.strictSame(h.holdersAt('a'), [2], 'now');
  t.equal(h.ofRepository('r').length, 1);
  const copy = new SegmentHoldings();
  copy.loadSnapshot(h.toSnapshot());
  t.strictSame(copy.holdersAt('a', 19), [1, 2], 'a snapshot keeps the stamps');
  h.apply({ type: 'SegmentDropped', node: 2, id: 'a', reason: 'deleted' }, 21);
  t.equal(h.segments.size, 0, 'a segment nobody holds is forgotten');
  t.strictSame(h.ofRepository('r'), []);
});

t.test('each listed segment is read by exactly one live holder, the coordinator when it holds it', async (t) => {
  const h = new SegmentHoldings();
  for (let i = 0; i < 50; i++) {
    h.apply({ type: 'SegmentStored', node: 1 + (i % 3), segment: seg(`s${i}`) }, i * 2 + 1);
    h.apply({ type: 'SegmentStored', node: 1 + ((i + 1) % 3), segment: seg(`s${i}`) }, i * 2 + 2);
  }
  const p: Placement = { seq: 1000, coordinator: 1, live: [1, 2, 3] };
  for (const e of h.segments.values()) {
    const readers = [1, 2, 3].filter((n) => readsHere(n, { id: e.segment.id, writer: e.segment.writer }, e, p) && [...e.holders.keys()].includes(n));
    t.equal(readers.length, 1, `${e.segment.id} read once`);
    if (e.holders.has(1)) t.strictSame(readers, [1], 'by the coordinator when it holds it');
  }
  const dead: Placement = { seq: 1000, coordinator: 2, live: [2] };
  t.equal(chooseHolder('x', [1, 3], dead), null, 'no live holder: nobody');
  t.equal(chooseHolder('x', [1, 3, 2], dead), 2);
  // Not listed as of the placement: only its writer reads it (a copy that just arrived is not read twice).
  const late = h.segments.get('s0')!;
  const early: Placement = { seq: 0, coordinator: 3, live: [1, 2, 3] };
  t.equal(readsHere(1, { id: 's0', writer: 1 }, late, early), true, 'the writer reads its unlisted segment');
  t.equal(readsHere(2, { id: 's0', writer: 1 }, late, early), false, 'a copy elsewhere is not read');
  t.equal(readsHere(2, { id: 'old' }, undefined, early), true, 'a segment from before replication is read where it is');
});

t.test('desired holders follow the partition hosts, then the others, skipping unavailable nodes', async (t) => {
  t.strictSame(desiredHolders([2, 3, 1], [1, 2, 3, 4], 2, () => true), [2, 3]);
  t.strictSame(desiredHolders([2, 3, 1], [1, 2, 3, 4], 2, (n) => n !== 3), [2, 1]);
  t.strictSame(desiredHolders([2], [1, 2, 3, 4], 3, () => true), [2, 1, 3], 'then every other node by id');
  t.strictSame(desiredHolders([2, 3, 1], [1, 2, 3], 2, () => true, new Set([2])), [3, 1], 'a draining node comes last');
});

t.test('sufficiently held: the factor of live nodes, or every live node when fewer are up', async (t) => {
  t.equal(sufficientlyHeld([1, 2], 2, [1, 2, 3]), true);
  t.equal(sufficientlyHeld([1], 2, [1, 2, 3]), false);
  t.equal(sufficientlyHeld([1, 2], 2, [1, 3]), false, 'a dead holder does not count');
  t.equal(sufficientlyHeld([1, 2, 3], 2, [1, 3]), true, 'two live holders of three');
  t.equal(sufficientlyHeld([1], 2, [1]), true, 'alone: held by every live node');
  t.equal(sufficientlyHeld([2], 2, [1]), false, 'but not when the live node lacks it');
});

t.test('entirely void: an ended epoch whose marks stop before the segment', async (t) => {
  t.equal(entirelyVoid(seg('a'), undefined), false, 'a running epoch');
  t.equal(entirelyVoid(seg('a'), new Map([['d', { offset: 150, index: 0 }]])), false, 'partly kept');
  t.equal(entirelyVoid(seg('a'), new Map([['d', { offset: 99, index: 9 }]])), true);
  t.equal(entirelyVoid(seg('a'), new Map()), true, 'no mark for its datasource');
});
