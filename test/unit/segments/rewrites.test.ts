/**
 * SegmentRewrites: a replacement swaps the catalog in one step, leaves the old file while a query
 * holds it, keeps the queue positions, and a restart after a crash at either side of the decision
 * keeps exactly one of the two files.
 */
import t from 'tap';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SegmentCatalog } from '../../../src/segments/catalog.js';
import { REWRITES_FILE, SegmentRewrites } from '../../../src/segments/rewrites.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { makeEvents, segMeta, tempDir, writeSegment } from './helpers.js';

const exists = (p: string): Promise<boolean> => access(p).then(() => true, () => false);

async function setup(t: Parameters<typeof tempDir>[0]) {
  const dir = join(await tempDir(t), 'segments');
  const a = await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('a'), [makeEvents(6, 0)], true);
  const rewrites = await SegmentRewrites.open(dir);
  const catalog = await SegmentCatalog.load(dir, silentLogger, 0);
  return { dir, a: a.path, rewrites, catalog };
}

t.test('replace: one step in the catalog, old file kept while pinned, positions kept', async (t) => {
  const { dir, a, rewrites, catalog } = await setup(t);
  const old = catalog.get('a')!;
  const hw = catalog.highWater(3, 'dsA');
  const blockBytes = (await readFile(a)).subarray(old.blocks[0]!.pos, old.blocks[0]!.pos + old.blocks[0]!.compressedLength + old.blocks[0]!.headerLength + old.blocks[0]!.bloomLength + old.blocks[0]!.gramLength);
  const release = catalog.pin([a]);
  const { replaced, id, unlinked } = await rewrites.replace(catalog, old, [blockBytes], 5);
  t.ok(replaced);
  t.equal(catalog.get('a'), undefined, 'the old segment left the catalog');
  const fresh = catalog.get(id)!;
  t.ok(fresh, 'the new one is in it');
  t.equal(fresh.meta.ds, 'dsA');
  t.equal(await exists(a), true, 'a query still holds the old file');
  release();
  await unlinked;
  t.equal(await exists(a), false, 'unlinked once released');
  t.strictSame(JSON.parse(await readFile(join(dir, REWRITES_FILE), 'utf8')).entries, []);
  const reloaded = await SegmentCatalog.load(dir, silentLogger, 0);
  t.strictSame(reloaded.all().map((s) => s.meta.id), [id]);
  t.strictSame(reloaded.highWater(3, 'dsA'), hw, 'the queue positions are those of the old segment');
});

for (const swapped of [false, true]) {
  t.test(`open after a crash ${swapped ? 'after' : 'before'} the decision keeps the ${swapped ? 'new' : 'old'} file only`, async (t) => {
    const { dir, a } = await setup(t);
    const b = await writeSegment(join(dir, 'sandbox', 'dsA'), segMeta('b'), [makeEvents(6, 0)], true);
    await writeFile(join(dir, REWRITES_FILE), JSON.stringify({ version: 1, entries: [{ old: 'sandbox/dsA/a.seg', new: 'sandbox/dsA/b.seg', swapped }] }));
    t.equal(await exists(b.path), true);
    await SegmentRewrites.open(dir);
    t.equal(await exists(a), !swapped);
    t.equal(await exists(b.path), swapped);
    const cat = await SegmentCatalog.load(dir, silentLogger, 0);
    t.strictSame(cat.all().map((s) => s.meta.id), [swapped ? 'b' : 'a']);
  });
}

t.test('a manifest naming a path outside the directory is refused', async (t) => {
  const { dir } = await setup(t);
  await writeFile(join(dir, REWRITES_FILE), JSON.stringify({ version: 1, entries: [{ old: '../x.seg', new: 'y.seg', swapped: true }] }));
  await t.rejects(SegmentRewrites.open(dir), /outside the segments directory/);
});
