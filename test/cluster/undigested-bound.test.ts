/**
 * ingest.max_undigested_bytes on the Kafka queue counts bytes (docs/cluster.md, "The digest queue on
 * Kafka"): Kafka offsets count records, so `end - checkpoint` was a record count and the bound was
 * never reached. Now the digest sums the sizes of the records it read past its checkpoint and
 * estimates those not read yet. A one-node cluster with a 1 MiB bound, blocks sealed neither by size
 * nor by age: requests of ~300 KB, eight at a time, pass the bound between two digest ticks, and ingest
 * answers 503 with Retry-After naming it; once the digest has written the oldest block, ingest is
 * accepted again, and every acknowledged event is stored exactly once.
 */
import t from 'tap';
import { exactlyOnce, startCluster, waitFor } from '../helpers/cluster.js';
import { api, type ApiResponse } from '../helpers/http.js';
import { createRepo, sleep } from '../helpers/query.js';
import type { TestNode } from '../helpers/node-process.js';

t.setTimeout(300_000);

const MIB = 1024 * 1024;
const EVENTS = 100;

/** ~3 KB of varied words (block building indexes the words of every line). */
function line(b: number, j: number): string {
  const words = [`batch=${b} event=${j}`];
  for (let x = (b * 7919 + j * 104_729) >>> 0; words.join(' ').length < 3000; ) {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    words.push(`w${x % 9973}`);
  }
  return words.join(' ');
}

function post(n: TestNode, token: string, b: number): Promise<ApiResponse> {
  const events = Array.from({ length: EVENTS }, (_, j) => ({ timestamp: Date.now(), attributes: { uid: `${b}-${j}` }, rawstring: line(b, j) }));
  return api(n.url, '/api/v1/ingest/humio-structured', { token, body: JSON.stringify([{ tags: { host: 'bp' }, events }]), timeoutMs: 60_000 });
}

t.test('Kafka queue: acknowledged bytes waiting for digest pass the bound: 503, then accepted again, each event once', async (t) => {
  const c = await startCluster(t, {
    nodes: 1,
    partitions: 1,
    flushSeconds: 3600,
    digestExtra: `block_target_bytes = ${64 * MIB}`,
    extra: `[self_logs]\nenabled = false\n[ingest]\nmax_undigested_bytes = ${MIB}\n`,
  });
  const n = c.node(1);
  const repo = await createRepo(n.url, n.adminToken, 'bound');
  const acked = new Set<string>();
  let b = 0;
  let paused: ApiResponse | null = null;
  let ackedBatches = 0;
  const send = async (k: number): Promise<ApiResponse | null> => {
    // A request refused before its body is read may lose its connection mid-upload (no answer).
    const res = await post(n, repo.ingestToken, k).catch(() => null);
    if (res !== null && res.status !== 200 && res.status !== 503) throw new Error(`unexpected answer: ${res.status} ${res.text}`);
    if (res?.status === 200) {
      ackedBatches++;
      for (let j = 0; j < EVENTS; j++) acked.add(`${k}-${j}`);
    }
    return res;
  };
  // Each round: six requests side by side (more than the bound arrives between two digest ticks,
  // which write the oldest blocks once half the bound is passed), then one more, alone.
  for (let round = 0; round < 30 && paused === null; round++) {
    await Promise.all(Array.from({ length: 6 }, () => send(++b)));
    const probe = await send(++b);
    if (probe?.status === 503) paused = probe;
  }
  t.ok(paused !== null, `a request was refused (after ${ackedBatches} acknowledged)`);
  if (paused === null) return;
  t.ok(Number(paused.headers.get('retry-after')) > 0, `with Retry-After (${paused.headers.get('retry-after')})`);
  t.match(paused.text, new RegExp(`ingest is paused: \\d+ acknowledged bytes are waiting for digest \\(limit ${MIB}\\)`), `the message names the bound (${paused.text.trim().slice(0, 200)})`);
  // Each request is ~300 KB: the bound in bytes refuses within a few rounds, not after 1 Mi records.
  t.ok(ackedBatches >= 3, `refused after ${ackedBatches} requests of ~300 KB were acknowledged`);

  // Generous: tells "never" apart from "after the next digest ticks" on a loaded machine.
  let accepted = false;
  for (const deadline = Date.now() + 60_000; !accepted && Date.now() < deadline; ) {
    accepted = (await send(++b))?.status === 200;
    if (!accepted) await sleep(250);
  }
  t.ok(accepted, 'accepted again once the digest wrote the oldest block');
  // Searchable once the digest has read it from Kafka: asked until every acknowledged event is there.
  const r = await waitFor('every acknowledged event searchable', async () => {
    const x = await exactlyOnce(n, 'bound', acked);
    return x.missing.length === 0 ? x : null;
  }, 60_000).catch(() => exactlyOnce(n, 'bound', acked));
  // A request whose connection was lost may have been stored unacknowledged: found may exceed acked.
  t.ok(r.found >= acked.size, `${r.found} events found for ${acked.size} acknowledged`);
  t.same({ missing: r.missing, twice: r.twice }, { missing: [], twice: [] }, 'every acknowledged event, none twice');
});
