/**
 * The ingest volume in global state: nodes' reports add up per repository and UTC day, days more
 * than KEPT_DAYS before the newest reported are forgotten, a deleted repository's counts go (and
 * reports still in flight for it are not kept), and a snapshot holds it.
 */
import t from 'tap';
import { GlobalState, KEPT_DAYS, type GlobalEvent } from '../../../src/global/index.js';

function state(...events: GlobalEvent[]): GlobalState {
  const s = new GlobalState();
  const base: GlobalEvent[] = [
    { type: 'RepositoryCreated', id: 'r1', name: 'web', description: '', at: 1 },
    { type: 'RepositoryCreated', id: 'r2', name: 'db', description: '', at: 1 },
  ];
  [...base, ...events].forEach((e, i) => s.apply(e, i + 1));
  return s;
}

t.test('reports of several nodes add up per repository and day', async (t) => {
  const s = state(
    { type: 'RepositoryIngestCounted', node: 1, day: 100, counts: [{ repositoryId: 'r1', bytes: 10, events: 1 }, { repositoryId: 'r2', bytes: 5, events: 5 }] },
    { type: 'RepositoryIngestCounted', node: 2, day: 100, counts: [{ repositoryId: 'r1', bytes: 30, events: 3 }] },
    { type: 'RepositoryIngestCounted', node: 1, day: 101, counts: [{ repositoryId: 'r1', bytes: 7, events: 2 }] },
  );
  t.strictSame(s.ingestVolume.of('r1'), [{ day: 101, bytes: 7, events: 2 }, { day: 100, bytes: 40, events: 4 }], 'newest first');
  t.strictSame(s.ingestVolume.of('r2'), [{ day: 100, bytes: 5, events: 5 }]);
  const back = GlobalState.fromSnapshot(JSON.parse(JSON.stringify(s.toSnapshot())));
  t.strictSame(back.ingestVolume.of('r1'), s.ingestVolume.of('r1'), 'a snapshot holds it');
});

t.test('old days are forgotten; a deleted repository\'s counts go', async (t) => {
  const s = state(
    { type: 'RepositoryIngestCounted', node: 1, day: 100, counts: [{ repositoryId: 'r1', bytes: 10, events: 1 }] },
    { type: 'RepositoryIngestCounted', node: 1, day: 100 + KEPT_DAYS - 1, counts: [{ repositoryId: 'r1', bytes: 1, events: 1 }] },
  );
  t.equal(s.ingestVolume.of('r1').length, 2, `${KEPT_DAYS} days are kept`);
  s.apply({ type: 'RepositoryIngestCounted', node: 1, day: 100 + KEPT_DAYS, counts: [{ repositoryId: 'r2', bytes: 1, events: 1 }] }, 50);
  t.strictSame(s.ingestVolume.of('r1').map((d) => d.day), [100 + KEPT_DAYS - 1], 'the oldest day went once a newer one came');
  s.apply({ type: 'RepositoryDeleted', id: 'r2' }, 51);
  t.strictSame(s.ingestVolume.of('r2'), []);
  s.apply({ type: 'RepositoryIngestCounted', node: 2, day: 100 + KEPT_DAYS, counts: [{ repositoryId: 'r2', bytes: 9, events: 9 }] }, 52);
  t.strictSame(s.ingestVolume.of('r2'), [], 'a late report for a deleted repository is not kept');
  t.equal(new GlobalState().toSnapshot().ingestVolume, undefined, 'absent from snapshots when nothing was counted');
});
