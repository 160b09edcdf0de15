import t from 'tap';
import { GlobalStore, MemorySharedLog, type GlobalEvent } from '../../../src/global/index.js';
import { RepositoryService } from '../../../src/repositories/repository-service.js';
import { SecretBox } from '../../../src/auth/index.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { systemClock } from '../../../src/lib/clock.js';
import { tempDir } from './fixtures.js';

const open = (log: MemorySharedLog, proposer: string, snapshotEvery = 1_000_000): Promise<GlobalStore> =>
  GlobalStore.openShared(log.view(), { snapshotEvery, logger: silentLogger, proposer });

const node = (id: number): GlobalEvent => ({ type: 'NodeRegistered', id, uuid: `u${id}`, name: `n${id}`, uri: `http://h${id}`, at: 1 });

t.test('a transaction answers once its own proposal is applied, and every store applies it', async (t) => {
  const log = new MemorySharedLog();
  const a = await open(log, 'a');
  const b = await open(log, 'b');
  await a.transact(() => ({ events: [node(1)], result: undefined }));
  t.ok(a.state.nodes.has(1), 'read your own write');
  await new Promise((r) => setImmediate(r));
  t.ok(b.state.nodes.has(1), 'the other node applies it too');
  t.equal(a.state.seq, b.state.seq);
  t.equal(a.state.decisions, 1);
});

t.test('racing creates of one repository: one wins, the other gets "already exists"', async (t) => {
  const log = new MemorySharedLog();
  const a = await open(log, 'a');
  const b = await open(log, 'b');
  const dir = await tempDir(t);
  const box = await SecretBox.openOrCreate(dir);
  const ra = new RepositoryService(a, box, systemClock);
  const rb = new RepositoryService(b, box, systemClock);
  const root = { kind: 'local-admin' as const, isRoot: true as const };
  const results = await Promise.allSettled([ra.create(root, 'web'), rb.create(root, 'web')]);
  const ok = results.filter((r) => r.status === 'fulfilled');
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  t.equal(ok.length, 1, 'one create wins');
  t.equal(failed.length, 1, 'the other fails');
  t.match(String(failed[0]?.reason), /already exists/);
  await new Promise((r) => setImmediate(r));
  t.equal([...a.state.repositories.values()].length, 1);
  t.equal([...b.state.repositories.values()].length, 1);
  t.same([...a.state.repositories.keys()], [...b.state.repositories.keys()], 'both nodes hold the same repository');
});

t.test('reports apply by their own rules: a stale epoch or a deposed owner changes nothing', async (t) => {
  const log = new MemorySharedLog();
  const a = await open(log, 'a');
  const b = await open(log, 'b');
  await Promise.all([
    a.publish([{ type: 'PartitionEpochStarted', partition: 0, node: 1, epoch: 1, at: 1 }]),
    b.publish([{ type: 'PartitionEpochStarted', partition: 0, node: 2, epoch: 1, at: 1 }]),
  ]);
  await new Promise((r) => setImmediate(r));
  const owner = a.state.cluster.ownerOf(0);
  t.equal(owner, 1, 'the first epoch 1 in log order wins');
  t.equal(b.state.cluster.ownerOf(0), owner, 'on every node');
  await b.publish([{ type: 'PartitionProgress', partition: 0, node: 2, epoch: 1, checkpoint: 50, marks: [['ds', 40, 0]] }]);
  await a.publish([{ type: 'PartitionProgress', partition: 0, node: 1, epoch: 1, checkpoint: 10, marks: [['ds', 9, 3]] }]);
  await b.publish([{ type: 'PartitionEpochStarted', partition: 0, node: 2, epoch: 2, at: 2 }]);
  await a.publish([{ type: 'PartitionProgress', partition: 0, node: 1, epoch: 1, checkpoint: 20, marks: [['ds', 19, 0]] }]);
  await new Promise((r) => setImmediate(r));
  for (const s of [a, b]) {
    const e = s.state.cluster.epochs.get(0)!;
    t.equal(e.node, 2);
    t.equal(e.checkpoint, 10, 'only the owner of the current epoch moved the checkpoint');
    t.same(e.marks.get('ds'), { offset: 9, index: 3 });
    t.same(s.state.cluster.ended.get(0)?.get(1), { epoch: 1, marks: new Map([['ds', { offset: 9, index: 3 }]]) }, 'where node 1 ended');
  }
  t.equal(a.state.decisions, 0, 'reports are not decisions');
});

t.test('a restart resumes from the snapshot and replays only what came after', async (t) => {
  const log = new MemorySharedLog();
  const view = log.view();
  const a = await GlobalStore.openShared(view, { snapshotEvery: 3, logger: silentLogger, proposer: 'a' });
  for (let i = 1; i <= 5; i++) await a.transact(() => ({ events: [node(i)], result: undefined }));
  await a.close();
  const delivered: number[] = [];
  const again = await GlobalStore.openShared(
    {
      ...view,
      follow: (pos, cb) => view.follow(pos, (p, at) => {
        delivered.push(at);
        cb(p, at);
      }),
    },
    { snapshotEvery: 3, logger: silentLogger, proposer: 'a2' },
  );
  t.equal(again.state.nodes.size, 5);
  t.equal(again.state.seq, 5);
  t.same(delivered, [3, 4], 'only the proposals after the snapshot are replayed');
});

t.test('a change on one node is seen by the next decision on another, at once', async (t) => {
  const log = new MemorySharedLog();
  const a = await open(log, 'a');
  const b = await open(log, 'b');
  const dir = await tempDir(t);
  const box = await SecretBox.openOrCreate(dir);
  const root = { kind: 'local-admin' as const, isRoot: true as const };
  await new RepositoryService(a, box, systemClock).create(root, 'fresh');
  // No wait: b decides on a state that includes a's completed create.
  const token = await new RepositoryService(b, box, systemClock).addIngestToken(root, 'fresh', 'second');
  t.equal(token.name, 'second');
  await b.sync();
  t.ok(b.state.repositoryByName('fresh'), 'sync() catches up too');
});
