import t from 'tap';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Digest, InlineBlockEncoder, type DigestSettings } from '../../../src/digest/index.js';
import { EmbeddedDigestQueue, type DigestQueue, type DurableRecord, type FollowHandle, type QueueRecord } from '../../../src/queue/index.js';
import { SegmentCatalog } from '../../../src/segments/catalog.js';
import { encodeRecord, type IngestRecord } from '../../../src/events/index.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { ev, expectedKeys, group, keysOf, readSegments, record, settings, storedEvents, T0, tempDir } from './helpers.js';

interface Rig {
  q: EmbeddedDigestQueue;
  cat: SegmentCatalog;
  digest: Digest;
  fatal: Error[];
  clock: ManualClock;
}

async function rig(root: string, opts: { partitions?: number; fileBytes?: number; settings?: Partial<DigestSettings>; budget?: number; loadCatalog?: boolean; queue?: (q: EmbeddedDigestQueue) => DigestQueue } = {}): Promise<Rig> {
  const fatal: Error[] = [];
  const q = await EmbeddedDigestQueue.open({
    dir: join(root, 'queue'),
    partitions: opts.partitions ?? 1,
    logger: silentLogger,
    ...(opts.fileBytes === undefined ? {} : { fileBytes: opts.fileBytes }),
    onFatal: (e) => fatal.push(e),
  });
  const segDir = join(root, 'segments');
  const clock = new ManualClock(T0);
  const cat = opts.loadCatalog === true ? await SegmentCatalog.load(segDir, silentLogger, clock.now()) : new SegmentCatalog(segDir);
  const digest = new Digest({
    dataDir: root,
    queue: opts.queue === undefined ? q : opts.queue(q),
    catalog: cat,
    encoder: new InlineBlockEncoder(),
    clock,
    logger: silentLogger,
    settings: settings(segDir, { flushBlockMs: 3_600_000, ...opts.settings }),
    openBlockBudgetBytes: opts.budget ?? 64 * 1024 * 1024,
    sealUndigestedAboveBytes: 1024 * 1024 * 1024,
    onLatency: () => undefined,
    onFatal: (e) => fatal.push(e),
  });
  return { q, cat, digest, fatal, clock };
}

/** One turn of the event loop: the queue announces durable records on setImmediate, after the ack. */
const notified = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Appends a record with its decoded form attached (as ingest does); resolves with its offset once the
 * queue's durable-append notification (which feeds the digest) has been delivered.
 */
async function append(q: EmbeddedDigestQueue, partition: number, rec: IngestRecord): Promise<number> {
  const enc = encodeRecord(rec);
  const offset = await q.append(partition, enc.payload, enc.summary);
  await notified();
  return offset;
}

const checkpoints = async (root: string): Promise<unknown> => JSON.parse(await readFile(join(root, 'digest', 'checkpoints.json'), 'utf8'));

async function until(cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

t.test('appended records are digested through onDurable; stop() writes blocks and persists checkpoints.json', async (t) => {
  const root = await tempDir(t);
  const { q, digest, cat, fatal } = await rig(root, { partitions: 3, settings: { blockTargetBytes: 1e9 } });
  await digest.start([0, 1]);
  t.equal(digest.owns(0), true);
  t.equal(digest.owns(2), false);
  const sent: { partition: number; offset: number; rec: IngestRecord }[] = [];
  for (let i = 0; i < 20; i++) {
    const partition = i % 3;
    const rec = record([group('dsA', [ev(`a${i}`)]), group(`ds${partition}`, [ev(`x${i}`), ev(`y${i}`)])]);
    sent.push({ partition, offset: await append(q, partition, rec), rec });
  }
  t.equal(digest.undigestedBytes(), q.endOffset(0) + q.endOffset(1), 'nothing durable in segments yet: all owned bytes undigested');
  t.equal(digest.pendingBytes(), 0);
  await digest.stop();
  t.strictSame(fatal, []);
  t.strictSame(await checkpoints(root), { '0': q.endOffset(0), '1': q.endOffset(1) }, 'checkpoint = queue end of each owned partition');
  t.equal((await readFile(join(root, 'digest', 'checkpoints.json'), 'utf8')).endsWith('}\n'), true);
  t.equal(digest.undigestedBytes(), 0);

  const rows = await storedEvents(join(root, 'segments'));
  for (const p of [0, 1]) {
    const mine = rows.filter((r) => r.partition === p);
    t.strictSame(keysOf(mine), expectedKeys(sent.filter((s) => s.partition === p)), `partition ${p}: every event once`);
  }
  t.equal(rows.filter((r) => r.partition === 2).length, 0, 'partition 2 is not owned: not digested');
  t.ok((await readSegments(join(root, 'segments'))).every((s) => s.seg.footer !== null), 'stop closes every segment');
  t.ok(cat.all().every((s) => s.closed));
  await q.close();
});

t.test('a new Digest over the same dirs replays from the checkpoint and stores nothing twice', async (t) => {
  const root = await tempDir(t);
  const sent: { offset: number; rec: IngestRecord }[] = [];
  {
    const { q, digest } = await rig(root);
    await digest.start([0]);
    for (let i = 0; i < 10; i++) {
      const rec = record([group('dsA', [ev(`first${i}`)])]);
      sent.push({ offset: await append(q, 0, rec), rec });
    }
    await digest.stop();
    await q.close();
  }
  const end1 = sent.at(-1)!.offset + 16 + encodeRecord(sent.at(-1)!.rec).payload.length;
  t.strictSame(await checkpoints(root), { '0': end1 });
  {
    const { q, digest } = await rig(root, { loadCatalog: true });
    await digest.start([0]);
    t.equal(digest.undigestedBytes(), 0, 'started at the checkpoint = queue end');
    for (let i = 0; i < 10; i++) {
      const rec = record([group('dsA', [ev(`second${i}`)]), group('dsB', [ev(`b${i}`)])]);
      sent.push({ offset: await append(q, 0, rec), rec });
    }
    await digest.stop();
    t.strictSame(await checkpoints(root), { '0': q.endOffset(0) });
    await q.close();
  }
  const keys = keysOf(await storedEvents(join(root, 'segments')));
  t.strictSame(keys, expectedKeys(sent));
  t.equal(keys.length, 30);
});

t.test('crash recovery: a checkpoint persisted by the periodic tick, then a replay from it with a reloaded catalog', async (t) => {
  const root = await tempDir(t);
  const s = { blockTargetBytes: 2048 };
  const sent: { offset: number; rec: IngestRecord }[] = [];
  const a = await rig(root, { fileBytes: 512, settings: s });
  await a.digest.start([0]);
  for (let i = 0; i < 30; i++) {
    const groups = [group('dsA', [ev(`a${i}`)])];
    if (i === 5) groups.push(group('dsB', [ev('lonely b')]));
    const rec = record(groups);
    sent.push({ offset: await append(a.q, 0, rec), rec });
  }
  // dsA: records 0-13 and 14-27 sealed (14 x 148 bytes >= 2048) and written; 28-29 open.
  // dsB: its one event (record 5) stays open, so the checkpoint is record 5's offset.
  const off5 = sent[5]!.offset;
  t.ok(await until(async () => (await stat(join(root, 'digest', 'checkpoints.json')).catch(() => null)) !== null), 'the periodic tick persisted checkpoints');
  t.strictSame(await checkpoints(root), { '0': off5 });
  t.ok(await until(async () => !(await readdir(join(root, 'queue', 'p0000'))).includes(`${'0'.padStart(20, '0')}.dq`)), 'queue files wholly below the checkpoint were truncated');
  const kept = (await readdir(join(root, 'queue', 'p0000'))).filter((n) => n.endsWith('.dq')).map((n) => Number(n.slice(0, 20)));
  t.ok(Math.min(...kept) <= off5, 'the file holding the checkpoint is kept');
  t.equal((await storedEvents(join(root, 'segments'))).length, 28);
  // Crash: no stop(). A fresh process opens the queue, loads the catalog (closing open segments).
  await a.q.close();
  const b = await rig(root, { fileBytes: 512, settings: s, loadCatalog: true });
  t.strictSame(b.cat.highWater(0, 'dsA'), { offset: sent[27]!.offset, index: 0 });
  t.equal(b.cat.highWater(0, 'dsB'), null);
  await b.digest.start([0]);
  for (let i = 30; i < 35; i++) {
    const rec = record([group('dsA', [ev(`a${i}`)])]);
    sent.push({ offset: await append(b.q, 0, rec), rec });
  }
  await b.digest.stop();
  const keys = keysOf(await storedEvents(join(root, 'segments')));
  t.strictSame(keys, expectedKeys(sent), 'every event exactly once after the crash and replay');
  t.equal(keys.length, 36);
  t.strictSame(await checkpoints(root), { '0': b.q.endOffset(0) });
  t.strictSame(b.fatal, []);
  await b.q.close();
  await a.digest.stop(); // stop the crashed instance's timer (after the assertions)
});

t.test('memory budget: with a tiny openBlockBudgetBytes, open blocks are sealed early', async (t) => {
  const root = await tempDir(t);
  // 300 bytes per event; budget 1000: the 4th event makes 1200 > 1000 and the block is sealed.
  const { q, digest } = await rig(root, { budget: 1000, settings: { blockTargetBytes: 1e9 } });
  await digest.start([0]);
  for (let i = 0; i < 12; i++) await append(q, 0, record([group('dsA', [ev(`e${i}`, 300)])]));
  t.ok(await until(() => digest.pendingBytes() === 0), 'sealed blocks written');
  const segs = await readSegments(join(root, 'segments'));
  t.equal(segs.length, 1);
  t.strictSame(segs[0]!.seg.blocks.map((b) => b.eventCount), [4, 4, 4], 'three blocks of 4 events, before any flush interval or stop');
  await digest.stop();
  await q.close();

  // Control: the same input with a large budget writes nothing until stop.
  const root2 = await tempDir(t);
  const c = await rig(root2, { settings: { blockTargetBytes: 1e9 } });
  await c.digest.start([0]);
  for (let i = 0; i < 12; i++) await append(c.q, 0, record([group('dsA', [ev(`e${i}`, 300)])]));
  t.strictSame(await readSegments(join(root2, 'segments')), [], 'no early sealing without memory pressure');
  await c.digest.stop();
  t.strictSame((await readSegments(join(root2, 'segments'))).map((x) => x.seg.blocks.length), [1]);
  await c.q.close();
});

t.test('memory budget: the largest open block is sealed first', async (t) => {
  const root = await tempDir(t);
  const { q, digest } = await rig(root, { budget: 1000, settings: { blockTargetBytes: 1e9 } });
  await digest.start([0]);
  // Each record: dsA 300 bytes, dsB 100 bytes. After 3 records: 1200 > 1000 -> A (900) sealed, B (300) stays.
  for (let i = 0; i < 3; i++) await append(q, 0, record([group('dsA', [ev(`a${i}`, 300)]), group('dsB', [ev(`b${i}`, 100)])]));
  t.ok(await until(() => digest.pendingBytes() === 0));
  const segs = await readSegments(join(root, 'segments'));
  t.strictSame(segs.map((s) => [s.seg.meta.ds, s.events.length]), [['dsA', 3]]);
  await digest.stop();
  await q.close();
});

/**
 * A DigestQueue that behaves exactly like the embedded queue, except that once a replay read has
 * returned its last record (and before the caller sees the end of the read), it runs `hook`. The hook
 * appends a record and lets its durable notification be delivered: the interleaving of a live append
 * with a replay that is still waiting on file I/O (Digest.own() reading a partition's files).
 */
class AppendDuringReplay implements DigestQueue {
  hook: (() => Promise<void>) | null = null;
  constructor(private readonly inner: EmbeddedDigestQueue) {}
  get partitionCount(): number {
    return this.inner.partitionCount;
  }
  append(partition: number, payload: Buffer, attachment?: unknown): Promise<number> {
    return this.inner.append(partition, payload, attachment);
  }
  onDurable(listener: (r: DurableRecord) => void): void {
    this.inner.onDurable(listener);
  }
  async *read(partition: number, fromOffset: number): AsyncIterable<QueueRecord> {
    yield* this.inner.read(partition, fromOffset);
    const h = this.hook;
    this.hook = null;
    if (h !== null) await h();
  }
  follow(partition: number, fromOffset: number, handler: (r: QueueRecord) => Promise<void>, onError?: (err: Error) => void): FollowHandle {
    return this.inner.follow(partition, fromOffset, handler, onError);
  }
  endOffset(partition: number): number {
    return this.inner.endOffset(partition);
  }
  truncateBelow(partition: number, offset: number): Promise<void> {
    return this.inner.truncateBelow(partition, offset);
  }
  ensurePartitions(count: number): Promise<void> {
    return this.inner.ensurePartitions(count);
  }
  sizeBytes(): number {
    return this.inner.sizeBytes();
  }
  recordBytes(r: QueueRecord): number {
    return this.inner.recordBytes(r);
  }
  bytesBetween(partition: number, from: number, to: number): number {
    return this.inner.bytesBetween(partition, from, to);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

t.test('a record made durable (and announced) while its partition is being replayed is still digested', async (t) => {
  // Latent today: node.ts only appends to partitions digest.owns(), and a partition is owned only once
  // its replay has finished. Digest.own() itself drops such a record and lets the checkpoint pass it.
  const root = await tempDir(t);
  let wrapper: AppendDuringReplay | undefined;
  const { q, digest } = await rig(root, {
    queue: (inner) => (wrapper = new AppendDuringReplay(inner)),
  });
  const sent: { offset: number; rec: IngestRecord }[] = [];
  for (let i = 0; i < 3; i++) {
    const rec = record([group('dsA', [ev(`before${i}`)])]);
    sent.push({ offset: await append(q, 0, rec), rec });
  }
  const during = record([group('dsA', [ev('during replay')])]);
  wrapper!.hook = async () => {
    sent.push({ offset: await append(q, 0, during), rec: during });
  };
  await digest.start([0]);
  t.equal(wrapper!.hook, null, 'the append happened inside the replay');
  const after = record([group('dsA', [ev('after')])]);
  sent.push({ offset: await append(q, 0, after), rec: after });
  await digest.stop();
  const keys = keysOf(await storedEvents(join(root, 'segments')));
  t.strictSame(keys, expectedKeys(sent), 'all 5 acknowledged records are in segments');
  const cp = (await checkpoints(root)) as Record<string, number>;
  const stored = new Set(keys);
  const missing = sent.filter((s) => !stored.has(`dsA:${s.offset}:0`)).map((s) => s.offset);
  t.strictSame(missing, [], `no acknowledged record is skipped (checkpoint persisted at ${cp['0']}, queue end ${q.endOffset(0)})`);
  await q.close();
});

/** The real queue, with every read after the first slowed down: widens the window of a second replay. */
function slowReads(q: EmbeddedDigestQueue): DigestQueue {
  let reads = 0;
  return {
    get partitionCount() {
      return q.partitionCount;
    },
    append: (p, payload, attachment) => q.append(p, payload, attachment),
    onDurable: (l) => q.onDurable(l),
    follow: (p, from, handler, onError) => q.follow(p, from, handler, onError),
    async *read(p, from) {
      const slow = p === 1 && ++reads >= 2;
      for await (const rec of q.read(p, from)) {
        if (slow) await new Promise((r) => setTimeout(r, 50));
        yield rec;
      }
    },
    endOffset: (p) => q.endOffset(p),
    truncateBelow: (p, o) => q.truncateBelow(p, o),
    ensurePartitions: (n) => q.ensurePartitions(n),
    sizeBytes: () => q.sizeBytes(),
    recordBytes: (r) => q.recordBytes(r),
    bytesBetween: (p, from, to) => q.bytesBetween(p, from, to),
    close: () => q.close(),
  };
}

t.test('overlapping own() calls for the same partition replay it once and leave one digester', async (t) => {
  const root = await tempDir(t);
  const r = await rig(root, { partitions: 2, queue: slowReads });
  await r.digest.start([0]);
  // Partition 1 already holds records (as after a layout change on a cluster) before it is owned.
  const recs = [record([group('dsA', [ev('p1-a'), ev('p1-b')])]), record([group('dsA', [ev('p1-c')])])];
  for (const rec of recs) await append(r.q, 1, rec);
  const a = r.digest.own([1]);
  const b = r.digest.own([1]);
  // The first call is done and the partition is live; a record arrives while a second replay could
  // still be running.
  await a;
  const live = append(r.q, 1, record([group('dsA', [ev('p1-live')])]));
  await Promise.all([b, live]);
  await r.digest.stop();
  t.strictSame(r.fatal, []);
  const rows = await storedEvents(join(root, 'segments'));
  const raws = rows.map((x) => x.rawstring.split(' ')[0]).sort();
  t.strictSame(raws, ['p1-a', 'p1-b', 'p1-c', 'p1-live'], 'each event exactly once, the live one included');
  await r.q.close();
});

t.test('when undigested bytes pass the threshold, the oldest open blocks are written early', async (t) => {
  const root = await tempDir(t);
  const fatal: Error[] = [];
  const q = await EmbeddedDigestQueue.open({ dir: join(root, 'queue'), partitions: 1, logger: silentLogger, onFatal: (e) => fatal.push(e) });
  const segDir = join(root, 'segments');
  const clock = new ManualClock(T0);
  const digest = new Digest({
    dataDir: root,
    queue: q,
    catalog: new SegmentCatalog(segDir),
    encoder: new InlineBlockEncoder(),
    clock,
    logger: silentLogger,
    settings: settings(segDir, { flushBlockMs: 3_600_000 }),
    openBlockBudgetBytes: 64 * 1024 * 1024,
    sealUndigestedAboveBytes: 2048,
    onLatency: () => undefined,
    onFatal: (e) => fatal.push(e),
  });
  await digest.start([0]);
  // A quiet datasource opens a block first; a busy one follows with much more data.
  await append(q, 0, record([group('quiet', [ev('q0')])]));
  for (let i = 0; i < 20; i++) await append(q, 0, record([group('busy', [ev(`b${i}`)])]));
  t.ok(digest.undigestedBytes() > 2048, 'precondition: the quiet block holds the checkpoint back');
  // The once-a-second tick writes the oldest blocks; wait for it (bounded: 30 s for a busy machine).
  for (let i = 0; i < 300 && digest.undigestedBytes() > 2048; i++) await new Promise((r) => setTimeout(r, 100));
  t.ok(digest.undigestedBytes() <= 2048, `undigested bytes came down (${digest.undigestedBytes()})`);
  await digest.stop();
  t.strictSame(fatal, []);
  await q.close();
});

t.test('cluster mode: a digester handing over is still searched until its blocks are written, then says where it ended', async (t) => {
  const root = await tempDir(t);
  const q = await EmbeddedDigestQueue.open({ dir: join(root, 'queue'), partitions: 1, logger: silentLogger, onFatal: () => undefined });
  t.teardown(() => q.close());
  const segDir = join(root, 'segments');
  const cat = new SegmentCatalog(segDir);
  // Block writes wait for the gate: the handover's drain is held open.
  let open: (() => void) | null = null;
  const gate = new Promise<void>((r) => (open = r));
  const inline = new InlineBlockEncoder();
  const digest = new Digest({
    dataDir: root,
    queue: q,
    catalog: cat,
    encoder: { encode: async (parts) => (await gate, inline.encode(parts)), close: () => inline.close() },
    clock: new ManualClock(T0),
    logger: silentLogger,
    settings: settings(segDir, { flushBlockMs: 3_600_000 }),
    openBlockBudgetBytes: 64 * 1024 * 1024,
    sealUndigestedAboveBytes: 1024 * 1024 * 1024,
    onLatency: () => undefined,
    onFatal: () => undefined,
    cluster: { onProgress: () => undefined, selfId: 1 },
  });
  await digest.start([]);
  await digest.ownFrom(0, 0, [], 5);
  for (let i = 0; i < 3; i++) await append(q, 0, record([group('dsA', [ev(`e${i}`)])]));
  const end = q.endOffset(0);
  t.ok(await until(() => digest.progressOf(0, 5)?.end === end), 'the digester reads to the queue end');
  t.same(digest.progressOf(0, 5), { end, state: 'active' });
  t.equal(digest.progressOf(0, 4), null, 'another epoch: not this digester');
  t.same(digest.memory('sandbox').map((m) => [m.partition, m.epoch, m.parts.length]), [[0, 5, 3]], 'memory says its epoch');

  const released = digest.release(0, 'handover');
  t.ok(await until(() => digest.progressOf(0, 5)?.state === 'draining'), 'handing over: draining');
  t.equal(digest.owns(0), false, 'no longer owned');
  t.same(digest.memory('sandbox').map((m) => [m.partition, m.epoch, m.parts.length]), [[0, 5, 3]], 'its memory is still searched while its blocks are written');
  open!();
  t.equal(await released, end, 'the handover ends at the queue end');
  t.same(digest.progressOf(0, 5), { end, state: 'released' });
  t.same(digest.memory('sandbox'), [], 'written: nothing left in memory');
  t.same(keysOf(await storedEvents(segDir)).length, 3, 'every event in segments');
  await digest.stop();
});
