/**
 * The durability promise of ingest, end to end: concurrent clients post small batches of events,
 * each carrying a unique `ledger_id`, and record which requests were acknowledged; the node is
 * SIGKILLed at (seeded) random moments while requests are in flight and restarted on the same data
 * dir, several times; after a final graceful stop every event is read back from the segments with
 * `logsvc segments inspect`. Every acknowledged id must be stored exactly once, an id whose request
 * got no answer at most once, nothing else at all, and `logsvc segments verify` must be clean.
 */
import t from 'tap';
import { startNode, tempDir, type TestNode } from '../helpers/node-process.js';
import { gql } from '../helpers/http.js';
import { byField, inspectAll, seededRandom, verifyDataDir } from '../helpers/segments.js';

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'flush_block_seconds = 1', 'partitions = 2', ''].join('\n');
const CLIENTS = 6;
const KILLS = 4;
/** Once this many events were sent in a node lifetime, the round ends at once (bounds the run). */
const EVENTS_PER_ROUND = 1200;
const rnd = seededRandom(0x1ed6e7);

interface Sent {
  host: string;
  client: number;
  timestamp: number;
}

const sent = new Map<string, Sent>();
const acked = new Set<string>();
/** Ids whose request got no answer (connection reset by the kill, or refused because the node was down). */
const unanswered = new Set<string>();
/** Ids whose request got an answer other than 200. */
const refused = new Map<string, number>();
/** Ids refused with 503 because the node had begun a graceful stop. */
const refusedWhileStopping = new Set<string>();

const dataDir = await tempDir(t);
let node: TestNode = await startNode(t, { dataDir, config: CONFIG });
const created = await gql(node.url, node.adminToken, 'mutation { createRepository(name: "ledger") { repository { ingestTokens { token } } } }');
if (created.errors !== undefined) throw new Error(`createRepository failed: ${JSON.stringify(created.errors)}`);
const token = created.data.createRepository.repository.ingestTokens[0].token as string;

interface Round {
  stop: boolean;
  events: number;
  inFlight: number;
  requests: number;
  ok: number;
  failed: number;
}

async function client(c: number, url: string, round: Round, roundNo: number): Promise<void> {
  let seq = 0;
  while (!round.stop) {
    const n = 1 + Math.floor(Math.random() * 8);
    const host = `h${(c + seq) % 2}`;
    const ids: string[] = [];
    const events = [];
    for (let i = 0; i < n; i++) {
      const id = `r${roundNo}-c${c}-${seq}-${i}`;
      const timestamp = Date.now() - i;
      ids.push(id);
      sent.set(id, { host, client: c, timestamp });
      events.push({ timestamp, attributes: { ledger_id: id, client: String(c) } });
    }
    seq++;
    round.events += n;
    round.requests++;
    round.inFlight++;
    try {
      const res = await fetch(`${url}/api/v1/ingest/service-structured`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify([{ tags: { host }, events }]),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      if (res.status === 200 && text === '{}') {
        for (const id of ids) acked.add(id);
        round.ok++;
      } else if (res.status === 503 && /stopping/i.test(text)) {
        // A graceful stop refuses what arrives after it began (E_NODE_STOPPING): never stored, below.
        for (const id of ids) refusedWhileStopping.add(id);
      } else {
        for (const id of ids) refused.set(id, res.status);
      }
    } catch {
      for (const id of ids) unanswered.add(id);
      round.failed++;
      // The node is gone; this client's round is over.
      round.inFlight--;
      return;
    }
    round.inFlight--;
  }
}

/** Runs the clients for `ms`, then ends the round with `end` (a kill or a stop) while they are still sending. */
async function loadThen(roundNo: number, ms: number, end: () => Promise<unknown>): Promise<Round> {
  const round: Round = { stop: false, events: 0, inFlight: 0, requests: 0, ok: 0, failed: 0 };
  const clients = Array.from({ length: CLIENTS }, (_, c) => client(c, node.url, round, roundNo));
  // The load time counts from the first acknowledgement (30 s at most): a node just restarted on a
  // busy machine may take longer than the shortest load time to answer its first requests.
  for (const until = Date.now() + 30_000; round.ok === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
  const deadline = Date.now() + ms;
  // Wait out the load time, but end early once the round's event budget is spent; the clients
  // keep sending until the end, so requests are in flight when it comes.
  while (Date.now() < deadline && round.events < EVENTS_PER_ROUND) await new Promise((r) => setTimeout(r, 10));
  for (let i = 0; i < 50 && round.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 2));
  const inFlightAtEnd = round.inFlight;
  await end();
  round.stop = true;
  await Promise.all(clients);
  t.comment(`round ${roundNo}: ${round.requests} requests (${round.ok} acknowledged, ${round.failed} unanswered), ${round.events} events, ${inFlightAtEnd} in flight at the end`);
  return round;
}

t.test('kill -9 at random moments under concurrent load loses and duplicates nothing acknowledged', async (t) => {
  for (let k = 0; k < KILLS; k++) {
    const ms = 700 + Math.floor(rnd() * 1100);
    const round = await loadThen(k, ms, () => node.kill());
    t.ok(round.ok > 0, `round ${k}: some requests were acknowledged before the kill`);
    node = await startNode(t, { dataDir, config: CONFIG });
  }
  const last = await loadThen(KILLS, 800, async () => t.equal(await node.stop(), 0, 'a graceful stop under load exits 0'));
  t.ok(last.ok > 0, 'the last round acknowledged requests');
  t.ok(acked.size > 0, `${acked.size} events acknowledged in total`);

  const segs = await inspectAll(dataDir);
  for (const s of segs) t.equal(s.code, 0, `inspect ${s.file}`);
  const events = segs.flatMap((s) => s.events);
  const found = byField(events, 'ledger_id');
  t.equal(events.length, [...found.values()].reduce((n, l) => n + l.length, 0), 'every stored event carries a ledger_id');

  let lost = 0;
  let duplicated = 0;
  for (const id of acked) {
    const n = found.get(id)?.length ?? 0;
    if (n === 0) lost++;
    if (n > 1) duplicated++;
    if (n !== 1) t.fail(`acknowledged ${id} is stored ${n} times`);
  }
  t.equal(lost, 0, 'no acknowledged event was lost');
  t.equal(duplicated, 0, 'no acknowledged event was stored twice');
  let unansweredStored = 0;
  for (const id of unanswered) {
    const n = found.get(id)?.length ?? 0;
    if (n > 1) t.fail(`unanswered ${id} is stored ${n} times`);
    if (n === 1) unansweredStored++;
  }
  for (const [id, status] of refused) if (found.has(id)) t.fail(`${id} got ${status} but is stored`);
  for (const id of refusedWhileStopping) if (found.has(id)) t.fail(`${id} got 503 (stopping) but is stored`);
  t.comment(`${refusedWhileStopping.size} events refused with 503 while the node was stopping`);
  t.equal(refused.size, 0, `no request got an answer other than 200 (${[...new Set(refused.values())].join(', ')})`);
  let foreign = 0;
  let mismatched = 0;
  for (const [id, list] of found) {
    const s = sent.get(id);
    if (s === undefined) {
      foreign++;
      continue;
    }
    for (const e of list) {
      const ok =
        e['#host'] === s.host &&
        e.client === String(s.client) &&
        e['@timestamp'] === s.timestamp &&
        e['@rawstring'] === JSON.stringify({ ledger_id: id, client: String(s.client) });
      if (!ok) mismatched++;
    }
  }
  t.equal(foreign, 0, 'nothing stored that was never sent');
  t.equal(mismatched, 0, 'every stored event is exactly what was sent');
  t.comment(`${sent.size} events sent, ${acked.size} acknowledged, ${unanswered.size} unanswered (${unansweredStored} of those stored), ${events.length} stored in ${segs.length} segment files`);

  const v = await verifyDataDir(dataDir);
  t.equal(v.code, 0, `segments verify: ${v.summary}`);
  t.same(v.problems, [], 'no problems');
});
