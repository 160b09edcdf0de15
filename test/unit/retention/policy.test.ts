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

t.test('the cluster-wide bound: time and sizes as one time bound', async (t) => {
  const { retentionBound } = await import('../../../src/retention/index.js');
  const segs = [seg('d', 1, 400), seg('a', 4, 300), seg('c', 2, 200), seg('b', 3, 100)];
  t.equal(retentionBound(segs, NO_RETENTION, NOW), null, 'no limits: no bound');
  t.equal(retentionBound(segs, { ...NO_RETENTION, timeDays: 5 }, NOW), NOW - 5 * DAY_MS, 'time: now minus the limit, whatever the segments');
  t.equal(retentionBound(segs, { ...NO_RETENTION, storageGb: 450 / GB }, NOW), NOW - 2 * DAY_MS + 1, 'storage: just past the newest segment chosen (c)');
  t.equal(retentionBound(segs, { ...NO_RETENTION, timeDays: 3.5, storageGb: 850 / GB }, NOW), NOW - 3.5 * DAY_MS, 'the higher of the kinds: time');
  t.equal(retentionBound(segs, { ...NO_RETENTION, timeDays: 3.5, storageGb: 450 / GB }, NOW), NOW - 2 * DAY_MS + 1, 'the higher of the kinds: storage');
});

t.test('a bound proposed from part of the catalog never passes the whole catalog\'s', async (t) => {
  const { retentionBound } = await import('../../../src/retention/index.js');
  let seed = 7;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < 300; round++) {
    const all = Array.from({ length: 2 + Math.floor(rnd() * 20) }, (_, i) => seg(`s${i}`, rnd() * 30, 1 + Math.floor(rnd() * 1000), rnd() > 0.1));
    const limits = { timeDays: rnd() > 0.5 ? rnd() * 30 : null, storageGb: rnd() > 0.3 ? (rnd() * 8000) / GB : null, ingestGb: rnd() > 0.6 ? (rnd() * 30000) / GB : null };
    const whole = retentionBound(all, limits, NOW) ?? -Infinity;
    const nodeA = all.filter(() => rnd() > 0.5);
    const nodeB = all.filter((s) => !nodeA.includes(s));
    for (const part of [nodeA, nodeB]) {
      const b = retentionBound(part, limits, NOW) ?? -Infinity;
      if (b > whole) t.fail(`round ${round}: a part proposed ${b} past the whole's ${whole}`);
    }
    // The whole's bound deletes exactly what pastRetention picks, ties aside.
    const below = all.filter((s) => s.closed && s.maxTs < whole).map((s) => s.id).sort();
    const picked = pastRetention(all, limits, NOW).sort();
    for (const id of picked) if (!below.includes(id)) t.fail(`round ${round}: ${id} picked but not below the bound`);
  }
  t.pass('300 random catalogs split over two nodes');
});
