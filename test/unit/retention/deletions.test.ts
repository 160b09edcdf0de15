/**
 * SegmentDeletions: the decision is durable before any file goes, a crash after it finishes the
 * deletion at the next open, files a query holds stay until it lets go, and replays still skip the
 * deleted events (their high-water marks are kept).
 */
import t from 'tap';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SegmentCatalog } from '../../../src/segments/catalog.js';
import { DELETIONS_FILE, SegmentDeletions } from '../../../src/segments/deletions.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { makeEvents, segMeta, tempDir, writeSegment } from '../segments/helpers.js';

const exists = (p: string): Promise<boolean> => access(p).then(() => true, () => false);

async function setup(t: Parameters<typeof tempDir>[0]) {
  const dir = join(await tempDir(t), 'segments');
  const a = await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('a'), [makeEvents(6, 0)], true);
  const b = await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('b'), [makeEvents(6, 1000)], true);
  const open = await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('c'), [makeEvents(3, 2000)], false);
  const deletions = await SegmentDeletions.open(dir);
  const catalog = await SegmentCatalog.load(dir, silentLogger, 0);
  deletions.applyTo(catalog);
  return { dir, a: a.path, b: b.path, open, deletions, catalog };
}

t.test('delete: out of the catalog, file unlinked, manifest settled, high-water mark kept', async (t) => {
  const { dir, a, b, deletions, catalog } = await setup(t);
  // The open segment was closed by the load (a crash left it open); reopen a fresh catalog view.
  const hwBefore = catalog.highWater(3, 'dsA');
  const { unlinked } = await deletions.delete(catalog, [catalog.get('a')!, catalog.get('b')!]);
  t.equal(catalog.get('a'), undefined);
  t.equal(catalog.get('b'), undefined);
  await unlinked;
  t.equal(await exists(a), false);
  t.equal(await exists(b), false);
  const m = JSON.parse(await readFile(join(dir, DELETIONS_FILE), 'utf8'));
  t.strictSame(m.pending, []);
  t.strictSame(catalog.highWater(3, 'dsA'), hwBefore);
  t.equal(deletions.deletedSegments, 2);

  // A fresh start without the segments still knows how far partition 3 / dsA was durable.
  const again = await SegmentDeletions.open(dir);
  const fresh = await SegmentCatalog.load(dir, silentLogger, 0);
  t.strictSame(fresh.all().map((s) => s.meta.id), ['c']);
  const beforeApply = fresh.highWater(3, 'dsA');
  again.applyTo(fresh);
  t.ok(beforeApply !== null && hwBefore !== null);
  t.strictSame(fresh.highWater(3, 'dsA'), hwBefore, 'the deleted segments\' high-water mark comes from the manifest');
});

t.test('only closed segments are deleted', async (t) => {
  const { catalog, deletions, open } = await setup(t);
  const info = { ...catalog.get('c')!, closed: false };
  await (await deletions.delete(catalog, [info])).unlinked;
  t.equal(await exists(open.path), true);
});

t.test('a file a query holds stays until it is released', async (t) => {
  const { a, deletions, catalog } = await setup(t);
  const release = catalog.pin([a]);
  const release2 = catalog.pin([a]);
  let done = false;
  const { unlinked } = await deletions.delete(catalog, [catalog.get('a')!]);
  void unlinked.then(() => (done = true));
  t.equal(catalog.get('a'), undefined, 'new queries no longer see it');
  await new Promise((r) => setTimeout(r, 50));
  t.equal(await exists(a), true, 'still on disk for the running query');
  release();
  release(); // twice: counted once
  await new Promise((r) => setTimeout(r, 50));
  t.equal(await exists(a), true, 'another snapshot still holds it');
  t.equal(done, false);
  release2();
  await unlinked;
  t.equal(await exists(a), false);
});

t.test('a crash after the decision: the next open finishes the deletion before the catalog loads', async (t) => {
  const { dir, a, b } = await setup(t);
  // What step 1 leaves behind: the manifest lists the path, the file is still there.
  await writeFile(join(dir, DELETIONS_FILE), JSON.stringify({ version: 1, hwm: [[3, 'dsA', 999_999, 2]], pending: ['sandbox/dsA/a.seg'] }));
  t.equal(await exists(a), true);
  const d = await SegmentDeletions.open(dir);
  t.equal(await exists(a), false, 'unlinked at open');
  t.equal(await exists(b), true, 'others untouched');
  const cat = await SegmentCatalog.load(dir, silentLogger, 0);
  d.applyTo(cat);
  t.strictSame(cat.all().map((s) => s.meta.id).sort(), ['b', 'c']);
  t.strictSame(cat.highWater(3, 'dsA'), { offset: 999_999, index: 2 });
  t.strictSame(JSON.parse(await readFile(join(dir, DELETIONS_FILE), 'utf8')).pending, [], 'settled');
});

t.test('a crash before the decision leaves the segment listed and present', async (t) => {
  const { dir, a } = await setup(t);
  await SegmentDeletions.open(dir);
  const cat = await SegmentCatalog.load(dir, silentLogger, 0);
  t.ok(cat.get('a'));
  t.equal(await exists(a), true);
});

t.test('a damaged manifest or one naming a path outside the directory is refused', async (t) => {
  const { dir } = await setup(t);
  await writeFile(join(dir, DELETIONS_FILE), '{not json');
  await t.rejects(SegmentDeletions.open(dir), /deletions.json is not valid JSON/);
  await writeFile(join(dir, DELETIONS_FILE), JSON.stringify({ version: 1, hwm: [], pending: ['../../etc/passwd'] }));
  await t.rejects(SegmentDeletions.open(dir), /outside the segments directory/);
});
