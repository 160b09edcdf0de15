/**
 * Global state on a real Kafka broker: two stores (two nodes) on one global-events topic see the
 * same state; a mutation answers once applied locally; racing creates resolve to one; a restarted
 * node resumes from its snapshot.
 */
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GlobalStore } from '../../src/global/index.js';
import { KafkaGlobalLog } from '../../src/global/kafka-log.js';
import { RepositoryService } from '../../src/repositories/repository-service.js';
import { SecretBox } from '../../src/auth/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { systemClock } from '../../src/lib/clock.js';
import { startBroker } from '../helpers/kafka-broker.js';

const root = { kind: 'local-admin' as const, isRoot: true as const };

// A broker and several nodes start here: more than tap's default per-file timeout on a busy machine.
t.setTimeout(400_000);

t.test('two nodes share global state through global-events', async (t) => {
  const broker = await startBroker(t);
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-glog-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const log = (name: string): KafkaGlobalLog =>
    new KafkaGlobalLog({ connection: { brokers: broker.brokers }, topicPrefix: 't-', replicationFactor: 1, minInsyncReplicas: 1, dir: join(dir, name), timeoutMs: 15_000, logger: silentLogger });
  const a = await GlobalStore.openShared(log('a'), { snapshotEvery: 5, logger: silentLogger, proposer: 'a' });
  const b = await GlobalStore.openShared(log('b'), { snapshotEvery: 5, logger: silentLogger, proposer: 'b' });
  const box = await SecretBox.openOrCreate(dir);
  const ra = new RepositoryService(a, box, systemClock);
  const rb = new RepositoryService(b, box, systemClock);

  await ra.create(root, 'first');
  t.ok(a.state.repositoryByName('first'), 'read your own write');
  const settled = await Promise.allSettled([ra.create(root, 'race'), rb.create(root, 'race')]);
  t.equal(settled.filter((s) => s.status === 'fulfilled').length, 1, 'one of two racing creates wins');
  const lost = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  t.match(String(lost?.reason), /already exists/, 'the other gets "already exists"');
  for (let i = 0; i < 8; i++) await (i % 2 === 0 ? ra : rb).create(root, `r${i}`);
  // b has applied everything a wrote once its own later write is applied (one order for all).
  await rb.create(root, 'last');
  await new Promise((r) => setTimeout(r, 500));
  t.same([...a.state.repositoriesByName.keys()].sort(), [...b.state.repositoriesByName.keys()].sort(), 'both nodes hold the same repositories');
  t.equal(a.state.seq, b.state.seq, 'and the same sequence');
  const seq = a.state.seq;
  await a.close();

  const again = await GlobalStore.openShared(log('a'), { snapshotEvery: 5, logger: silentLogger, proposer: 'a2' });
  t.equal(again.state.seq, seq, 'a restart from the snapshot plus the rest of the topic reaches the same state');
  t.ok(again.state.repositoryByName('last'));
  await again.close();
  await b.close();
});
