/**
 * IngestService.admit(): the cheap refusals before a body is parsed. Each bound (acknowledged bytes
 * not yet in segments, sealed blocks waiting in memory for the digest, the disk) refuses with
 * E_UNAVAILABLE (503 + Retry-After) and a message naming the amount and the limit; at the limit
 * itself ingest is still admitted. The store and queue are real ones in a temp dir (cheap), and an
 * admitted request is committed through them to show that admission is all that stands in the way.
 */
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedGlobalLog, GlobalStore } from '../../../src/global/index.js';
import { EmbeddedDigestQueue } from '../../../src/queue/index.js';
import { IngestService } from '../../../src/ingest/ingest-service.js';
import { datasourceId, readSummary } from '../../../src/events/index.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { silentLogger } from '../../../src/lib/logger.js';

const T0 = 1_700_000_000_000;
const MAX_UNDIGESTED = 2_000_000;
const MAX_BACKLOG = 1_000_000;

interface Rig {
  svc: IngestService;
  store: GlobalStore;
  queue: EmbeddedDigestQueue;
  /** What the dependency functions answer; change to move the node over a bound. */
  now: { undigested: number; backlog: number; disk: string | null };
}

async function rig(t: Test, random: () => number = () => 0.75): Promise<Rig> {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-ingest-service-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = await GlobalStore.open(new EmbeddedGlobalLog(join(dir, 'global')), { snapshotEvery: 1000, logger: silentLogger });
  t.teardown(() => store.close());
  await store.transact(() => ({ events: [{ type: 'RepositoryCreated', id: 'repo-1', name: 'sandbox', description: '', at: T0 }], result: undefined }));
  const queue = await EmbeddedDigestQueue.open({ dir: join(dir, 'queue'), partitions: 2, logger: silentLogger, onFatal: (e) => t.fail(`queue failed: ${e.message}`) });
  t.teardown(() => queue.close());
  const now: Rig['now'] = { undigested: 0, backlog: 0, disk: null };
  const svc = new IngestService({
    store,
    queue,
    clock: new ManualClock(T0),
    maxDatasourcesPerRepository: 10,
    maxUndigestedBytes: MAX_UNDIGESTED,
    undigestedBytes: () => now.undigested,
    maxDigestBacklogBytes: MAX_BACKLOG,
    digestBacklogBytes: () => now.backlog,
    diskProblem: () => now.disk,
    livePartitions: () => [0, 1],
    random,
  });
  return { svc, store, queue, now };
}

t.test('admitted under every bound and at each limit itself', async (t) => {
  const { svc, store, queue, now } = await rig(t);
  t.doesNotThrow(() => svc.admit(), 'an idle node');
  now.undigested = MAX_UNDIGESTED;
  now.backlog = MAX_BACKLOG;
  t.doesNotThrow(() => svc.admit(), 'exactly at both limits');
  now.undigested = MAX_UNDIGESTED - 1;
  now.backlog = MAX_BACKLOG - 1;
  t.doesNotThrow(() => svc.admit(), 'just under both');

  // What admission lets through is committed: durable in the chosen partition, datasource registered.
  await svc.ingest('repo-1', [{ tags: { host: 'a' }, events: [{ timestamp: T0, timezone: 'Z', rawstring: 'hello', fields: {} }] }], T0);
  t.equal(queue.endOffset(0), 0);
  t.ok(queue.endOffset(1) > 0, 'appended to partition 1 (random 0.75 of [0, 1])');
  const recs = [];
  for await (const r of queue.read(1, 0)) recs.push(r);
  t.equal(recs.length, 1);
  t.match(readSummary(recs[0]!.payload), { repo: 'repo-1', at: T0, groups: [{ ds: datasourceId('repo-1', { host: 'a' }), n: 1 }] });
  t.ok(store.state.repositories.get('repo-1')!.datasources.has(datasourceId('repo-1', { host: 'a' })), 'the datasource is registered');
});

t.test('refused with E_UNAVAILABLE when acknowledged bytes wait for the digest', async (t) => {
  const { svc, now } = await rig(t);
  now.undigested = MAX_UNDIGESTED + 1;
  t.throws(() => svc.admit(), {
    code: 'E_UNAVAILABLE',
    httpStatus: 503,
    retriable: true,
    message: `ingest is paused: ${MAX_UNDIGESTED + 1} acknowledged bytes are waiting for digest (limit ${MAX_UNDIGESTED}); retry later`,
  });
  now.undigested = 0;
  t.doesNotThrow(() => svc.admit(), 'admitted again once the digest caught up');
});

t.test('refused with E_UNAVAILABLE when sealed blocks wait in memory (the digest is behind)', async (t) => {
  const { svc, now } = await rig(t);
  now.backlog = MAX_BACKLOG + 1;
  t.throws(() => svc.admit(), {
    code: 'E_UNAVAILABLE',
    httpStatus: 503,
    retriable: true,
    message: `ingest is paused: the digest is behind, ${MAX_BACKLOG + 1} bytes of events wait in memory to be written to segments (limit ${MAX_BACKLOG}); retry later`,
  });
  // The backlog is its own bound: far below the undigested limit it still refuses.
  now.backlog = 50_000_000;
  t.throws(() => svc.admit(), { code: 'E_UNAVAILABLE', message: /the digest is behind, 50000000 bytes of events wait in memory .*\(limit 1000000\)/ });
  now.backlog = MAX_BACKLOG;
  t.doesNotThrow(() => svc.admit(), 'admitted again at the limit');
});

t.test('refused with E_UNAVAILABLE on a disk problem, naming it', async (t) => {
  const { svc, now } = await rig(t);
  now.disk = 'the data disk is 97% full (limit 95%)';
  t.throws(() => svc.admit(), { code: 'E_UNAVAILABLE', httpStatus: 503, message: 'ingest is paused: the data disk is 97% full (limit 95%)' });
  now.disk = null;
  t.doesNotThrow(() => svc.admit());
});

t.test('with several bounds over, the undigested bytes are named first, then the backlog, then the disk', async (t) => {
  const { svc, now } = await rig(t);
  now.undigested = MAX_UNDIGESTED + 5;
  now.backlog = MAX_BACKLOG + 5;
  now.disk = 'disk full';
  t.throws(() => svc.admit(), { message: /acknowledged bytes are waiting for digest/ });
  now.undigested = 0;
  t.throws(() => svc.admit(), { message: /the digest is behind/ });
  now.backlog = 0;
  t.throws(() => svc.admit(), { message: /disk full/ });
});

t.test('a partition busy making an earlier append durable is passed over for an idle one, while there are draws left', async (t) => {
  const draws: number[] = [];
  const { svc, queue } = await rig(t, () => draws.shift() ?? 0.75);
  const group = (host: string) => [{ tags: { host }, events: [{ timestamp: T0, timezone: 'Z', rawstring: `hello from ${host}`, fields: {} }] }];
  await svc.ingest('repo-1', group('warm'), T0); // registers nothing new below: only the partition choice is timed
  const before = [queue.endOffset(0), queue.endOffset(1)];

  // Partition 1 is busy (an append is being written and fsync'ed); the first draw names it, the second 0.
  const inFlight = queue.append(1, Buffer.from('earlier'));
  t.ok(queue.busy(1), 'an append under way makes its partition busy');
  t.notOk(queue.busy(0));
  draws.push(0.75, 0.25);
  await svc.ingest('repo-1', group('warm'), T0);
  await inFlight;
  t.ok(queue.endOffset(0) > before[0]!, 'appended to the idle partition 0');
  // The flush that made it durable ends a few ticks after the append resolved.
  for (let i = 0; i < 1000 && queue.busy(1); i++) await new Promise((r) => setTimeout(r, 1));
  t.notOk(queue.busy(1), 'idle again once its flush is over');

  // Every draw names a busy partition: the last draw is taken (no draw is wasted waiting).
  const end1 = queue.endOffset(1);
  const again = queue.append(1, Buffer.from('earlier again'));
  const end0 = queue.endOffset(0);
  draws.push(0.75, 0.75, 0.75, 0.75, 0.25);
  await svc.ingest('repo-1', group('warm'), T0);
  await again;
  t.equal(queue.endOffset(0), end0, 'partition 0 untouched');
  t.ok(queue.endOffset(1) > end1 + 16 + 'earlier again'.length, 'appended behind the busy append on partition 1');
  t.strictSame(draws, [0.25], 'four draws, then the last one taken');
});
