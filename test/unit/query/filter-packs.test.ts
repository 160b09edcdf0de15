/**
 * FilterPacks: a segment's block filters packed and checked in one native call. Its verdict must
 * be the per-block JavaScript check's (scan.ts blockMayMatch over the head's filters) for every
 * block, whatever the needles, the unit's blocks (whole, a subset, out of order), a segment that
 * grows or a damaged filter (left undecided, so the per-block path warns as before): a block the
 * pack rules out that the per-block check lets through would be a wrong answer.
 */
import t from 'tap';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { BlockHeads } from '../../../src/query/block-heads.js';
import { FilterPacks, MAY_MATCH, RULED_OUT, UNDECIDED, filterPacksUnavailable, packedProbes } from '../../../src/query/filter-packs.js';
import { blockMayMatch, blockProbes, pruneScanPacked, pruneScanTask, pruneTask, runScanTask, type BlockRef, type PruneTask } from '../../../src/query/scan.js';
import { refsSlice, shareRefs } from '../../../src/query/packed-refs.js';
import { toWire } from '../../../src/workers/scan-wire.js';
import { compileQuery } from '../../../src/query/compile.js';
import { DEFAULT_LIMITS } from '../../../src/query/runtime.js';
import { readSegmentInfo } from '../../../src/segments/catalog.js';
import type { StoredEvent } from '../../../src/segments/block.js';
import { createLogger } from '../../../src/lib/logger.js';
import { rnd } from '../../helpers/random.js';
import { ctxOf, rowsOf, type Fields } from './driver.js';
import { segMeta, tempDir, writeSegment } from '../segments/helpers.js';

const WORDS = ['alpha', 'Beta', 'gamma7', 'zqxwrare7', 'timeout', 'GET', 'login', 'x7kq9', 'Ärger', 'delta-epsilon', 'a', 'page', 'err', 'status404', 'k2vblm'];
const QUERIES = [
  'zqxwrare7',
  'ZQXWRARE7',
  '"GET /login"',
  'timeout',
  'user=alpha',
  'user=Beta or user=gamma7',
  'url=*login*',
  'rare7',
  'nothere99',
  '"x7kq9 " and page',
  'err*imeout',
  'Ärger',
  'status404 or k2vblm or nothere',
  '/zqx.rare/',
  'url like "x7kq"',
  'method=GET',
];

function randomEvents(r: () => number, n: number, block: number, rare: boolean): StoredEvent[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const out: StoredEvent[] = [];
  for (let i = 0; i < n; i++) {
    // Rare words in few blocks, so some blocks are ruled out and some are not.
    const words = Array.from({ length: 4 }, () => pick(WORDS)).filter((w) => rare || !['zqxwrare7', 'x7kq9', 'k2vblm'].includes(w));
    const fields: Record<string, string> = { method: pick(['GET', 'post']), user: pick(WORDS), url: `/${pick(WORDS)}/${Math.floor(r() * 100)}` };
    out.push({
      timestamp: 1_700_000_000_000 + block * 1000 + i,
      timezone: 'Z',
      rawstring: `${fields['method']} ${words.join(pick([' ', '-', '/']))} ${fields['url']} n${Math.floor(r() * 1e6)}`,
      fields,
      ingestTimestamp: 1_700_000_100_000,
      offset: block * 1000 + i,
      index: 0,
    });
  }
  return out;
}

async function randomSegment(t: Parameters<typeof tempDir>[0], seed: number, blocks: number, close = true) {
  const r = rnd(seed);
  const dir = await tempDir(t);
  const evs = Array.from({ length: blocks }, (_, b) => randomEvents(r, 5 + Math.floor(r() * 40), b, r() < 0.3));
  const w = await writeSegment(dir, segMeta(`packs${seed}`), evs, close);
  const info = await readSegmentInfo(w.path, createLogger('error'), Date.now());
  return { path: w.path, refs: info.blocks.map((b): BlockRef => ({ ...b, fieldGrams: b.fieldGrams === true })), writer: w, events: evs };
}

/** The per-block check as scan.ts makes it, from a fresh thread's heads. */
function perBlock(path: string, blocks: readonly BlockRef[], q: string): boolean[] {
  const alternatives = compileQuery(q, { ctx: ctxOf() }).pruning.bloom;
  const heads = new BlockHeads();
  const fd = openSync(path, 'r');
  try {
    return blocks.map((b) => {
      const head = heads.get(() => fd, path, b, true);
      return alternatives === null || head === null || blockMayMatch(head.bloom!, head.grams!, blockProbes(alternatives), b.fieldGrams === true);
    });
  } finally {
    closeSync(fd);
  }
}

function packed(packs: FilterPacks, heads: BlockHeads, path: string, blocks: readonly BlockRef[], q: string): Uint8Array | null {
  const alternatives = compileQuery(q, { ctx: ctxOf() }).pruning.bloom;
  if (alternatives === null) return null;
  const fd = openSync(path, 'r');
  try {
    return packs.verdicts(heads, () => fd, path, blocks, packedProbes(blockProbes(alternatives)));
  } finally {
    closeSync(fd);
  }
}

// Built by `npm run build` on any machine with a C++ compiler; only LOGSVC_NATIVE=off turns it off
// (then the packs' tests are skipped and the scans below take the per-block path).
if (filterPacksUnavailable !== null) t.equal(process.env.LOGSVC_NATIVE, 'off', `the native filter check is missing: ${filterPacksUnavailable}`);
const needsNative = { skip: filterPacksUnavailable ?? false };

t.test('a pack decides every framed block exactly as the per-block check does, whole units, subsets and any order', needsNative, async (t) => {
  const r = rnd(7);
  let ruledOut = 0;
  let mayMatch = 0;
  for (const seed of [1, 2, 3]) {
    const { path, refs } = await randomSegment(t, seed, 40);
    const packs = new FilterPacks();
    const heads = new BlockHeads();
    for (const q of QUERIES) {
      const units: BlockRef[][] = [refs, refs.filter(() => r() < 0.4), [...refs].reverse(), refs.filter((_, i) => i % 3 === 1)];
      for (const unit of units) {
        const want = perBlock(path, unit, q);
        const got = packed(packs, heads, path, unit, q);
        if (got === null) continue;
        for (let i = 0; i < unit.length; i++) {
          const v = got[i]!;
          if (v === UNDECIDED || (v === MAY_MATCH) !== want[i]) t.fail(`${q}: block ${unit[i]!.pos} packed ${v}, per block ${want[i]}`);
          if (v === RULED_OUT) ruledOut++;
          else mayMatch++;
        }
      }
    }
    t.equal(packs.size.segments, 1, 'one pack for the segment');
  }
  t.ok(ruledOut > 300, `${ruledOut} blocks ruled out`);
  t.ok(mayMatch > 500, `${mayMatch} blocks let through`);
});

t.test('a block added to an open segment, or lengths the catalog no longer gives, make a new pack', needsNative, async (t) => {
  const { path, refs, writer } = await randomSegment(t, 11, 6, false);
  const packs = new FilterPacks();
  const heads = new BlockHeads();
  t.strictSame([...packed(packs, heads, path, refs, 'zqxwrare7')!].map((v) => v === MAY_MATCH), perBlock(path, refs, 'zqxwrare7'));
  const more = randomEvents(rnd(5), 30, 9, true);
  const { blockOf } = await import('../segments/helpers.js');
  const b = blockOf(more);
  await writer.append(b.bytes, b.meta);
  await writer.close(1_700_000_500_000);
  const grown = (await readSegmentInfo(path, createLogger('error'), Date.now())).blocks.map((x): BlockRef => ({ ...x, fieldGrams: x.fieldGrams === true }));
  t.equal(grown.length, 7);
  for (const q of QUERIES) {
    const got = packed(packs, heads, path, grown, q);
    if (got !== null) t.strictSame([...got].map((v) => v === MAY_MATCH), perBlock(path, grown, q), q);
  }
  // A catalog entry whose lengths differ from the packed ones is not decided by the old pack.
  const odd = grown.map((x, i) => (i === 2 ? { ...x, gramLength: x.gramLength + 1 } : x));
  const got = packed(packs, heads, path, odd, 'zqxwrare7')!;
  t.equal(got[2], UNDECIDED, 'a block whose filters do not read as the catalog says is left to the per-block check');
  t.equal(got.length, 7);
});

/** The same through packed refs (a first-round task's form): `verdictsPacked` over the unit's run of the task's buffer. */
function packedRefs(packs: FilterPacks, heads: BlockHeads, path: string, blocks: readonly BlockRef[], q: string): Uint8Array | null {
  const alternatives = compileQuery(q, { ctx: ctxOf() }).pruning.bloom;
  if (alternatives === null) return null;
  // A unit after another, so the unit's run does not start the buffer.
  const other = blocks.slice(0, 3);
  const wire = toWire({ spec: { text: q, args: {}, ctx: ctxOf(), limits: DEFAULT_LIMITS }, repoName: 'r', units: [{ kind: 'seg', path: '/elsewhere', partition: 0, tags: {}, blocks: other }, { kind: 'seg', path, partition: 0, tags: {}, blocks }], deadline: 0 });
  const fd = openSync(path, 'r');
  try {
    return packs.verdictsPacked(heads, () => fd, path, wire.refs, other.length, blocks.length, packedProbes(blockProbes(alternatives)));
  } finally {
    closeSync(fd);
  }
}

t.test('packed refs matched against a pack in the native call: every framed block as the per-block check decides it', needsNative, async (t) => {
  const r = rnd(8);
  let decided = 0;
  for (const seed of [4, 5]) {
    const { path, refs } = await randomSegment(t, seed, 40);
    const packs = new FilterPacks();
    const heads = new BlockHeads();
    for (const q of QUERIES) {
      const units: BlockRef[][] = [refs, refs.filter(() => r() < 0.4), [...refs].reverse(), refs.slice(7, 23)];
      for (const unit of units) {
        const want = perBlock(path, unit, q);
        // The first packed call of a segment makes its pack (from the refs unpacked); later ones match in the native call.
        for (let round = 0; round < 2; round++) {
          const got = packedRefs(packs, heads, path, unit, q);
          if (got === null) continue;
          t.equal(got.length, unit.length);
          for (let i = 0; i < unit.length; i++) {
            const v = got[i]!;
            if (v === UNDECIDED || (v === MAY_MATCH) !== want[i]) t.fail(`${q} round ${round}: block ${unit[i]!.pos} packed ${v}, per block ${want[i]}`);
            decided++;
          }
        }
      }
    }
    t.equal(packs.size.segments, 1, 'one pack for the segment');
    // A ref whose lengths the pack does not hold is not decided by the old pack: a new one is made.
    const odd = refs.map((x, i) => (i === 2 ? { ...x, gramLength: x.gramLength + 1 } : x));
    const got = packedRefs(packs, heads, path, odd, 'zqxwrare7')!;
    t.equal(got[2], UNDECIDED, 'a block whose filters do not read as its ref says is left to the per-block check');
    t.strictSame([...got].filter((_, i) => i !== 2).map((v) => v === MAY_MATCH), perBlock(path, refs, 'zqxwrare7').filter((_, i) => i !== 2));
  }
  t.ok(decided > 2000, `${decided} verdicts compared`);
});

const WIDE = ctxOf({ start: 0, end: 2_000_000_000_000 });

t.test('the first round over packed refs answers as over ref objects: blocks kept, blocks scanned, counts', async (t) => {
  const a = await randomSegment(t, 51, 30);
  const b = await randomSegment(t, 52, 25);
  // Segment ref lists shared as the executor's snapshot shares them, in runs as cutIntoTasks cuts them.
  shareRefs(a.refs);
  shareRefs(b.refs);
  const units: PruneTask['units'] = [
    { kind: 'seg', path: a.path, partition: 1, tags: {}, blocks: refsSlice(a.refs, 0, 12) },
    { kind: 'seg', path: a.path, partition: 1, tags: {}, blocks: refsSlice(refsSlice(a.refs, 12, 30), 2, 18) },
    { kind: 'seg', path: b.path, partition: 2, tags: {}, blocks: b.refs },
    { kind: 'seg', path: b.path, partition: 2, tags: {}, blocks: b.refs.filter((_, i) => i % 2 === 0) },
  ];
  for (const q of QUERIES) {
    for (const scanBytes of [-1, 1e12]) {
      const spec = { text: `${q} | count()`, args: {}, ctx: WIDE, limits: DEFAULT_LIMITS };
      const task: PruneTask = { spec, repoName: 'r', units, deadline: Date.now() + 60_000, scanBytes };
      const want = pruneScanTask(task);
      // Twice: the packs made by the first call are matched natively by the second.
      for (let round = 0; round < 2; round++) {
        const got = pruneScanPacked(structuredClone(toWire(task)));
        if ('kept' in want) t.strictSame(got, want, `${q}: blocks kept`);
        else {
          t.ok('scanned' in got, `${q}: scanned`);
          if (!('scanned' in got)) continue;
          const { state: _s, ...w } = want.scanned;
          const { state: _g, ...g } = got.scanned;
          t.strictSame(g, w, `${q}: the scan's counts`);
        }
      }
    }
  }
});

/** The events as the driver reads them. */
function fieldsOf(events: readonly StoredEvent[]): Fields[] {
  return events.map((e) => ({ '@timestamp': String(e.timestamp), '@rawstring': e.rawstring, ...e.fields }));
}

/** count() of `q` over the blocks of `unit`, scanned as a query thread scans them. */
function scanCount(path: string, blocks: readonly BlockRef[], q: string) {
  const spec = { text: `${q} | count()`, args: {}, ctx: WIDE, limits: DEFAULT_LIMITS };
  const r = runScanTask({ spec, repoName: 'r', units: [{ kind: 'seg', path, partition: 3, tags: {}, blocks }], deadline: Date.now() + 60_000 });
  return { ...r, count: r.matched };
}

t.test('a damaged filter is left undecided: the first round keeps the block and the scan warns', async (t) => {
  const { path, refs, events } = await randomSegment(t, 21, 8);
  const bytes = readFileSync(path);
  const victim = refs[3]!;
  const at = victim.pos + victim.headerLength + 5;
  bytes[at] = bytes[at]! ^ 0xff;
  writeFileSync(path, bytes);
  if (filterPacksUnavailable === null) t.equal(packed(new FilterPacks(), new BlockHeads(), path, refs, 'zqxwrare7')![3], UNDECIDED);
  const spec = { text: 'zqxwrare7', args: {}, ctx: WIDE, limits: DEFAULT_LIMITS };
  const kept = pruneTask({ spec, repoName: 'r', units: [{ kind: 'seg', path, partition: 3, tags: {}, blocks: refs }], deadline: Date.now() + 60_000 })[0]!;
  t.ok(kept.includes(3), 'the damaged block is kept for the scan');
  const r = scanCount(path, refs, 'zqxwrare7');
  t.ok(r.warnings.some((w) => w.includes(`block at ${victim.pos}`)), 'the scan warns about it');
  const want = rowsOf('zqxwrare7 | count()', fieldsOf(events.filter((_, b) => b !== 3).flat()), { ctx: WIDE })[0]!['_count'];
  t.equal(String(r.count), want, 'every other block answers');
});

t.test('scans with packs answer what the events hold', async (t) => {
  const { path, refs, events } = await randomSegment(t, 31, 30);
  const all = fieldsOf(events.flat());
  for (const q of QUERIES) {
    const r = scanCount(path, refs, q);
    t.equal(String(r.count), rowsOf(`${q} | count()`, all, { ctx: WIDE })[0]!['_count'], q);
    const ruledOut = perBlock(path, refs, q).filter((x) => !x).length;
    t.ok(r.blocksSkipped >= ruledOut, `${q}: at least the ${ruledOut} blocks the per-block check rules out skipped (${r.blocksSkipped})`);
  }
});

t.test('the bound: the least recently used segment is let go', needsNative, async (t) => {
  const a = await randomSegment(t, 41, 5);
  const b = await randomSegment(t, 42, 5);
  const heads = new BlockHeads();
  const packs = new FilterPacks(1);
  packed(packs, heads, a.path, a.refs, 'zqxwrare7');
  t.equal(packs.size.segments, 1);
  packed(packs, heads, b.path, b.refs, 'zqxwrare7');
  t.equal(packs.size.segments, 1, 'over the bound: only the newest kept');
  const big = new FilterPacks();
  packed(big, heads, a.path, a.refs, 'zqxwrare7');
  packed(big, heads, b.path, b.refs, 'zqxwrare7');
  t.equal(big.size.segments, 2);
  t.ok(big.size.bytes > 0);
});
