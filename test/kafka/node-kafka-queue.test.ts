/**
 * One `logsvc node` with `queue.kind = "kafka"` against a real broker, over HTTP only: ingest is
 * acknowledged once Kafka has the record and becomes searchable; the broker stopped under load makes
 * ingest answer 503 with Retry-After (and the kafka health check DOWN); once the broker is back,
 * ingest resumes without restarting the node, and every acknowledged event is found exactly once.
 */
import t from 'tap';
import { api } from '../helpers/http.js';
import { startNode } from '../helpers/node-process.js';
import { createRepo, queryJson, sleep } from '../helpers/query.js';
import { startBroker } from '../helpers/kafka-broker.js';
import { freePort } from '../helpers/free-port.js';

t.setTimeout(300_000);

t.test('ingest through a Kafka queue survives a broker outage', async (t) => {
  const broker = await startBroker(t);
  const config = [
    '[queue]',
    'kind = "kafka"',
    '[kafka]',
    `brokers = "${broker.brokers}"`,
    'topic_prefix = "node1-"',
    'topic_replication_factor = 1',
    'min_insync_replicas = 1',
    'delivery_timeout_ms = 3000',
    'request_timeout_ms = 2000',
    '[cluster]',
    `listen = "127.0.0.1:${await freePort()}"`,
    'secret = "node-kafka-queue-test-secret"',
    '[digest]',
    'partitions = 4',
    'flush_block_seconds = 1',
    '[health]',
    'grace_period_seconds = 0',
    'check_interval_seconds = 1',
  ].join('\n');
  const node = await startNode(t, { config, readyTimeoutMs: 90_000 });
  const repo = await createRepo(node.url, node.adminToken, 'kafkarepo');

  const acked: string[] = [];
  const refused: { status: number; retryAfter: string | null; text: string }[] = [];
  let stop = false;
  let seq = 0;
  let ackedAfterRestart = 0;
  let restarted = false;
  const client = async (c: number): Promise<void> => {
    while (!stop) {
      const ids = Array.from({ length: 10 }, () => `c${c}-${seq++}`);
      const body = JSON.stringify([{ tags: { host: `h${c}` }, events: ids.map((id) => ({ timestamp: Date.now(), rawstring: `event ${id}`, attributes: { id } })) }]);
      let res;
      try {
        res = await api(node.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body, timeoutMs: 30_000 });
      } catch (err) {
        refused.push({ status: 0, retryAfter: null, text: String(err) });
        continue;
      }
      if (res.status === 200) {
        acked.push(...ids);
        if (restarted) ackedAfterRestart++;
      } else {
        refused.push({ status: res.status, retryAfter: res.headers.get('retry-after'), text: res.text });
        await sleep(100);
      }
    }
  };
  const until = async (what: string, cond: () => boolean | Promise<boolean>, ms: number): Promise<void> => {
    const deadline = Date.now() + ms;
    while (!(await cond())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  };
  const kafkaCheck = async (): Promise<{ status: string; statusMessage: string } | undefined> => {
    const r = await api(node.url, '/api/v1/health-json', { token: node.adminToken });
    const h = r.json() as Record<'oks' | 'warnings' | 'downs', { name: string; status: string; statusMessage: string }[]>;
    return [...h.oks, ...h.warnings, ...h.downs].find((c) => c.name === 'kafka');
  };

  const clients = [0, 1, 2].map((c) => client(c));
  try {
    await until('acks before the outage', () => acked.length >= 300, 60_000);
    t.match(await kafkaCheck(), { status: 'OK' }, 'kafka health check OK');
    await broker.stop();
    await until('503s while the broker is down', () => refused.length >= 5, 60_000);
    await until('the kafka health check to go DOWN', async () => (await kafkaCheck())?.status === 'DOWN', 30_000).catch(() => undefined);
    t.match(await kafkaCheck(), { status: 'DOWN', statusMessage: /Kafka/ }, 'kafka health check DOWN');
    await broker.restart();
    restarted = true;
    await until('acks after the restart', () => ackedAfterRestart >= 20, 90_000);
  } catch (err) {
    t.comment(`node stderr (tail):\n${node.stderr().slice(-4000)}`);
    throw err;
  } finally {
    stop = true;
    await Promise.all(clients);
  }

  t.ok(refused.length >= 5, `${refused.length} requests refused during the outage`);
  t.ok(
    refused.every((r) => r.status === 503 && r.retryAfter !== null),
    `every refusal is 503 with Retry-After (${JSON.stringify(refused.find((r) => r.status !== 503 || r.retryAfter === null) ?? null)})`,
  );

  // Every acknowledged event is searchable, exactly once (refused requests used other ids).
  const want = new Set(acked);
  let counts = new Map<string, number>();
  const deadline = Date.now() + 60_000;
  for (;;) {
    const rows = await queryJson(node.url, repo.name, { queryString: 'groupBy(id, limit=max)', start: '1d' }, { token: node.adminToken });
    counts = new Map(rows.map((r) => [String(r.id), Number(r._count)]));
    if ([...want].every((id) => counts.has(id)) || Date.now() > deadline) break;
    await sleep(500);
  }
  const missing = [...want].filter((id) => !counts.has(id));
  const dupes = [...want].filter((id) => (counts.get(id) ?? 0) > 1);
  t.equal(missing.length, 0, `all ${want.size} acknowledged events found (missing e.g. ${missing.slice(0, 3).join(',')})`);
  t.equal(dupes.length, 0, 'no acknowledged event twice');
});
