import t from 'tap';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddedGlobalLog, GlobalState, GlobalStore, type GlobalEvent, type GlobalLog, type LoadedLog, type SnapshotData } from '../../../src/global/index.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { pack } from '../../../src/lib/msgpack.js';
import { encodeFrame } from '../../../src/storage/index.js';
import { writeFile } from 'node:fs/promises';
import { ALL_EVENTS, EXPECTED_FINAL, capturingLogger, dump, nodeEvent, tempDir } from './fixtures.js';

const BIG = 1_000_000;

async function openStore(dir: string, snapshotEvery = BIG, logger = silentLogger): Promise<GlobalStore> {
  return GlobalStore.open(new EmbeddedGlobalLog(dir), { snapshotEvery, logger });
}

async function commitEach(store: GlobalStore, events: GlobalEvent[]): Promise<void> {
  for (const e of events) await store.transact(() => ({ events: [e], result: undefined }));
}

function rebuild(events: GlobalEvent[]): GlobalState {
  const s = new GlobalState();
  for (const e of events) s.apply(e, s.seq + 1);
  return s;
}

/** A GlobalLog that delegates to a real one and can be told to fail. */
class FlakyLog implements GlobalLog {
  failAppends = 0;
  failSnapshots = 0;
  appended: number[] = [];
  snapshots: number[] = [];
  constructor(private readonly inner: GlobalLog) {}
  open(): Promise<LoadedLog> {
    return this.inner.open();
  }
  async append(seq: number, event: GlobalEvent): Promise<void> {
    if (this.failAppends > 0) {
      this.failAppends--;
      throw new Error(`injected append failure at ${seq}`);
    }
    await this.inner.append(seq, event);
    this.appended.push(seq);
  }
  async appendBatch(firstSeq: number, events: GlobalEvent[]): Promise<void> {
    if (this.failAppends > 0) {
      this.failAppends--;
      throw new Error(`injected append failure at ${firstSeq}`);
    }
    await this.inner.appendBatch(firstSeq, events);
    events.forEach((_, i) => this.appended.push(firstSeq + i));
  }
  async writeSnapshot(data: SnapshotData): Promise<void> {
    if (this.failSnapshots > 0) {
      this.failSnapshots--;
      throw new Error(`injected snapshot failure at ${data.seq}`);
    }
    await this.inner.writeSnapshot(data);
    this.snapshots.push(data.seq);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

t.test('a new store on an empty dir is empty and creates the first log', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir);
  t.equal(store.state.seq, 0);
  t.equal(store.state.users.size, 0);
  await store.close();
  t.same(await readdir(dir), ['events-000000000001.log']);
  const buf = await readFile(join(dir, 'events-000000000001.log'));
  t.same([...buf], [0x4c, 0x53, 0x47, 0x45, 1, 0, 0, 0], 'header: "LSGE", u32 LE version 1');
});

t.test('every event type survives close and reopen', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir);
  await commitEach(store, ALL_EVENTS);
  t.strictSame(dump(store.state), EXPECTED_FINAL, 'in memory');
  await store.close();
  const again = await openStore(dir);
  t.strictSame(dump(again.state), EXPECTED_FINAL, 'after reopen');
  await again.close();
});

t.test('every prefix of the events reopens to the same state as applying it in memory', async (t) => {
  for (let n = 1; n <= ALL_EVENTS.length; n++) {
    const dir = await tempDir(t);
    const store = await openStore(dir);
    await commitEach(store, ALL_EVENTS.slice(0, n));
    await store.close();
    const again = await openStore(dir);
    t.strictSame(dump(again.state), dump(rebuild(ALL_EVENTS.slice(0, n))), `${n} events (last: ${ALL_EVENTS[n - 1]!.type})`);
    await again.close();
  }
});

t.test('one transaction with many events; results are returned', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir);
  const r = await store.transact((s) => ({ events: ALL_EVENTS, result: `from ${s.seq}` }));
  t.equal(r, 'from 0');
  t.strictSame(dump(store.state), EXPECTED_FINAL);
  const r2 = await store.transact((s) => ({ events: [], result: s.seq }));
  t.equal(r2, ALL_EVENTS.length, 'a transaction without events changes nothing');
  t.equal(store.state.seq, ALL_EVENTS.length);
  await store.close();
  const again = await openStore(dir);
  t.strictSame(dump(again.state), EXPECTED_FINAL);
  await again.close();
});

t.test('the same events with snapshots in between reopen to the same state', async (t) => {
  for (const every of [1, 2, 3, 5, 7]) {
    const dir = await tempDir(t);
    const store = await openStore(dir, every);
    await commitEach(store, ALL_EVENTS);
    t.strictSame(dump(store.state), EXPECTED_FINAL, `snapshotEvery ${every}: in memory`);
    await store.close();
    const again = await openStore(dir, every);
    t.strictSame(dump(again.state), EXPECTED_FINAL, `snapshotEvery ${every}: reopened`);
    await again.close();
  }
});

t.test('a decision that throws appends nothing, and later transactions still work', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir);
  await commitEach(store, ALL_EVENTS.slice(0, 3));
  const logPath = join(dir, 'events-000000000001.log');
  const sizeBefore = (await stat(logPath)).size;
  const before = dump(store.state);
  const boom = new Error('decided no');
  await t.rejects(
    store.transact(() => {
      throw boom;
    }),
    boom,
  );
  t.strictSame(dump(store.state), before, 'state unchanged');
  t.equal((await stat(logPath)).size, sizeBefore, 'nothing appended');
  const r = await store.transact((s) => ({ events: [ALL_EVENTS[3]!], result: s.seq }));
  t.equal(r, 3);
  t.equal(store.state.seq, 4);
  await store.close();
  const again = await openStore(dir);
  t.strictSame(dump(again.state), dump(rebuild(ALL_EVENTS.slice(0, 4))));
  await again.close();
});

t.test('concurrent transactions are serialized', async (t) => {
  for (const every of [BIG, 7]) {
    const dir = await tempDir(t);
    const store = await openStore(dir, every);
    const seen: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        store.transact((s) => {
          const next = s.seq + 1;
          seen.push(next);
          return { events: [nodeEvent(next)], result: next };
        }),
      ),
    );
    t.strictSame(results, Array.from({ length: 50 }, (_, i) => i + 1), `snapshotEvery ${every}: each saw the previous one's result`);
    t.strictSame(seen, results, 'decisions ran one at a time, in call order');
    t.equal(store.state.seq, 50);
    t.equal(store.state.nodes.size, 50, 'no duplicates');
    await store.close();
    const again = await openStore(dir, every);
    t.equal(again.state.seq, 50);
    t.strictSame([...again.state.nodes.keys()], results);
    t.strictSame(again.state.toSnapshot(), store.state.toSnapshot());
    await again.close();
  }
});

t.test('a failing transaction in the middle of concurrent ones fails only its caller', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir);
  const ps = Array.from({ length: 10 }, (_, i) =>
    store.transact((s) => {
      if (i === 4) throw new Error('no 4');
      return { events: [nodeEvent(s.seq + 1)], result: s.seq + 1 };
    }),
  );
  const settled = await Promise.allSettled(ps);
  t.strictSame(
    settled.map((x) => x.status),
    ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
  );
  t.strictSame(
    settled.filter((x) => x.status === 'fulfilled').map((x) => (x as PromiseFulfilledResult<number>).value),
    [1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  t.equal(store.state.seq, 9);
  await store.close();
});

t.test('close waits for transactions in flight', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir);
  const p = store.transact(() => ({ events: ALL_EVENTS, result: 'done' }));
  await store.close();
  t.equal(await p, 'done');
  const again = await openStore(dir);
  t.strictSame(dump(again.state), EXPECTED_FINAL);
  await again.close();
});

t.test('onApplied listeners see each event in order, and can unsubscribe', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir);
  const seen: string[] = [];
  const seqs: number[] = [];
  const off = store.onApplied((e) => {
    seen.push(e.type);
    seqs.push(store.state.seq);
  });
  await store.transact(() => ({ events: ALL_EVENTS.slice(0, 3), result: null }));
  t.strictSame(seen, ['UserAdded', 'UserAdded', 'UserAdded']);
  t.strictSame(seqs, [1, 2, 3], 'called after the event is applied');
  off();
  await store.transact(() => ({ events: [ALL_EVENTS[3]!], result: null }));
  t.equal(seen.length, 3, 'no calls after unsubscribing');
  await store.close();
});

t.test('snapshots: at most two are kept, old logs are deleted, reopen is identical', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir, 3);
  const events = Array.from({ length: 20 }, (_, i) => nodeEvent(i + 1));
  for (const [i, e] of events.entries()) {
    await store.transact(() => ({ events: [e], result: null }));
    const names = await readdir(dir);
    const snaps = names.filter((n) => n.startsWith('snapshot-'));
    t.ok(snaps.length <= 2, `after event ${i + 1}: ${snaps.length} snapshots`);
    t.equal(names.filter((n) => n.endsWith('.tmp')).length, 0, 'no temporary files');
  }
  const names = (await readdir(dir)).sort();
  t.strictSame(names, ['events-000000000016.log', 'events-000000000019.log', 'snapshot-000000000015.bin', 'snapshot-000000000018.bin']);
  const before = store.state.toSnapshot();
  await store.close();

  const loaded = await new EmbeddedGlobalLog(dir).open();
  t.equal(loaded.snapshot?.seq, 18, 'the newest snapshot is used');
  t.strictSame(
    loaded.events.map((e) => e.seq),
    [19, 20],
    'only events after it are replayed',
  );
  t.strictSame(loaded.repairs, []);

  const again = await openStore(dir, 3);
  t.strictSame(again.state.toSnapshot(), before);
  t.strictSame(dump(again.state), dump(rebuild(events)));
  // 2 events replayed count towards the next snapshot: one more event makes a snapshot at 21
  await again.transact(() => ({ events: [nodeEvent(21)], result: null }));
  t.strictSame((await readdir(dir)).sort(), ['events-000000000019.log', 'events-000000000022.log', 'snapshot-000000000018.bin', 'snapshot-000000000021.bin']);
  await again.close();
});

t.test('a snapshot is taken after a multi-event transaction crosses the threshold', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir, 3);
  await store.transact(() => ({ events: [nodeEvent(1), nodeEvent(2), nodeEvent(3), nodeEvent(4), nodeEvent(5)], result: null }));
  // with a single snapshot, the log before it is kept: it is the only fallback if the snapshot is damaged
  t.strictSame((await readdir(dir)).sort(), ['events-000000000001.log', 'events-000000000006.log', 'snapshot-000000000005.bin']);
  await store.close();
  const again = await openStore(dir, 3);
  t.equal(again.state.seq, 5);
  t.equal(again.state.nodes.size, 5);
  await again.close();
});

t.test('an append failure rejects the transaction and leaves state untouched', async (t) => {
  const dir = await tempDir(t);
  const log = new FlakyLog(new EmbeddedGlobalLog(dir));
  const store = await GlobalStore.open(log, { snapshotEvery: BIG, logger: silentLogger });
  await store.transact(() => ({ events: [nodeEvent(1)], result: null }));
  log.failAppends = 1;
  await t.rejects(
    store.transact(() => ({ events: [nodeEvent(2)], result: null })),
    { message: 'injected append failure at 2' },
  );
  t.equal(store.state.seq, 1, 'the event was not applied');
  t.equal(store.state.nodes.has(2), false);
  await store.transact(() => ({ events: [nodeEvent(3)], result: null }));
  t.equal(store.state.seq, 2, 'the next event gets the next sequence number');
  t.strictSame(log.appended, [1, 2]);
  await store.close();
  const again = await openStore(dir);
  t.strictSame([...again.state.nodes.keys()], [1, 3]);
  await again.close();
});

t.test('a failed snapshot is logged, does not fail the transaction, and is retried', async (t) => {
  const dir = await tempDir(t);
  const log = new FlakyLog(new EmbeddedGlobalLog(dir));
  const logger = capturingLogger();
  const store = await GlobalStore.open(log, { snapshotEvery: 2, logger });
  log.failSnapshots = 1;
  await store.transact(() => ({ events: [nodeEvent(1)], result: null }));
  t.equal(await store.transact(() => ({ events: [nodeEvent(2)], result: 'ok' })), 'ok');
  t.strictSame(log.snapshots, []);
  t.strictSame(logger.lines, [{ level: 'error', msg: 'global state snapshot failed', fields: { error: 'injected snapshot failure at 2' } }]);
  await store.transact(() => ({ events: [], result: null }));
  t.strictSame(log.snapshots, [2], 'retried on the next transaction');
  await store.close();
  const again = await openStore(dir);
  t.equal(again.state.seq, 2);
  await again.close();
});

t.test('repairs found on open are logged as errors', async (t) => {
  const dir = await tempDir(t);
  const store = await openStore(dir);
  await commitEach(store, ALL_EVENTS.slice(0, 2));
  await store.close();
  const { truncate } = await import('node:fs/promises');
  const p = join(dir, 'events-000000000001.log');
  await truncate(p, (await stat(p)).size - 1);
  const logger = capturingLogger();
  const again = await openStore(dir, BIG, logger);
  t.equal(again.state.seq, 1);
  t.equal(logger.lines.length, 1);
  t.equal(logger.lines[0]!.level, 'error');
  t.equal(logger.lines[0]!.msg, 'global state repaired on open');
  t.match(String(logger.lines[0]!.fields?.detail), /^global log events-000000000001\.log: truncated-payload at offset \d+; kept 1 events before it/);
  await again.close();
});

t.test('a snapshot file from before datasources were tracked still opens', async (t) => {
  const dir = await tempDir(t);
  const snap = rebuild(ALL_EVENTS).toSnapshot();
  const old = { ...snap, repositories: snap.repositories.map(({ datasources: _d, ...r }) => r) };
  const header = Buffer.from([0x4c, 0x53, 0x47, 0x53, 1, 0, 0, 0]); // "LSGS", version 1
  await writeFile(join(dir, 'snapshot-000000000028.bin'), Buffer.concat([header, encodeFrame(pack(old))]));
  t.equal(snap.seq, 28);
  const store = await openStore(dir);
  t.equal(store.state.seq, 28);
  t.equal(store.state.repositories.get('r1')!.datasources.size, 0);
  await store.transact(() => ({ events: [{ type: 'DatasourceCreated', repositoryId: 'r1', id: 'ds-9', tags: { k: 'v' }, at: 5 }], result: null }));
  await store.close();
  t.strictSame((await readdir(dir)).sort(), ['events-000000000029.log', 'snapshot-000000000028.bin']);
  const again = await openStore(dir);
  t.strictSame([...again.state.repositories.get('r1')!.datasources.values()], [{ id: 'ds-9', tags: { k: 'v' }, createdAt: 5 }]);
  await again.close();
});
