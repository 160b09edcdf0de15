/**
 * LeftoverSweep (src/cluster/leftovers.ts) on a real catalog, real files and a real global store:
 * a segment whose every block is past its epoch's end is unlisted and deleted after the grace (not
 * while a query snapshot holds it, and its void record goes with it); a partly void segment and a
 * running epoch's segment stay; a part file of a copy no longer wanted goes, one still wanted stays.
 */
import t from 'tap';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GlobalStore, MemorySharedLog } from '../../../src/global/index.js';
import type { StoredSegment } from '../../../src/global/segment-holdings.js';
import { LeftoverSweep } from '../../../src/cluster/leftovers.js';
import { SegmentCatalog } from '../../../src/segments/catalog.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { makeEvents, segMeta, tempDir, writeSegment } from '../segments/helpers.js';

const exists = (p: string): Promise<boolean> => access(p).then(() => true, () => false);

/** Waits (bounded) for work that finishes on its own: a proposal applied, a deferred unlink. */
async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 30_000; !(await ok()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function listing(id: string, epoch: number, file: string, firstOffset: number): StoredSegment {
  return { id, repo: 'sandbox', ds: 'dsA', partition: 3, epoch, writer: 1, file, bytes: 1, crc: 0, events: 9, minTs: 0, maxTs: 1, firstOffset, firstIndex: 0, lastOffset: firstOffset + 200, lastIndex: 2 };
}

t.test('void segment files and abandoned part files are deleted after the grace; nothing else is', async (t) => {
  const dir = await tempDir(t);
  const dsDir = join(dir, 'sandbox', 'dsA');
  // Partition 3, epoch 1 (node 1) ended at offset 250: v1 lies wholly past it, p1 partly, r1 is epoch 2's.
  const v1 = await writeSegment(dsDir, segMeta('v1', { epoch: 1, writer: 1 }), [makeEvents(9, 300)], true);
  const p1 = await writeSegment(dsDir, segMeta('p1', { epoch: 1, writer: 1 }), [makeEvents(9, 0), makeEvents(9, 300, 9)], true);
  const r1 = await writeSegment(dsDir, segMeta('r1', { epoch: 2, writer: 2 }), [makeEvents(9, 300)], true);
  const store = await GlobalStore.openShared(new MemorySharedLog().view(), { snapshotEvery: 1_000_000, logger: silentLogger, proposer: 'n1' });
  t.teardown(() => store.close());
  await store.publish([
    { type: 'NodeRegistered', id: 1, uuid: 'u1', name: 'n1', uri: 'http://n1', at: 1 },
    { type: 'PartitionEpochStarted', partition: 3, node: 1, epoch: 1, at: 1 },
    { type: 'PartitionProgress', partition: 3, node: 1, epoch: 1, checkpoint: 250, marks: [['dsA', 250, 2]] },
    { type: 'SegmentStored', node: 1, segment: listing('v1', 1, 'sandbox/dsA/v1.seg', 300) },
    { type: 'SegmentStored', node: 1, segment: listing('p1', 1, 'sandbox/dsA/p1.seg', 0) },
    { type: 'PartitionEpochStarted', partition: 3, node: 2, epoch: 2, at: 2 },
  ]);
  await until('the setup applied', () => store.state.cluster.epochs.get(3)?.epoch === 2);
  const catalog = await SegmentCatalog.load(dir, silentLogger, 0);
  t.equal(await catalog.voidEpochs(3, store.state.cluster.epochEnds.get(3)!), 2, 'v1\'s block and p1\'s second block are void');
  t.match(await readFile(join(dir, 'void.json'), 'utf8'), /"v1":0/, 'v1 is recorded void from its first block');

  const incoming = join(dir, '.incoming');
  await mkdir(incoming);
  await writeFile(join(incoming, 'gone.part'), 'x');
  await writeFile(join(incoming, 'wanted.part'), 'x');
  const clock = new ManualClock(1_000);
  const sweep = new LeftoverSweep({ selfId: 1, store, catalog, incomingDir: incoming, clock, logger: silentLogger, graceMs: 30_000 });
  const idle = (): boolean => false;
  const copying = (id: string): boolean => id === 'wanted';

  await sweep.sweep(idle, copying);
  clock.advance(29_000);
  await sweep.sweep(idle, copying);
  t.ok(await exists(v1.path), 'within the grace the void segment stays');
  t.ok(catalog.get('v1') !== undefined, 'in the catalog');
  t.ok(await exists(join(incoming, 'gone.part')), 'and so does the abandoned part file');

  // A query snapshot reads v1 when the grace ends: it is unlisted and out of the catalog, its file
  // goes when the snapshot lets go.
  const release = catalog.pin([v1.path]);
  clock.advance(1_000);
  await sweep.sweep(() => false, copying);
  t.equal(catalog.get('v1'), undefined, 'out of the catalog');
  await until('the drop applied', () => store.state.cluster.segments.segments.get('v1') === undefined);
  t.equal(store.state.cluster.segments.segments.get('v1'), undefined, 'no longer listed (its only holder dropped it)');
  t.ok(await exists(v1.path), 'still on disk while the snapshot holds it');
  release();
  await until('the deletion', () => sweep.stats().voidDeleted === 1);
  t.notOk(await exists(v1.path), 'deleted once the snapshot let go');
  t.same(sweep.stats(), { voidDeleted: 1, voidDeletedBytes: v1.bytes, partsDeleted: 1 });
  t.notMatch(await readFile(join(dir, 'void.json'), 'utf8'), /"v1"/, 'its void record is forgotten');
  t.match(await readFile(join(dir, 'void.json'), 'utf8'), /"p1":1/, 'the partly void segment keeps its record');

  t.ok(await exists(p1.path), 'a partly void segment stays (its first block is needed)');
  t.ok(await exists(r1.path), 'a running epoch\'s segment stays');
  t.ok(store.state.cluster.segments.segments.get('p1') !== undefined, 'and stays listed');
  t.notOk(await exists(join(incoming, 'gone.part')), 'the part file of a copy no longer wanted is deleted');
  t.ok(await exists(join(incoming, 'wanted.part')), 'one still wanted stays');

  const again = await SegmentCatalog.load(dir, silentLogger, 0);
  t.same(again.all().map((s) => [s.meta.id, s.blocks.length]).sort(), [['p1', 1], ['r1', 1]], 'after a restart: the deleted file does not come back, p1 is still cut');
});

t.test('a segment that is busy (being registered, copied, dropped) is left to that work', async (t) => {
  const dir = await tempDir(t);
  const v = await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('v', { epoch: 2, writer: 1 }), [makeEvents(3, 300)], true);
  const store = await GlobalStore.openShared(new MemorySharedLog().view(), { snapshotEvery: 1_000_000, logger: silentLogger, proposer: 'n1' });
  t.teardown(() => store.close());
  const catalog = await SegmentCatalog.load(dir, silentLogger, 0);
  await catalog.voidEpochs(3, new Map([[2, new Map([['dsA', { offset: 0, index: 0 }]])]]));
  const clock = new ManualClock(0);
  const sweep = new LeftoverSweep({ selfId: 1, store, catalog, incomingDir: join(dir, '.incoming'), clock, logger: silentLogger, graceMs: 10 });
  for (let i = 0; i < 3; i++) {
    await sweep.sweep(() => true, () => false);
    clock.advance(100);
  }
  t.ok(await exists(v.path), 'kept while busy');
  await sweep.sweep(() => false, () => false);
  clock.advance(100);
  await sweep.sweep(() => false, () => false);
  await until('the deletion', () => sweep.stats().voidDeleted === 1);
  t.notOk(await exists(v.path), 'deleted once free and past the grace');
});
