/**
 * A stopping node in query placement (issue 24): a peer whose heartbeat payload says it is stopping
 * is left out of the nodes a coordinator asks (its segments are read from another holder, or the
 * answer warns), and a stopping node refuses the query parts it is still asked for.
 */
import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedGlobalLog, GlobalStore } from '../../../src/global/index.js';
import { PeerQueries, QUERY_SCAN, STOPPING_PAYLOAD, announcesStopping, type PeerRpc } from '../../../src/cluster/peer-queries.js';
import { silentLogger } from '../../../src/lib/logger.js';
import { LogsvcError } from '../../../src/lib/errors.js';
import type { QuerySpec } from '../../../src/query/scan.js';

async function setup(t: Test, payloads: Map<number, unknown>, stopping: boolean): Promise<{ pq: PeerQueries; serve: (body: unknown) => Promise<unknown> }> {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-pq-'));
  const store = await GlobalStore.open(new EmbeddedGlobalLog(join(dir, 'global')), { snapshotEvery: 1_000_000, logger: silentLogger });
  t.teardown(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  let serve: ((body: unknown) => Promise<unknown>) | null = null;
  const rpc: PeerRpc = {
    aliveIds: () => new Set([1, 2, 3]),
    payloadOf: (n) => payloads.get(n) ?? null,
    request: () => Promise.reject(new Error('not asked in this test')),
    handle: (type, fn) => {
      if (type === QUERY_SCAN) serve = fn;
    },
  };
  const pq = new PeerQueries({
    selfId: 1,
    rpc,
    store,
    scanLocal: () => Promise.reject(new Error('not scanned in this test')),
    hasSegment: () => true,
    withFiles: (spec) => Promise.resolve(spec),
    timeoutMs: 1000,
    stopping: () => stopping,
  });
  return { pq, serve: serve! };
}

const spec = { text: 'count()', args: {}, ctx: { start: 0, end: Date.now() }, limits: {} } as unknown as QuerySpec;

t.test('a peer that announced its stop is not asked, and not a live node of the placement', async (t) => {
  const { pq } = await setup(t, new Map([[2, STOPPING_PAYLOAD]]), false);
  const plan = pq.plan(spec, { id: 'r', name: 'r' });
  t.same(plan.remotes.map((r) => r.node), [3]);
  t.same(plan.placement?.live, [1, 3]);
  const none = await setup(t, new Map(), false);
  t.same(none.pq.plan(spec, { id: 'r', name: 'r' }).remotes.map((r) => r.node), [2, 3], 'without the announcement every live peer is asked');
});

t.test('a stopping node refuses the query parts it is asked for', async (t) => {
  const { serve } = await setup(t, new Map(), true);
  const err = await serve({ repo: { id: 'r', name: 'r' }, text: 'count()', args: {}, ctx: spec.ctx, limits: {} }).then(() => null, (e: unknown) => e);
  t.ok(err instanceof LogsvcError, String(err));
  t.equal((err as LogsvcError).code, 'E_NODE_STOPPING');
  t.match((err as LogsvcError).message, /node 1 is stopping/);
});

t.test('the stopping payload', async (t) => {
  t.ok(announcesStopping(STOPPING_PAYLOAD));
  t.ok(announcesStopping(structuredClone(STOPPING_PAYLOAD)), 'after a trip through the wire');
  for (const p of [null, undefined, {}, { stopping: 'yes' }, 'stopping', [true]]) t.notOk(announcesStopping(p), JSON.stringify(p));
});
