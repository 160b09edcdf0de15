import t from 'tap';
import { DAY_MS, GB, effectiveRetention, oldestToFree, pastRetention, type SegmentStat } from '../../../src/retention/index.js';
import { NO_RETENTION } from '../../../src/global/index.js';

const NOW = 1_800_000_000_000;
const seg = (id: string, ageDays: number, bytes: number, closed = true, uncompressed = bytes * 4): SegmentStat => ({ id, maxTs: NOW - ageDays * DAY_MS, bytes, uncompressed, closed });

t.test('time retention: a segment goes when its newest event is older than the limit', async (t) => {
  const segs = [seg('old', 10, 100), seg('edge', 5, 100), seg('new', 1, 100), seg('old-open', 20, 100, false)];
  t.strictSame(pastRetention(segs, { ...NO_RETENTION, timeDays: 5 }, NOW).sort(), ['old']);
  t.strictSame(pastRetention(segs, { ...NO_RETENTION, timeDays: 0.5 }, NOW).sort(), ['edge', 'new', 'old'], 'fractional days');
  t.strictSame(pastRetention(segs, NO_RETENTION, NOW), [], 'no limits: nothing');
});

t.test('storage retention: oldest first until the stored bytes are within the limit', async (t) => {
  const segs = [seg('d', 1, 400), seg('a', 4, 300), seg('c', 2, 200), seg('b', 3, 100)];
  // total 1000 bytes; limit 450 bytes: a (300) then b (100) then c (200) -> 400 left.
  t.strictSame(pastRetention(segs, { ...NO_RETENTION, storageGb: 450 / GB }, NOW), ['a', 'b', 'c']);
  t.strictSame(pastRetention(segs, { ...NO_RETENTION, storageGb: 1000 / GB }, NOW), [], 'exactly at the limit: kept');
  const withOpen = [seg('a', 4, 300, false), seg('b', 3, 100)];
  t.strictSame(pastRetention(withOpen, { ...NO_RETENTION, storageGb: 1 / GB }, NOW), ['b'], 'an open segment counts but is not chosen');
});

t.test('ingest-size retention counts bytes before compression; kinds combine', async (t) => {
  const segs = [seg('a', 9, 10, true, 500), seg('b', 8, 10, true, 500), seg('c', 1, 10, true, 500)];
  t.strictSame(pastRetention(segs, { ...NO_RETENTION, ingestGb: 1000 / GB }, NOW), ['a']);
  t.strictSame(pastRetention(segs, { timeDays: 8.5, ingestGb: 600 / GB, storageGb: null }, NOW), ['a', 'b'], 'time takes a, size then b');
});

t.test('the node default fills in each kind a repository leaves unset', async (t) => {
  t.strictSame(effectiveRetention({ timeDays: 3, ingestGb: null, storageGb: null }, { timeDays: 30, ingestGb: 5, storageGb: null }), { timeDays: 3, ingestGb: 5, storageGb: null });
});

t.test('disk watermark: the oldest closed segments of any size until enough is freed', async (t) => {
  const segs = [seg('new', 1, 100), seg('oldest', 9, 50), seg('open', 20, 999, false), seg('mid', 5, 70)];
  t.strictSame(oldestToFree(segs, 60), ['oldest', 'mid']);
  t.strictSame(oldestToFree(segs, 0), []);
});
