/**
 * Ingest backpressure on a real node: when acknowledged bytes pile up ahead of the digest
 * (ingest.max_undigested_bytes) or sealed blocks pile up in memory waiting to be built and written
 * (ingest.max_digest_backlog_bytes), ingest answers 503 with Retry-After and a message naming the
 * bound; once the digest has caught up, ingest is accepted again, and every acknowledged event is
 * queryable exactly once while no refused one is.
 */
import t, { type Test } from 'tap';
import { existsSync } from 'node:fs';
import { startNode, type TestNode } from '../helpers/node-process.js';
import { api, type ApiResponse } from '../helpers/http.js';
import { createRepo, queryJson } from '../helpers/query.js';
import { threadNices } from '../helpers/threads.js';

t.setTimeout(300_000);

const MIB = 1024 * 1024;
/** Events per request, each with ~3 KB of raw text: a body of ~300 KB. */
const EVENTS = 100;
const WORDS = ['GET', 'POST', 'user', 'login', 'timeout', 'cache', 'miss', 'upstream', 'db', 'retry', 'ok', 'error', 'queue', 'shard', 'node', 'token'];

/** Varied text (not one repeated character: block building indexes the words of every line). */
function line(b: number, j: number): string {
  const words: string[] = [`batch=${b} event=${j}`];
  let x = (b * 7919 + j * 104_729) >>> 0;
  while (words.join(' ').length < 3000) {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    words.push(`${WORDS[x % WORDS.length]}${x % 997}`);
  }
  return words.join(' ');
}

function body(b: number): string {
  const at = Date.now();
  return JSON.stringify([{ tags: { host: 'bp' }, events: Array.from({ length: EVENTS }, (_, j) => ({ timestamp: at, attributes: { b: String(b), j: String(j) }, rawstring: line(b, j) })) }]);
}

function post(node: TestNode, token: string, b: number): Promise<ApiResponse> {
  return api(node.url, '/api/v1/ingest/humio-structured', { token, body: body(b), timeoutMs: 60_000 });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Checks a 503 answer: Retry-After, one line of text naming the bound. */
function isPaused(t: Test, res: ApiResponse, message: RegExp): void {
  t.equal(res.status, 503, `503 (${res.text.trim().slice(0, 300)})`);
  t.ok(Number(res.headers.get('retry-after')) > 0, `a Retry-After header (${res.headers.get('retry-after')})`);
  t.match(res.text, message, 'the message names the bound and its limit');
}

/** Posts fresh batches until one is accepted (the node recovered) or `ms` pass. */
async function untilAccepted(node: TestNode, token: string, next: () => number, acked: Set<number>, refused: Set<number>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const b = next();
    const res = await post(node, token, b);
    if (res.status === 200) {
      acked.add(b);
      return true;
    }
    if (res.status !== 503) throw new Error(`unexpected answer while waiting for recovery: ${res.status} ${res.text}`);
    refused.add(b);
    await sleep(250);
  }
  return false;
}

/** Every acknowledged batch has all its EVENTS, each once; no refused batch has any. */
async function exactlyOnce(t: Test, node: TestNode, repo: string, acked: Set<number>, refused: Set<number>, perEvent: boolean): Promise<void> {
  const token = node.adminToken;
  const total = await queryJson(node.url, repo, { queryString: 'count()', start: '1d' }, { token });
  t.equal(Number(total[0]?._count), acked.size * EVENTS, `count() = ${acked.size} acknowledged batches x ${EVENTS}`);
  const perBatch = await queryJson(node.url, repo, { queryString: 'groupBy(b)', start: '1d' }, { token });
  const counts = new Map(perBatch.map((r) => [Number(r.b), Number(r._count)]));
  t.strictSame([...counts.keys()].sort((x, y) => x - y), [...acked].sort((x, y) => x - y), 'exactly the acknowledged batches are stored');
  t.ok([...counts.values()].every((n) => n === EVENTS), `each with ${EVENTS} events`);
  t.ok([...refused].every((b) => !counts.has(b)), `none of the ${refused.size} refused batches`);
  if (perEvent) {
    const rows = await queryJson(node.url, repo, { queryString: 'groupBy([b, j])', start: '1d' }, { token });
    t.equal(rows.length, acked.size * EVENTS, 'every (batch, event) pair present');
    t.ok(rows.every((r) => Number(r._count) === 1), 'each exactly once');
  }
}

t.test('acknowledged bytes waiting for digest: 503 with Retry-After, then accepted again, each event once', async (t) => {
  // Blocks are sealed neither by size nor by age: acknowledged bytes stay in open blocks until the
  // digest tick seals the oldest (above half the bound, src/digest/digest.ts).
  const node = await startNode(t, {
    config: ['[health]', 'grace_period_seconds = 600', '[ingest]', `max_undigested_bytes = ${MIB}`, '[digest]', 'partitions = 1', 'worker_threads = 1', 'flush_block_seconds = 3600', `block_target_bytes = ${64 * MIB}`, ''].join('\n'),
  });
  const repo = await createRepo(node.url, node.adminToken, 'bp-undigested');
  const acked = new Set<number>();
  const refused = new Set<number>();
  let b = 0;
  let paused: ApiResponse | null = null;
  // ~300 KB per request, one after another: within one tick (1 s) the bound is passed.
  for (let i = 0; i < 100 && paused === null; i++) {
    const res = await post(node, repo.ingestToken, ++b);
    if (res.status === 200) acked.add(b);
    else if (res.status === 503) {
      refused.add(b);
      paused = res;
    } else throw new Error(`unexpected answer: ${res.status} ${res.text}`);
  }
  t.ok(paused !== null, `a request was refused (after ${acked.size} acknowledged)`);
  if (paused === null) return;
  isPaused(t, paused, new RegExp(`ingest is paused: \\d+ acknowledged bytes are waiting for digest \\(limit ${MIB}\\); retry later`));
  t.ok(acked.size >= 3, `at least ~1 MiB acknowledged before the refusal (${acked.size} requests)`);

  t.ok(await untilAccepted(node, repo.ingestToken, () => ++b, acked, refused, 60_000), 'accepted again once the digest wrote the oldest block');
  await exactlyOnce(t, node, repo.name, acked, refused, true);
  // And once more after a restart: the same events, from segments and the replayed queue.
  t.equal(await node.stop(), 0, 'clean stop');
  const again = await startNode(t, { dataDir: node.dataDir, config: ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'worker_threads = 1', ''].join('\n') });
  await exactlyOnce(t, again, repo.name, acked, refused, true);
});

t.test('sealed blocks waiting in memory (digest behind): 503 with Retry-After, then accepted again, each event once', async (t) => {
  // Every request seals a block of its own (block_target_bytes at its minimum), built by one
  // background thread at the lowest priority, while concurrent requests are parsed by the
  // foreground thread: sealed blocks queue up faster than they are written. The undigested bound
  // is left far away, so only the backlog bound can refuse.
  const node = await startNode(t, {
    config: [
      '[health]',
      'grace_period_seconds = 600',
      '[ingest]',
      `max_digest_backlog_bytes = ${MIB}`,
      '[digest]',
      'partitions = 1',
      'worker_threads = 1',
      'block_build_nice = 19',
      'block_target_bytes = 1024',
      'flush_block_seconds = 3600',
      '',
    ].join('\n'),
  });
  const repo = await createRepo(node.url, node.adminToken, 'bp-backlog');
  const acked = new Set<number>();
  const refused = new Set<number>();
  let b = 0;
  let paused: ApiResponse | null = null;
  let other: string | null = null;
  const deadline = Date.now() + 90_000;
  const CONCURRENCY = 8;
  let sent = 0;
  const worker = async (): Promise<void> => {
    while (paused === null && other === null && sent < 600 && Date.now() < deadline) {
      const mine = ++b;
      sent++;
      const res = await post(node, repo.ingestToken, mine);
      if (res.status === 200) acked.add(mine);
      else if (res.status === 503) {
        refused.add(mine);
        paused ??= res;
      } else other = `${res.status} ${res.text}`;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  t.equal(other, null, 'no answer but 200 and 503');
  t.ok(paused !== null, `a request was refused (after ${acked.size} acknowledged, ${sent} sent)`);
  if (paused === null) return;
  isPaused(t, paused, new RegExp(`ingest is paused: the digest is behind, \\d+ bytes of events wait in memory to be written to segments \\(limit ${MIB}\\); retry later`));
  t.ok(refused.size > 0 && acked.size > 0);

  t.ok(await untilAccepted(node, repo.ingestToken, () => ++b, acked, refused, 60_000), 'accepted again once the blocks were written');
  await exactlyOnce(t, node, repo.name, acked, refused, false);

  // digest.block_build_nice reaches the node's block-building thread (Linux: per-thread nice).
  const pid = node.proc.pid!;
  if (existsSync(`/proc/${pid}/task`)) {
    const nices = threadNices(pid);
    const base = nices.get(pid)!;
    t.ok([...nices.values()].some((n) => n === Math.min(19, base + 19)), `a thread of the node runs at nice ${Math.min(19, base + 19)} (block_build_nice = 19): ${JSON.stringify([...nices])}`);
    t.ok([...nices.values()].filter((n) => n === base).length >= 2, 'the main thread and the foreground worker keep the node\'s priority');
  }
});
