/**
 * The executor over real segment files and real in-memory block parts: every event once when the
 * digest's memory overlaps what segments already hold (the high-water mark decides), pruning by
 * tags and time, tasks split by size, partial states crossing a structured clone as they do to
 * workers, and the time bound.
 */
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBlock, type BlockPart } from '../../../src/digest/block-parts.js';
import { encodeRecord, groupSection } from '../../../src/events/index.js';
import { readBlockMeta } from '../../../src/segments/block.js';
import { SegmentWriter } from '../../../src/segments/segment-writer.js';
import type { SegmentInfo } from '../../../src/segments/catalog.js';
import { bytesInRange, QueryExecutor, segmentRefs, type EventSources } from '../../../src/query/executor.js';
import { pruneScanTask, runScanTask, unitBytes, type PruneTask, type QuerySpec, type ScanTask } from '../../../src/query/scan.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';
import { toJsonRow } from '../../../src/query/results.js';

const T0 = 1_700_000_000_000;

/** One record of `n` events (timestamps T0 + i s) as a block part at queue offset `offset`. */
function part(offset: number, n: number, tags: Record<string, string>, tsBase = T0): BlockPart {
  const events = Array.from({ length: n }, (_, i) => ({ timestamp: tsBase + i * 1000, timezone: 'Z', rawstring: `event ${offset}/${i} status=${i % 2 === 0 ? 200 : 500}`, fields: { status: i % 2 === 0 ? '200' : '500', n: String(i) } }));
  const { payload, summary } = encodeRecord({ repo: 'r1', at: T0, groups: [{ ds: 'ds1', tags, events }] });
  return { events: new Uint8Array(groupSection(payload, summary, 0)), offset, base: 0, skip: 0, at: T0 };
}

const dir = await mkdtemp(join(tmpdir(), 'logsvc-exec-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

// Segment: record at offset 100 (20 events) and one at 200 (20 events), in two blocks.
const w = await SegmentWriter.create(join(dir, 'r1', 'ds1'), { id: 's1', repo: 'r1', ds: 'ds1', tags: { type: 'kv' }, partition: 3, createdAt: T0 });
for (const p of [part(100, 20, { type: 'kv' }), part(200, 20, { type: 'kv' }, T0 + 100_000)]) {
  const bytes = buildBlock([p]);
  await w.append(bytes, readBlockMeta(bytes, 0)!);
}
await w.close(T0);
const seg: SegmentInfo = { path: w.path, meta: w.meta, blocks: w.blocks, closed: true, bytes: w.bytes };

// Memory: the record at 200 again (a block written while still listed as in flight) plus a new one at 300.
const memory = [{ partition: 3, ds: 'ds1', tags: { type: 'kv' }, parts: [part(200, 20, { type: 'kv' }, T0 + 100_000), part(300, 10, { type: 'kv' }, T0 + 200_000)] }];
const sources: EventSources = {
  segments: (repo) => (repo === 'r1' ? [seg] : []),
  memory: (repo) => (repo === 'r1' ? memory : []),
  highWater: (p, ds) => (p === 3 && ds === 'ds1' ? { offset: 200, index: 19 } : null),
};

let tasksRun = 0;
const runner = {
  async scan(task: ScanTask) {
    tasksRun++;
    // As with the worker pool: the task and the result cross a structured clone.
    return structuredClone(runScanTask(structuredClone(task)));
  },
};

const spec = (text: string, start = T0 - 1, end = T0 + 1_000_000): QuerySpec => ({
  text,
  args: {},
  ctx: { start, end, timeZoneOffsetMinutes: 0, now: end, live: false },
  limits: DEFAULT_LIMITS,
});

const run = async (ex: QueryExecutor, text: string, start?: number, end?: number) => {
  const r = ex.start(spec(text, start, end), { id: 'r1', name: 'repo-one' });
  await r.done;
  if (r.error !== null) throw r.error;
  return { run: r, rows: r.outcome!.rows.map(toJsonRow) };
};

const ex = new QueryExecutor({ sources, runner, parallelism: 2, taskBytes: 1, maxQueryMs: 60_000 });

t.test('each event once: memory at or below the high-water mark is left out', async (t) => {
  const { rows } = await run(ex, 'count()');
  t.same(rows, [{ _count: '50' }]);
  const all = await run(ex, 'tail(1000)');
  const ids = all.rows.map((r) => r['@id']);
  t.equal(ids.length, 50);
  t.equal(new Set(ids).size, 50, 'no id twice');
  t.equal(all.rows[0]!['#repo'], 'repo-one', '#repo is the repository name');
  t.equal(all.rows[0]!['#type'], 'kv');
  t.equal(typeof all.rows[0]!['@timestamp'], 'number');
  t.equal(all.run.totalWork, all.run.workDone);
  t.ok(all.run.totalWork >= 3, 'small task size: a task per block or memory unit');
});

t.test('filters, time range and tag pruning', async (t) => {
  t.same((await run(ex, 'status=500 | count()')).rows, [{ _count: '25' }]);
  // Only the first record's 20 events (T0 .. T0+19 s), edges inclusive.
  t.same((await run(ex, 'count()', T0, T0 + 19_000)).rows, [{ _count: '20' }]);
  t.same((await run(ex, 'count()', T0 + 19_000, T0 + 19_000)).rows, [{ _count: '1' }]);
  const before = tasksRun;
  t.same((await run(ex, '#type=accesslog | count()')).rows, [{ _count: '0' }]);
  t.equal(tasksRun, before, 'no datasource matches the tag: nothing scanned');
});

t.test('a query the column summaries may answer runs in one task per thread; others in tasks of task_bytes', async (t) => {
  // The segment alone: two blocks, each a task of its own at task_bytes = 1.
  const only: EventSources = { segments: (repo) => (repo === 'r1' ? [seg] : []), memory: () => [], highWater: () => null };
  const one = new QueryExecutor({ sources: only, runner, parallelism: 1, taskBytes: 1, maxQueryMs: 60_000 });
  const count = async (text: string): Promise<{ tasks: number; rows: Record<string, unknown>[] }> => {
    const before = tasksRun;
    const { rows } = await run(one, text);
    return { tasks: tasksRun - before, rows };
  };
  t.same(await count('status=500 | groupBy(status)'), { tasks: 1, rows: [{ status: '500', _count: '20' }] }, 'summaries may answer it: one task for the one thread');
  t.same(await count('status=500 | n:=status | groupBy(status)'), { tasks: 2, rows: [{ status: '500', _count: '20' }] }, 'a stage between: a task per block');
  t.same(await count('event | count()'), { tasks: 2, rows: [{ _count: '40' }] }, 'free text: a task per block');
});

t.test('a query the block filters may prune: a first round that checks them, then tasks of what they let through, the same answers', async (t) => {
  let pruneTasks = 0;
  let scannedFirst = 0;
  const pruning = {
    scan: runner.scan,
    async prune(task: PruneTask) {
      pruneTasks++;
      const r = structuredClone(pruneScanTask(structuredClone(task)));
      if ('scanned' in r) scannedFirst++;
      return r;
    },
  };
  // task_bytes 1: every block and memory unit is a task, and a first-round task scans only when
  // nothing is let through. The segment alone at its smaller block's bytes: two tasks, and the
  // first-round task scans the smaller block when only that one is let through.
  const only: EventSources = { segments: (repo) => (repo === 'r1' ? [seg] : []), memory: () => [], highWater: () => null };
  const [b0, b1] = seg.blocks.map((b) => unitBytes({ kind: 'seg', path: seg.path, partition: 3, tags: {}, blocks: [b] }));
  const smaller = b0! <= b1! ? 100 : 200;
  const queries = [`"event ${smaller}/5" | tail(1000)`, 'event | count()', 'nosuchword | count()', 'status=500 | n:=status | tail(1000)', '"300/4" or "100/7" | tail(1000)', '"event 200/3" | count()', 'count()'];
  for (const [from, taskBytes] of [[sources, 1], [only, Math.min(b0!, b1!)]] as const) {
    const withPrune = new QueryExecutor({ sources: from, runner: pruning, parallelism: 1, taskBytes, maxQueryMs: 60_000 });
    const plain = new QueryExecutor({ sources: from, runner, parallelism: 1, taskBytes, maxQueryMs: 60_000 });
    for (const q of queries) {
      const before = tasksRun;
      const first = scannedFirst;
      const a = await run(withPrune, q);
      const scanned = tasksRun - before;
      const b = await run(plain, q);
      t.same(a.rows, b.rows, `${q}, task_bytes ${taskBytes}: the same answer`);
      t.equal(a.run.totalWork, a.run.workDone, `${q}: all work done`);
      if (q === queries[0]) {
        if (taskBytes === 1) t.ok(scanned < tasksRun - before - scanned, `${q}: fewer scan tasks (${scanned})`);
        else t.same([scanned, scannedFirst - first, a.rows.length], [0, 1, 1], `${q}: scanned by the first-round task, no scan task after it`);
      }
    }
  }
  t.ok(pruneTasks > 0 && scannedFirst > 0, 'first-round tasks ran, some scanned what they let through');
  const n = pruneTasks;
  await run(new QueryExecutor({ sources, runner: pruning, parallelism: 1, taskBytes: 1, maxQueryMs: 60_000 }), 'count()');
  t.equal(pruneTasks, n, 'a query without block filters is not pruned first');
});

t.test('the time bound stops a query with a clear error', async (t) => {
  const slow = new QueryExecutor({ sources, runner, parallelism: 1, taskBytes: 1, maxQueryMs: -1 });
  const r = slow.start(spec('count()'), { id: 'r1', name: 'repo-one' });
  await r.done;
  t.match(r.error, { code: 'E_QUERY_LIMIT', message: /max_query_seconds/ });
});

t.test('a bad query fails at start with E_QUERY', async (t) => {
  t.throws(() => ex.start(spec('count(('), { id: 'r1', name: 'repo-one' }), { code: 'E_QUERY' });
});

t.test("a live query's boundary: events at or past it are left out, inside a block too", async (t) => {
  // Partition 4: one block of two records (offsets 400 and 401), so a boundary at 401 falls inside it.
  const w4 = await SegmentWriter.create(join(dir, 'r1', 'ds4'), { id: 's4', repo: 'r1', ds: 'ds4', tags: { type: 'kv' }, partition: 4, createdAt: T0 });
  const bytes = buildBlock([part(400, 5, { type: 'kv' }), part(401, 7, { type: 'kv' }, T0 + 10_000)]);
  await w4.append(bytes, readBlockMeta(bytes, 0)!);
  await w4.close(T0);
  const seg4: SegmentInfo = { path: w4.path, meta: w4.meta, blocks: w4.blocks, closed: true, bytes: w4.bytes };
  const cutSources: EventSources = { ...sources, segments: (repo) => (repo === 'r1' ? [seg, seg4] : []) };
  const cutEx = new QueryExecutor({ sources: cutSources, runner, parallelism: 2, taskBytes: 1, maxQueryMs: 60_000 });
  const cut = async (text: string, below: number[]) => {
    const r = cutEx.start({ ...spec(text), below }, { id: 'r1', name: 'repo-one' });
    await r.done;
    if (r.error !== null) throw r.error;
    return r.outcome!.rows.map(toJsonRow);
  };
  t.same(await cut('count()', []), [{ _count: '0' }], 'partitions past the list: all left out');
  t.same(await cut('count()', [0, 0, 0, 1000, 1000]), [{ _count: '62' }], 'everything below the boundary');
  // Partition 3: the block at 200 and the memory part at 300 are past 200; partition 4: the record at 401.
  t.same(await cut('count()', [0, 0, 0, 200, 401]), [{ _count: '25' }], 'count() is answered neither from the header nor from the column summaries of a cut block');
  const ids = (await cut('tail(1000)', [0, 0, 0, 200, 401])).map((r) => String(r['@id']));
  t.equal(ids.length, 25);
  t.equal(new Set(ids).size, 25, 'no id twice');
  t.same((await cut('count()', [0, 0, 0, 301, 400])), [{ _count: '50' }], 'memory below the boundary is read (above the high-water mark)');
  t.same((await cut('n=3 | count()', [0, 0, 0, 0, 401])), [{ _count: '1' }], 'a filter over the rows kept of a cut block');
});

t.test("a segment's block refs are shared between snapshots: a growing list does not change a snapshot taken before", async (t) => {
  // An open segment: its block list grows after a query's snapshot.
  const blocks = [seg.blocks[0]!];
  const open: SegmentInfo = { ...seg, blocks, closed: false };
  const growing = new QueryExecutor({ sources: { ...sources, segments: () => [open], memory: () => [] }, runner, parallelism: 2, taskBytes: 1, maxQueryMs: 60_000 });
  const first = growing.start(spec('tail(1000)'), { id: 'r1', name: 'repo-one' });
  const refsBefore = segmentRefs(blocks).refs;
  blocks.push(seg.blocks[1]!);
  await first.done;
  t.equal(first.outcome!.rows.length, 20, 'the snapshot holds the one block it saw');
  t.equal(refsBefore.length, 1, 'the refs handed out before the list grew stay as they were');
  t.same((await run(growing, 'count()')).rows, [{ _count: '40' }], 'a later query sees both blocks');
  t.equal(segmentRefs(blocks).refs.length, 2);
  t.equal(segmentRefs(blocks).refs[0], refsBefore[0], 'the first block keeps its ref');
  // Per-block filtering where a segment is partly in range, whole sums where it is wholly in it.
  const perBlock = (start: number, end: number): number => seg.blocks.filter((b) => b.maxTs >= start && b.minTs <= end).reduce((n, b) => n + b.uncompressedLength, 0);
  for (const [start, end] of [[T0 - 1, T0 + 1_000_000], [T0, T0 + 19_000], [T0 + 50_000, T0 + 200_000], [T0 + 500_000, T0 + 600_000]] as const) {
    t.equal(bytesInRange([seg], start, end), perBlock(start, end), `bytes in [${start - T0}, ${end - T0}]`);
  }
});

t.test('count() and time histograms answered from headers (a whole segment at once or block by block) agree with the same events read from memory', async (t) => {
  const fromSegment = new QueryExecutor({ sources: { ...sources, segments: () => [seg], memory: () => [] }, runner, parallelism: 2, taskBytes: 1, maxQueryMs: 60_000 });
  const sameInMemory = [{ partition: 3, ds: 'ds1', tags: { type: 'kv' }, parts: [part(100, 20, { type: 'kv' }), part(200, 20, { type: 'kv' }, T0 + 100_000)] }];
  const fromMemory = new QueryExecutor({ sources: { segments: () => [], memory: () => sameInMemory, highWater: () => null }, runner, parallelism: 2, taskBytes: 1, maxQueryMs: 60_000 });
  let seed = 7;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const ranges: [number, number][] = [[T0 - 1, T0 + 1_000_000], [T0, T0 + 119_000]];
  for (let i = 0; i < 20; i++) {
    const a = T0 - 10_000 + rand(140_000);
    ranges.push([a, a + rand(140_000)]);
  }
  for (const [start, end] of ranges) {
    for (const q of ['count()', 'timechart(span=1h)', 'timechart(span=10m)', 'timechart(span=1m)', 'timechart(span=10s)']) {
      t.same((await run(fromSegment, q, start, end)).rows, (await run(fromMemory, q, start, end)).rows, `${q} over [${start - T0}, ${end - T0}]`);
    }
  }
});

t.test('snapshot order: the digest memory first, then segments newest first, ties in the list order; a segment grown or cut by the range is placed anew', async (t) => {
  // Segments that are never read (the runner only notes the order of the units it is given).
  const fake = (id: string, spans: [number, number][]): SegmentInfo => ({
    path: `/nowhere/${id}.seg`,
    meta: { ...seg.meta, id },
    blocks: spans.map(([minTs, maxTs], i) => ({ ...seg.blocks[0]!, pos: 100 * i, minTs, maxTs })),
    closed: true,
    bytes: 1,
  });
  const list = [fake('a', [[T0, T0 + 10]]), fake('b', [[T0 + 50, T0 + 60]]), fake('c', [[T0, T0 + 10]]), fake('d', [[T0 + 20, T0 + 30], [T0 + 70, T0 + 80]]), fake('e', [[T0 + 40, T0 + 45]])];
  const mem = [{ partition: 3, ds: 'ds1', tags: { type: 'kv' }, parts: [part(900, 2, { type: 'kv' })] }];
  const seen: string[][] = [];
  const noting = {
    async scan(task: ScanTask) {
      seen.push(task.units.map((u) => (u.kind === 'seg' ? u.path.slice(9, -4) : 'mem')));
      return { state: { rows: [], n: 0 }, events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
    },
  };
  const from: EventSources = { segments: () => list, memory: () => mem, highWater: () => null };
  const ex = new QueryExecutor({ sources: from, runner: noting, parallelism: 1, taskBytes: Number.MAX_SAFE_INTEGER, maxQueryMs: 60_000 });
  const order = async (start = T0 - 1, end = T0 + 1_000_000): Promise<string[]> => {
    seen.length = 0;
    const r = ex.start(spec('tail(1)', start, end), { id: 'r1', name: 'repo-one' });
    await r.done;
    return seen.flat();
  };
  t.same(await order(), ['mem', 'd', 'b', 'e', 'a', 'c'], 'newest first; a and c tie: list order');
  t.same(await order(), ['mem', 'd', 'b', 'e', 'a', 'c'], 'asked again: the same');
  t.same(await order(T0 - 1, T0 + 55), ['mem', 'b', 'e', 'd', 'a', 'c'], 'a range that cuts d and b: d placed by its blocks in range');
  // An open segment's block list grows in place (the same list): c now holds the newest block.
  (list[2]!.blocks as unknown as object[]).push({ ...list[2]!.blocks[0]!, pos: 500, minTs: T0 + 85, maxTs: T0 + 90 });
  t.same(await order(), ['mem', 'c', 'd', 'b', 'e', 'a'], 'a grown segment moves up');
  t.same(await order(), ['mem', 'c', 'd', 'b', 'e', 'a'], 'and stays there');
});
