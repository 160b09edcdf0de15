/**
 * What retention decides over and the sizes the API answers (repository-segments.ts): in a cluster
 * the listing in global state, each segment once whatever its copies, plus this node's unlisted
 * segments; rewrites replace what they rewrote; segments below the retention bound no longer count
 * in the sizes. On a single node, the node's catalog.
 */
import t from 'tap';
import { GlobalState, type GlobalEvent } from '../../../src/global/index.js';
import type { StoredSegment } from '../../../src/global/segment-holdings.js';
import type { SegmentInfo } from '../../../src/segments/catalog.js';
import { repositorySegments, repositorySizes } from '../../../src/retention/repository-segments.js';

const seg = (id: string, o: Partial<Omit<StoredSegment, 'uncompressed'>> & { uncompressed?: number | undefined } = {}): StoredSegment => {
  const out: StoredSegment = {
  id, repo: 'r1', ds: 'ds', partition: 0, epoch: 1, writer: 1, file: `r1/ds/${id}.seg`, bytes: 100, uncompressed: 300, crc: 0, events: 10,
  minTs: 0, maxTs: 1000, firstOffset: 0, firstIndex: 0, lastOffset: 0, lastIndex: 0, ...(o as Partial<StoredSegment>),
  };
  if (o.uncompressed === undefined && 'uncompressed' in o) delete out.uncompressed;
  return out;
};

const local = (id: string, o: { closed?: boolean; bytes?: number; maxTs?: number; repo?: string } = {}): SegmentInfo =>
  ({
    path: `/d/${id}.seg`,
    meta: { id, repo: o.repo ?? 'r1', ds: 'ds', tags: {}, partition: 0, createdAt: 0 },
    blocks: [{ pos: 0, compressedLength: 1, uncompressedLength: 50, eventCount: 1, minTs: 0, maxTs: o.maxTs ?? 2000 }],
    closed: o.closed ?? true,
    bytes: o.bytes ?? 40,
  }) as unknown as SegmentInfo;

function state(...events: GlobalEvent[]): GlobalState {
  const s = new GlobalState();
  const base: GlobalEvent[] = [
    { type: 'RepositoryCreated', id: 'r1', name: 'web', description: '', at: 1 },
    { type: 'NodeRegistered', id: 1, uuid: 'a', name: 'n1', uri: 'u1', at: 1 },
    { type: 'NodeRegistered', id: 2, uuid: 'b', name: 'n2', uri: 'u2', at: 1 },
  ];
  [...base, ...events].forEach((e, i) => s.apply(e, i + 1));
  return s;
}

t.test('a cluster: a segment with two copies counts once; unlisted local segments count too', async (t) => {
  const s = state(
    { type: 'SegmentStored', node: 1, segment: seg('a', { maxTs: 100 }) },
    { type: 'SegmentStored', node: 2, segment: seg('a', { maxTs: 100 }) },
    { type: 'SegmentStored', node: 2, segment: seg('b', { maxTs: 200, bytes: 70, uncompressed: undefined }) },
  );
  // This node holds a copy of a, and an open segment o not listed yet.
  const mine = [local('a', { bytes: 100 }), local('o', { closed: false, bytes: 10 })];
  const stats = repositorySegments(s, mine, true).get('r1')!;
  t.strictSame([...stats.keys()].sort(), ['a', 'b', 'o']);
  t.match(stats.get('a'), { bytes: 100, uncompressed: 300, closed: true, maxTs: 100 });
  t.match(stats.get('b'), { bytes: 70, uncompressed: 70 }, 'a listing without the uncompressed size, held elsewhere: its file bytes');
  t.match(stats.get('o'), { bytes: 10, closed: false });
  t.strictSame(repositorySizes(s, mine, true, 'r1'), { compressed: 170, uncompressed: 370 }, 'sizes: the listed segments only (an open one is not the same on every node)');
  t.strictSame(repositorySizes(s, [], true, 'r1'), { compressed: 170, uncompressed: 370 }, 'the same on a node that holds none of them');
});

t.test('a rewrite replaces what it rewrote; a segment below the bound is out of the sizes', async (t) => {
  const s = state(
    { type: 'SegmentStored', node: 1, segment: seg('a', { maxTs: 100 }) },
    { type: 'SegmentStored', node: 1, segment: seg('a2', { maxTs: 100, bytes: 60, uncompressed: 150, replaces: 'a' }) },
    { type: 'SegmentStored', node: 1, segment: seg('b', { maxTs: 500 }) },
  );
  t.strictSame([...repositorySegments(s, [local('a')], true).get('r1')!.keys()].sort(), ['a2', 'b'], 'the original, listed or held, is left out');
  t.strictSame(repositorySizes(s, [], true, 'r1'), { compressed: 160, uncompressed: 450 });
  s.apply({ type: 'RetentionBoundRaised', id: 'r1', before: 300, at: 9 }, 99);
  t.strictSame(repositorySizes(s, [], true, 'r1'), { compressed: 100, uncompressed: 300 }, 'decided past retention: no longer counted, wherever copies wait to be deleted');
});

t.test('a single node: its catalog', async (t) => {
  const s = state();
  const mine = [local('x', { bytes: 40 }), local('y', { bytes: 60, closed: false }), local('z', { repo: 'r2' })];
  const byRepo = repositorySegments(s, mine, false);
  t.strictSame([...byRepo.keys()].sort(), ['r1', 'r2']);
  t.strictSame(repositorySizes(s, mine.slice(0, 2), false, 'r1'), { compressed: 100, uncompressed: 100 }, 'open segments count on a single node');
});
