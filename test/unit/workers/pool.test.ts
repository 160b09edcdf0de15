/**
 * The worker pools (src/workers/pool.ts) with real piscina threads. Under tap the worker module
 * `./task-worker.js` next to pool.ts resolves to src/workers/task-worker.ts: the workers inherit the
 * test process's TypeScript loader, so no build is needed here.
 *
 * - the background pool (block builds) runs at `backgroundNice`, the foreground pool (ingest,
 *   queries) at the process's own priority, and nothing else of the process is reniced;
 * - `encode()` copies parts that are views into shared buffers into one transferred buffer: the
 *   block is byte for byte the inline encoder's, and the caller's buffers stay usable;
 * - `ingest()` gives back the record the inline pipeline makes, in a buffer of its own;
 * - `prune()` gives the blocks a query's block filters let through, or, when they hold at most
 *   the task's `scanBytes`, its scan of them (what a scan of all the blocks gives), or its error.
 */
import t from 'tap';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { encodeRecord, groupSection, type IngestEvent, type IngestRecord } from '../../../src/events/index.js';
import { InlineBlockEncoder } from '../../../src/digest/block-encoder.js';
import type { BlockPart } from '../../../src/digest/block-parts.js';
import { decodeBlockEvents } from '../../../src/segments/block.js';
import { lz4Codec } from '../../../src/segments/codec.js';
import { runIngestTask, type IngestTask } from '../../../src/ingest/pipeline.js';
import { INLINE_BLOCK_BYTES, WorkerPool } from '../../../src/workers/pool.js';
import { SlabPool } from '../../../src/lib/slab-pool.js';
import { threadNices } from '../../helpers/threads.js';
import { readSegmentInfo } from '../../../src/segments/catalog.js';
import { createLogger } from '../../../src/lib/logger.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';
import { runScanTask } from '../../../src/query/scan.js';
import { makeEvents, segMeta, tempDir, writeSegment } from '../segments/helpers.js';

const T0 = 1_700_000_000_000;

/** Why the nice test cannot run here, or null. */
function niceUnavailable(): string | null {
  if (process.platform !== 'linux' || !existsSync('/proc/self/task')) return 'no /proc/self/task (not Linux): thread nice values cannot be read';
  try {
    // piscina loads it from its own location; resolve it the same way.
    createRequire(createRequire(import.meta.url).resolve('piscina'))('@napi-rs/nice');
  } catch (err) {
    return `@napi-rs/nice cannot load (${(err as Error).message}): piscina runs every thread at normal priority`;
  }
  const base = threadNices().get(process.pid)!;
  if (base > 12) return `this process already runs at nice ${base}: +7 would be capped at 19 and prove nothing`;
  return null;
}

const ev = (label: string, n = 120): IngestEvent => ({ timestamp: T0, timezone: 'Z', rawstring: `${label} ${'x'.repeat(n)}`, fields: { label, n: String(n) } });

function events(prefix: string, count: number): IngestEvent[] {
  return Array.from({ length: count }, (_, i) => ev(`${prefix}-${i}`, 40 + ((i * 37) % 200)));
}

const limits = { maxEventsPerRequest: 100_000, maxEventBytes: 1 << 20, maxFieldsPerEvent: 100, maxJsonDepth: 64 };

function ingestTask(body: string): IngestTask {
  return { kind: 'structured', body: Buffer.from(body), contentEncoding: undefined, maxDecompressedBytes: 64 << 20, limits, parser: null, repositoryId: 'repo-1', at: T0 };
}

function structuredBody(count: number, rawBytes: number): string {
  return JSON.stringify([
    { tags: { host: 'a' }, events: Array.from({ length: count }, (_, i) => ({ timestamp: T0 + i, attributes: { i, k: `v${i % 7}` }, rawstring: `line ${i} ${'r'.repeat(rawBytes)}` })) },
    { tags: { host: 'b' }, events: [{ timestamp: T0, attributes: { only: 'b' }, rawstring: 'the b line' }] },
  ]);
}

t.test('block builds run at backgroundNice; ingest parsing and the rest of the process do not', { skip: niceUnavailable() ?? false }, async (t) => {
  const base = threadNices().get(process.pid)!;
  const before = new Set(threadNices().keys());
  const pool = new WorkerPool({ threads: 1, backgroundNice: 7, inlineBlockBytes: 0 });
  t.teardown(() => pool.close());

  const { payload, summary } = encodeRecord({ repo: 'r', at: T0, groups: [{ ds: 'ds', tags: {}, events: events('n', 50) }] });
  const block = await pool.encode([{ events: new Uint8Array(groupSection(payload, summary, 0)), offset: 0, base: 0, skip: 0, at: T0 }]);
  t.equal(block.meta.eventCount, 50, 'the block task ran (background pool)');
  const ingested = await pool.ingest(ingestTask(structuredBody(20, 50)));
  t.equal(ingested.ok, true, 'the ingest task ran (foreground pool)');

  const after = threadNices();
  t.equal(after.get(process.pid), base, 'the main thread keeps its priority');
  const fresh = [...after].filter(([tid]) => !before.has(tid));
  const niced = fresh.filter(([, nice]) => nice === base + 7);
  t.equal(niced.length, 1, `exactly one new thread (the one background worker) runs at nice ${base + 7}: ${JSON.stringify(fresh)}`);
  // The foreground worker is a new thread too: were it niced, two threads would be at +7.
  t.ok(fresh.length >= 2, `both pools' workers are new threads of this process: ${JSON.stringify(fresh)}`);
  const others = [...after].filter(([tid]) => tid !== niced[0]?.[0]);
  t.strictSame(
    others.filter(([, nice]) => nice !== base),
    [],
    'every other thread (main, foreground worker, libuv, V8) keeps the process priority',
  );
});

t.test('encode(): parts that are views into shared buffers give the inline encoder\'s block, and stay intact', async (t) => {
  const pool = new WorkerPool({ threads: 1, inlineBlockBytes: 0 });
  t.teardown(() => pool.close());

  // Records with one, two and three groups; their sections laid out in one large shared buffer
  // (with padding between them, so the views have odd offsets), plus parts in buffers of their own.
  const recs: IngestRecord[] = [
    { repo: 'r', at: T0, groups: [{ ds: 'a', tags: {}, events: events('r0', 30) }] },
    { repo: 'r', at: T0 + 5, groups: [{ ds: 'b', tags: {}, events: events('r1b', 3) }, { ds: 'a', tags: {}, events: events('r1a', 12) }] },
    { repo: 'r', at: T0 + 9, groups: [{ ds: 'a', tags: {}, events: events('r2a', 7) }, { ds: 'c', tags: {}, events: events('r2c', 2) }, { ds: 'a2', tags: {}, events: events('r2a2', 9) }] },
  ];
  const sections = recs.map((rec) => {
    const { payload, summary } = encodeRecord(rec);
    return rec.groups.map((_, g) => Buffer.from(groupSection(payload, summary, g)));
  });
  const sharedLen = sections.flat().reduce((n, s) => n + s.length + 13, 13);
  const shared = new Uint8Array(sharedLen).fill(0x5a);
  const views: Uint8Array[] = [];
  let at = 13;
  for (const s of sections.flat()) {
    shared.set(s, at);
    views.push(shared.subarray(at, at + s.length));
    at += s.length + 13;
  }
  const [v0, v1b, v1a, v2a, v2c, v2a2] = views as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  const own = (s: Buffer): Uint8Array => new Uint8Array(s); // a standalone copy
  const ownR1a = own(sections[1]![1]!);
  const parts: BlockPart[] = [
    { events: v0, offset: 0, base: 0, skip: 4, at: T0 }, // a replay: the first 4 already durable
    { events: v1b, offset: 1000, base: 0, skip: 0, at: T0 + 5 },
    { events: v1a, offset: 1000, base: 3, skip: 0, at: T0 + 5 },
    { events: ownR1a, offset: 1500, base: 3, skip: 11, at: T0 + 5 },
    { events: v2a, offset: 2000, base: 0, skip: 0, at: T0 + 9 },
    { events: v2c, offset: 2000, base: 7, skip: 0, at: T0 + 9 },
    { events: own(sections[2]![2]!), offset: 2000, base: 9, skip: 0, at: T0 + 9 },
    { events: v2a2, offset: 2500, base: 9, skip: 8, at: T0 + 9 },
  ];
  const sharedBefore = Buffer.from(shared);
  const partsBefore = parts.map((p) => ({ ...p, events: Buffer.from(p.events) }));
  const partObjects = parts.map((p) => p.events);

  const inline = await new InlineBlockEncoder().encode(parts);
  const viaPool = await pool.encode(parts);
  t.ok(viaPool.bytes.equals(inline.bytes), `the same block bytes (${viaPool.bytes.length} vs ${inline.bytes.length})`);
  t.strictSame(viaPool.meta, inline.meta, 'the same block meta');
  const expected = 26 + 3 + 12 + 1 + 7 + 2 + 9 + 1;
  t.equal(viaPool.meta.eventCount, expected, 'skips honoured');
  const stored = decodeBlockEvents(viaPool.bytes, 0, viaPool.meta, lz4Codec);
  t.strictSame(
    stored.map((e) => [e.offset, e.index]),
    [
      ...Array.from({ length: 26 }, (_, i) => [0, 4 + i]),
      [1000, 0],
      [1000, 1],
      [1000, 2],
      ...Array.from({ length: 12 }, (_, i) => [1000, 3 + i]),
      [1500, 14],
      ...Array.from({ length: 7 }, (_, i) => [2000, i]),
      [2000, 7],
      [2000, 8],
      ...Array.from({ length: 9 }, (_, i) => [2000, 9 + i]),
      [2500, 17],
    ],
    'every event at its queue position',
  );
  t.equal(stored[0]!.rawstring.split(' ')[0], 'r0-4');

  // Nothing of the caller's was transferred (detached buffers have length 0) or changed.
  t.equal(shared.buffer.byteLength, sharedLen, 'the shared buffer is not detached');
  t.ok(Buffer.from(shared).equals(sharedBefore), 'the shared buffer is unchanged');
  t.equal(ownR1a.buffer.byteLength, ownR1a.byteLength, 'a standalone part buffer is not detached');
  parts.forEach((p, i) => {
    t.equal(p.events, partObjects[i], `part ${i} still holds its own view`);
    t.ok(Buffer.from(p.events).equals(partsBefore[i]!.events), `part ${i} bytes unchanged`);
  });
  // The same parts can be encoded again (a query snapshot keeps them after the block is built).
  const again = await pool.encode(parts);
  t.ok(again.bytes.equals(inline.bytes), 'a second encode of the same parts gives the same block');
});

t.test('ingest(): the inline pipeline\'s record, in a buffer of its own', async (t) => {
  const pool = new WorkerPool({ threads: 1 });
  t.teardown(() => pool.close());
  // Small (the worker's record sits in Buffer's shared slab: copied out) and large (transferred as is).
  for (const [what, body] of [
    ['small record', structuredBody(2, 10)],
    ['large record', structuredBody(400, 300)],
  ] as const) {
    const inline = runIngestTask(ingestTask(body));
    const task = ingestTask(body);
    const r = await pool.ingest(task);
    if (!inline.ok || !r.ok) {
      t.fail(`${what}: both succeed: ${JSON.stringify([inline, r]).slice(0, 500)}`);
      continue;
    }
    t.ok(r.payload instanceof Uint8Array, `${what}: payload is a Uint8Array`);
    t.ok(Buffer.from(r.payload).equals(Buffer.from(inline.payload)), `${what}: same record bytes (${r.payload.byteLength})`);
    t.strictSame(r.summary, inline.summary, `${what}: same summary`);
    t.equal(r.events, inline.events, `${what}: same event count`);
    t.equal(r.payload.byteOffset, 0, `${what}: starts its buffer`);
    t.equal(r.payload.byteLength, r.payload.buffer.byteLength, `${what}: owns its whole buffer`);
    t.notOk(r.payload.buffer instanceof SharedArrayBuffer, `${what}: not shared memory`);
  }
  t.ok(Buffer.byteLength(structuredBody(400, 300)) > 64 * 1024, 'the large record is not a slab allocation');

  // A body in a pooled shared slab (as the HTTP server reads large ones) is shared, not moved.
  const body = structuredBody(400, 300);
  const slabs = new SlabPool();
  const shared = slabs.acquire(Buffer.byteLength(body))!;
  shared.write(body);
  const fromShared = await pool.ingest({ ...ingestTask(body), body: shared });
  const inline = runIngestTask(ingestTask(body));
  t.ok(fromShared.ok && inline.ok && Buffer.from(fromShared.payload).equals(Buffer.from(inline.payload)), 'a shared body: the same record');
  t.equal(shared.toString(), body, 'the shared body is neither detached nor changed');

  // A refused body comes back as data, not a thrown error.
  const bad = await pool.ingest(ingestTask('[{"events": 5}]'));
  const badInline = runIngestTask(ingestTask('[{"events": 5}]'));
  t.equal(bad.ok, false);
  t.strictSame(bad, badInline, 'the same refusal as inline');
});

t.test('encode(): a small block is built on the calling thread while no background thread runs; larger ones go to the pool', async (t) => {
  const pool = new WorkerPool({ threads: 1 });
  t.teardown(() => pool.close());
  const background = (): number => pool.stats().find((s) => s.pool === 'background')!.threads;
  const partsOf = (count: number): BlockPart[] => {
    const { payload, summary } = encodeRecord({ repo: 'r', at: T0, groups: [{ ds: 'ds', tags: {}, events: events('s', count) }] });
    return [{ events: new Uint8Array(groupSection(payload, summary, 0)), offset: 0, base: 0, skip: 0, at: T0 }];
  };
  const small = partsOf(20);
  t.ok(small[0]!.events.byteLength <= INLINE_BLOCK_BYTES, `the small block's records (${small[0]!.events.byteLength} bytes) are within INLINE_BLOCK_BYTES`);
  const inline = await new InlineBlockEncoder().encode(small);
  const built = await pool.encode(small);
  t.ok(built.bytes.equals(inline.bytes), "the small block is the inline encoder's, byte for byte");
  t.equal(background(), 0, 'no background thread was started for it');

  const large = partsOf(600);
  t.ok(large[0]!.events.byteLength > INLINE_BLOCK_BYTES, `the large block's records (${large[0]!.events.byteLength} bytes) are above INLINE_BLOCK_BYTES`);
  const big = await pool.encode(large);
  t.ok(big.bytes.equals((await new InlineBlockEncoder().encode(large)).bytes), 'the large block is the same from the pool');
  t.equal(background(), 1, 'the large block ran on a background thread');
  // With a background thread running, even a small block goes to it (it is already paid for).
  t.ok((await pool.encode(small)).bytes.equals(inline.bytes), 'a small block while a thread runs: the same bytes');
});

t.test('prune(): on a query thread, the blocks the query\'s filters let through, or their scan; a bad query comes back as its error', async (t) => {
  const dir = await tempDir(t);
  const w = await writeSegment(dir, segMeta('prune'), Array.from({ length: 3 }, (_, b) => makeEvents(40, b * 1000, b * 40)), true);
  const blocks = (await readSegmentInfo(w.path, createLogger('error'), Date.now())).blocks;
  const pool = new WorkerPool({ threads: 1 });
  t.teardown(() => pool.close());
  const ctx = { start: 0, end: 2_000_000_000_000, timeZoneOffsetMinutes: 0, now: 2_000_000_000_000, live: false };
  const task = (text: string, scanBytes = -1) => ({ spec: { text, args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg' as const, path: w.path, partition: 3, tags: {}, blocks }], deadline: Date.now() + 60_000, scanBytes });
  t.same(await pool.prune(task('hello | count()')), { kept: [[0, 1, 2]] }, 'a word every block holds: all of them');
  t.same(await pool.prune(task('five=f45 | tail(10)')), { kept: [[1]] }, 'a value one block holds: that one');
  t.same(await pool.prune(task('nosuchword | count()')), { kept: [[]] }, 'a word none holds: none');
  t.same(await pool.prune(task('count()')), { kept: [null] }, 'no block filters: all');
  const bytes = blocks.reduce((n, b) => n + b.uncompressedLength, 0);
  for (const q of ['five=f45 | tail(10)', '"event 45" or "event 85" | tail(10)', 'hello | count()', 'nosuchword | count()']) {
    const r = await pool.prune(task(q, bytes));
    const whole = runScanTask(task(q));
    if (!('scanned' in r)) t.fail(`${q}: scanned`);
    else t.same([r.scanned.state, r.scanned.matched, r.scanned.blocksRead + r.scanned.blocksSkipped], [whole.state, whole.matched, 3], `${q}: its scan of what the filters let through, as a scan of every block`);
  }
  t.same(await pool.prune(task('hello | count()', bytes - 1)), { kept: [[0, 1, 2]] }, 'more than scanBytes let through: the blocks, not their scan');
  await t.rejects(pool.prune(task('groupBy(')), { code: 'E_QUERY' });
});
