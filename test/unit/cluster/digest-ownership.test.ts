/**
 * DigestOwnership's progress reports across ownership changes: a node that gets a partition back
 * must not report a checkpoint its earlier digester of that partition noted (broker-outage loss
 * hunt: an earlier epoch's last reports may never have been applied, so the new epoch starts lower,
 * and a stale, higher checkpoint would let the next owner skip events nobody wrote).
 */
import t from 'tap';
import { GlobalStore, MemorySharedLog, type GlobalEvent, type SharedGlobalLog } from '../../../src/global/index.js';
import { DigestOwnership } from '../../../src/cluster/digest-ownership.js';
import type { Digest } from '../../../src/digest/index.js';
import { SegmentCatalog } from '../../../src/segments/catalog.js';
import { LogsvcError } from '../../../src/lib/errors.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { systemClock } from '../../../src/lib/clock.js';
import { tempDir } from '../global/fixtures.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** The part of Digest that ownership drives, recording what it is told. */
class RecordingDigest {
  readonly owned = new Map<number, { from: number; epoch: number | undefined }>();
  readonly calls: string[] = [];
  ownFrom(p: number, from: number, _marks: unknown, epoch?: number): Promise<void> {
    this.owned.set(p, { from, epoch });
    this.calls.push(`own ${p} from ${from} epoch ${epoch}`);
    return Promise.resolve();
  }
  release(p: number, mode: string): Promise<number | null> {
    const o = this.owned.get(p);
    this.owned.delete(p);
    this.calls.push(`release ${p} ${mode}`);
    return Promise.resolve(o === undefined ? null : o.from);
  }
  owns(p: number): boolean {
    return this.owned.has(p);
  }
}

t.test('a partition taken back does not report the checkpoint of its earlier digester', async (t) => {
  const log = new MemorySharedLog();
  // Node 1's view of the log fails proposals while `down` (Kafka unreachable): reports are lost.
  let down = false;
  const inner = log.view();
  const flaky: SharedGlobalLog = { ...inner, propose: (p) => (down ? Promise.reject(new LogsvcError('E_UNAVAILABLE', 'Kafka is down')) : inner.propose(p)) };
  const a = await GlobalStore.openShared(flaky, { snapshotEvery: 1_000_000, logger: silentLogger, proposer: 'n1' });
  const b = await GlobalStore.openShared(log.view(), { snapshotEvery: 1_000_000, logger: silentLogger, proposer: 'n2' });
  const setup: GlobalEvent[] = [
    { type: 'NodeRegistered', id: 1, uuid: 'u1', name: 'n1', uri: 'http://n1', at: 1 },
    { type: 'NodeRegistered', id: 2, uuid: 'u2', name: 'n2', uri: 'http://n2', at: 1 },
    { type: 'PartitionLayoutSet', partitions: [[1, 2]] },
    { type: 'PartitionEpochStarted', partition: 0, node: 1, epoch: 1, at: 1 },
  ];
  await b.publish(setup);
  await until('node 1 applied the setup', () => a.state.cluster.epochs.get(0)?.epoch === 1);

  const digest = new RecordingDigest();
  const catalog = new SegmentCatalog(await tempDir(t));
  const ownership = new DigestOwnership({
    selfId: 1,
    store: a,
    digest: digest as unknown as Digest,
    catalog,
    liveness: { isAlive: () => true, lastHeartbeat: () => Date.now() },
    clock: systemClock,
    logger: silentLogger,
    intervalMs: 20,
    graceMs: 60,
  });
  ownership.start();
  t.teardown(() => ownership.stop());
  await until('node 1 digests partition 0 in epoch 1', () => digest.owned.get(0)?.epoch === 1);

  // Epoch 1: the digester gets to offset 500, but Kafka is down, so no report is applied.
  down = true;
  ownership.noteCheckpoint(0, 500);
  await sleep(100);
  t.equal(b.state.cluster.epochs.get(0)?.checkpoint, 0, 'no report of epoch 1 was applied');

  // Node 2 takes partition 0 over from checkpoint 0, digests to 200, and hands it back.
  await b.publish([{ type: 'PartitionEpochStarted', partition: 0, node: 2, epoch: 2, at: 2 }]);
  await until('node 1 gave partition 0 up', () => !digest.owns(0));
  await b.publish([
    { type: 'PartitionProgress', partition: 0, node: 2, epoch: 2, checkpoint: 200, marks: [['ds', 199, 0]] },
    { type: 'PartitionEpochStarted', partition: 0, node: 1, epoch: 3, at: 3 },
  ]);
  down = false;
  await until('node 1 digests partition 0 in epoch 3', () => digest.owned.get(0)?.epoch === 3);
  t.equal(digest.owned.get(0)?.from, 200, 'epoch 3 starts where node 2 handed it over');

  // The new digester has not noted a checkpoint yet (it is catching up): nothing may be reported
  // past 200, or the next owner would start past events epoch 3 has not written.
  await sleep(300);
  t.equal(b.state.cluster.epochs.get(0)?.checkpoint, 200, 'the partition checkpoint stays where epoch 3 started');
  ownership.noteCheckpoint(0, 260);
  await until('the new digester\'s checkpoint is reported', () => b.state.cluster.epochs.get(0)?.checkpoint === 260);
  t.pass('the new digester\'s own checkpoint is reported');
});

t.test('a partition deposed and given back before this node looked again is digested anew in the new epoch', async (t) => {
  // Seen on a loaded 3-node cluster (shared.test): node 2 took partition 3 over from node 1 (thought
  // dead) and at once handed it back (node 1 comes first); node 1 saw only its own epoch again and
  // went on digesting as epoch 1, whose blocks past epoch 1's end marks queries leave out and
  // fencing voids, and whose reports nobody applies: acknowledged events invisible until a restart.
  const log = new MemorySharedLog();
  const a = await GlobalStore.openShared(log.view(), { snapshotEvery: 1_000_000, logger: silentLogger, proposer: 'n1' });
  const b = await GlobalStore.openShared(log.view(), { snapshotEvery: 1_000_000, logger: silentLogger, proposer: 'n2' });
  await b.publish([
    { type: 'NodeRegistered', id: 1, uuid: 'u1', name: 'n1', uri: 'http://n1', at: 1 },
    { type: 'NodeRegistered', id: 2, uuid: 'u2', name: 'n2', uri: 'http://n2', at: 1 },
    { type: 'PartitionLayoutSet', partitions: [[1, 2]] },
    { type: 'PartitionEpochStarted', partition: 0, node: 1, epoch: 1, at: 1 },
  ]);
  await until('node 1 applied the setup', () => a.state.cluster.epochs.get(0)?.epoch === 1);
  const digest = new RecordingDigest();
  const ownership = new DigestOwnership({
    selfId: 1, store: a, digest: digest as unknown as Digest, catalog: new SegmentCatalog(await tempDir(t)),
    liveness: { isAlive: () => true, lastHeartbeat: () => Date.now() }, clock: systemClock, logger: silentLogger,
    intervalMs: 20, graceMs: 60,
  });
  ownership.start();
  t.teardown(() => ownership.stop());
  await until('node 1 digests partition 0 in epoch 1', () => digest.owned.get(0)?.epoch === 1);
  ownership.noteCheckpoint(0, 40);
  await until('epoch 1 reported its checkpoint', () => b.state.cluster.epochs.get(0)?.checkpoint === 40);

  // Epoch 2 (node 2, from 40) and epoch 3 (node 1 again) in one batch: node 1 never sees epoch 2 as current.
  await b.publish([
    { type: 'PartitionEpochStarted', partition: 0, node: 2, epoch: 2, at: 2 },
    { type: 'PartitionEpochStarted', partition: 0, node: 1, epoch: 3, at: 3 },
  ]);
  await until('node 1 digests partition 0 in epoch 3', () => digest.owned.get(0)?.epoch === 3);
  t.ok(digest.calls.includes('release 0 abandon'), `epoch 1's digester was abandoned (${digest.calls.join('; ')})`);
  t.equal(digest.owned.get(0)?.from, 40, 'epoch 3 starts from its own checkpoint');
  ownership.noteCheckpoint(0, 70);
  await until('epoch 3 reports progress that is applied', () => b.state.cluster.epochs.get(0)?.checkpoint === 70);
  t.pass('reports of the new epoch are applied');
});
