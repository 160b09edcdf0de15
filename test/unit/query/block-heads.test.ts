/**
 * BlockHeads: a query thread's parsed format 5 block heads. A head is read and checked once and
 * then served without reading; filters are added when a query first needs them; an entry whose
 * lengths differ from the catalog's is read again; a damaged head is not kept; the bound holds.
 */
import t from 'tap';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { blockHeads, runScanTask } from '../../../src/query/scan.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';
import { join } from 'node:path';
import { BlockHeads } from '../../../src/query/block-heads.js';
import { readSegmentInfo } from '../../../src/segments/catalog.js';
import { createLogger } from '../../../src/lib/logger.js';
import { makeEvents, segMeta, tempDir, writeSegment } from '../segments/helpers.js';

async function segment(t: Parameters<typeof tempDir>[0], blocks: number): Promise<{ path: string; refs: Awaited<ReturnType<typeof readSegmentInfo>>['blocks'] }> {
  const dir = await tempDir(t);
  const w = await writeSegment(dir, segMeta('heads'), Array.from({ length: blocks }, (_, b) => makeEvents(40, b * 1000, b * 40)), true);
  const info = await readSegmentInfo(w.path, createLogger('error'), Date.now());
  return { path: w.path, refs: info.blocks };
}

t.test('a head is read once, then served from memory; filters are read when first asked for', async (t) => {
  const { path, refs } = await segment(t, 3);
  const heads = new BlockHeads();
  const fd = openSync(path, 'r');
  t.teardown(() => closeSync(fd));
  const b = refs[1]!;
  const first = heads.get(() => fd, path, b, false);
  t.ok(first !== null, 'read');
  t.equal(first!.meta.eventCount, 40);
  t.equal(first!.filters, null, 'no filters until asked for');
  t.ok(first!.dir.columns.some((c) => c.name === 'seq'), 'the directory lists the fields');
  t.equal(heads.size.entries, 1);
  // Served without reading: a closed descriptor would fail any read.
  const gone = openSync(path, 'r');
  closeSync(gone);
  t.equal(heads.get(() => gone, path, b, false), first, 'the same entry, no read');
  const withFilters = heads.get(() => fd, path, b, true);
  t.equal(withFilters, first, 'the same entry');
  t.equal(withFilters!.filters!.length, b.bloomLength + b.gramLength, 'bloom and gram filters added');
  t.equal(heads.get(() => gone, path, b, true), first, 'now served with its filters without reading');
  t.not(heads.get(() => fd, path, refs[0]!, false), first, 'another block is another entry');
  t.equal(heads.get(() => fd, `${path}x`, b, false) === first, false, 'another path is another entry');
});

t.test('an entry is used only when the catalog lengths match; a damaged head is not kept', async (t) => {
  const { path, refs } = await segment(t, 2);
  const heads = new BlockHeads();
  let fd = openSync(path, 'r');
  const b = refs[0]!;
  t.ok(heads.get(() => fd, path, b, false) !== null);
  const gone = openSync(path, 'r');
  closeSync(gone);
  t.throws(() => heads.get(() => gone, path, { ...b, compressedLength: b.compressedLength + 1 }, false), { code: 'EBADF' }, 'other lengths: read again');
  closeSync(fd);
  // Damage the first block's directory: its head fails its checksum.
  const bytes = readFileSync(path);
  bytes[b.pos + 80]! ^= 0xff;
  const damaged = join(path, '..', 'damaged.seg');
  writeFileSync(damaged, bytes);
  fd = openSync(damaged, 'r');
  t.teardown(() => closeSync(fd));
  t.equal(heads.get(() => fd, damaged, b, false), null, 'damaged: null');
  t.equal(heads.size.entries, 0, 'nothing kept (the entry of other lengths was let go, the damaged head not added)');
  t.ok(heads.get(() => fd, damaged, refs[1]!, true) !== null, 'the next block is intact');
  // Damaged filters: the head is intact, the filters are not.
  bytes[refs[1]!.pos + refs[1]!.headerLength + 3]! ^= 0xff;
  const worse = join(path, '..', 'filters.seg');
  writeFileSync(worse, bytes);
  const fd2 = openSync(worse, 'r');
  t.teardown(() => closeSync(fd2));
  t.equal(heads.get(() => fd2, worse, refs[1]!, true), null, 'damaged filters: null');
  t.ok(heads.get(() => fd2, worse, refs[1]!, false) !== null, 'the head alone is still served');
  t.equal(heads.get(() => fd2, worse, refs[1]!, true), null, 'and its filters still refused');
});

t.test('bounded: the least recently used go first', async (t) => {
  const { path, refs } = await segment(t, 6);
  const fd = openSync(path, 'r');
  t.teardown(() => closeSync(fd));
  const one = new BlockHeads();
  one.get(() => fd, path, refs[0]!, false);
  const each = one.size.bytes;
  const heads = new BlockHeads(Math.floor(each * 3.5));
  for (const b of refs.slice(0, 3)) heads.get(() => fd, path, b, false);
  t.equal(heads.size.entries, 3);
  const kept = heads.get(() => fd, path, refs[0]!, false);
  heads.get(() => fd, path, refs[3]!, false);
  t.equal(heads.size.entries, 3, 'one let go');
  t.ok(heads.size.bytes <= Math.floor(each * 3.5), 'within the bound');
  const gone = openSync(path, 'r');
  closeSync(gone);
  t.equal(heads.get(() => gone, path, refs[0]!, false), kept, 'the one used last is kept');
  t.throws(() => heads.get(() => gone, path, refs[1]!, false), { code: 'EBADF' }, 'the least recently used was let go');
  heads.clear();
  t.same(heads.size, { bytes: 0, entries: 0, filterBytes: 0 });
});

t.test('filters have a bound of their own: letting them go keeps the heads', async (t) => {
  const { path, refs } = await segment(t, 4);
  const fd = openSync(path, 'r');
  t.teardown(() => closeSync(fd));
  const each = refs[0]!.bloomLength + refs[0]!.gramLength;
  const heads = new BlockHeads(undefined, Math.floor(each * 2.5));
  const got = refs.map((b) => heads.get(() => fd, path, b, true)!);
  t.equal(heads.size.entries, 4, 'every head kept');
  t.equal(heads.size.filterBytes, 2 * each, 'the filters of two blocks kept');
  t.equal(got[0]!.filters, null, 'the least recently used filters let go');
  t.equal(got[1]!.filters, null);
  t.ok(got[3]!.filters !== null, 'the newest kept');
  const gone = openSync(path, 'r');
  closeSync(gone);
  t.equal(heads.get(() => gone, path, refs[0]!, false), got[0], 'a head without its filters still served without reading');
  t.throws(() => heads.get(() => gone, path, refs[0]!, true), { code: 'EBADF' }, 'its filters read again when asked for');
  t.ok(heads.get(() => fd, path, refs[0]!, true)!.filters !== null, 'and kept again');
  t.equal(got[2]!.filters, null, 'pushing out the least recently used');
  t.equal(heads.size.filterBytes, 2 * each, 'within the bound');
});

t.test('a scan answered from cached heads and their column summaries opens no file', async (t) => {
  const { path, refs } = await segment(t, 3);
  const ctx = { start: 0, end: 2_000_000_000_000, timeZoneOffsetMinutes: 0, now: 2_000_000_000_000, live: false };
  const scan = (text: string, at = path) => runScanTask({ spec: { text, args: {}, ctx, limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg', path: at, partition: 3, tags: {}, blocks: refs }], deadline: Date.now() + 60_000 });
  const first = scan('even=yes | groupBy(even)');
  t.match(first, { blocksSummarised: 3, blocksRead: 0, matched: 60 }, 'every block from its head');
  // The same blocks under a path that does not exist: nothing is opened while the heads answer.
  await rename(path, `${path}.moved`);
  t.match(scan('even=yes | groupBy(even)'), { blocksSummarised: 3, matched: 60 }, 'answered without the file');
  // Summaries that say no row passes leave the blocks out, their bloom filters neither read nor kept.
  t.match(scan('even=nope | tail(5)'), { blocksSkipped: 3, blocksRead: 0, matched: 0 }, 'left out without the file');
  t.equal(blockHeads.size.filterBytes, 0, 'no filters read');
  t.throws(() => scan('hello | count()'), { code: 'ENOENT' }, 'a query that reads frames opens it');
});
