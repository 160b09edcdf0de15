/**
 * A static filter query on `POST .../query` streams every matching event (api-facts §1.3), not the
 * 200 of the implicit tail(): in each output form (NDJSON, JSON array, text lines), past the bytes
 * the node holds back before it starts streaming, each event exactly once; to a client that stops
 * reading for a while (the scan waits on uWS backpressure, the answer arrives whole); a client
 * that leaves mid-stream stops the query without harming the node; and a client that stops reading
 * past query.max_query_seconds never gets an answer that looks complete.
 */
import { connect } from 'node:net';
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { countOf, createRepo, ingestStructured, parseNdjson, postQuery, sleep, waitForCount, type KnownEvent } from '../helpers/query.js';

t.setTimeout(600_000);

const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 2', 'worker_threads = 1', ''].join('\n');
const node = await startNode(t, { config: CONFIG });
const token = node.adminToken;
const repo = await createRepo(node.url, token, 'bulk');

// 40,000 events of ~300 bytes each (about 12 MB of NDJSON, far past the 256 KB held back).
const N = 40_000;
const now = Date.now();
const PAD = 'x'.repeat(200);
const events: KnownEvent[] = Array.from({ length: N }, (_, i) => ({ timestamp: now - 120_000 - i, rawstring: `line ${i} ${PAD}`, attributes: { n: String(i), odd: String(i % 2) }, tags: { host: `h${i % 2}` } }));
await ingestStructured(node.url, repo.ingestToken, events, 5000);
t.equal(await waitForCount(node.url, 'bulk', token, N, 60_000), N, 'every event is searchable');

const seen = (ns: string[]): { distinct: number; all: boolean } => {
  const set = new Set(ns);
  let all = true;
  for (let i = 0; i < N && all; i++) if (!set.has(String(i))) all = false;
  return { distinct: set.size, all };
};

t.test('every event, in each output form', async (t) => {
  const nd = await postQuery(node.url, 'bulk', { queryString: 'n=*', start: '1d' }, { token, format: 'ndjson', timeoutMs: 120_000 });
  t.equal(nd.status, 200);
  t.equal(nd.headers.get('warning'), null, 'nothing cut: no Warning');
  t.ok((nd.headers.get('humio-query-id') ?? '').startsWith('IQ-'), 'humio-query-id');
  const rows = parseNdjson(nd.text);
  t.equal(rows.length, N, `ndjson: ${N} lines`);
  t.same(seen(rows.map((r) => r.n as string)), { distinct: N, all: true }, 'ndjson: each event once');
  t.equal(typeof rows[0]!['@timestamp'], 'number', 'ndjson: @timestamp a number');

  const js = await postQuery(node.url, 'bulk', { queryString: 'odd=1', start: '1d' }, { token, format: 'json', timeoutMs: 120_000 });
  t.equal(js.status, 200);
  const arr = js.json() as Record<string, string>[];
  t.ok(Array.isArray(arr), 'json: one array');
  t.equal(arr.length, N / 2, 'json: every odd event');
  t.ok(arr.every((r) => Number(r.n) % 2 === 1), 'json: only the matches');
  t.equal(new Set(arr.map((r) => r.n)).size, N / 2, 'json: each once');

  const text = await postQuery(node.url, 'bulk', { queryString: '', start: '1d' }, { token, format: 'text', timeoutMs: 120_000 });
  t.equal(text.status, 200);
  const lines = text.text.split('\n');
  t.equal(lines.pop(), '', 'text: ends with a newline');
  t.equal(lines.length, N, 'text: one @rawstring per event');
  t.same(seen(lines.map((l) => l.split(' ')[1]!)), { distinct: N, all: true }, 'text: each event once');

  // A small answer is still whole and newest first; an aggregate is unchanged.
  const few = parseNdjson((await postQuery(node.url, 'bulk', { queryString: 'n=1 or n=2 or n=3', start: '1d' }, { token, format: 'ndjson' })).text);
  t.same(few.map((r) => r.n), ['1', '2', '3'], 'a small answer: newest first');
  t.equal(await countOf(node.url, 'bulk', token, ''), N, 'count() unchanged');
  const empty = await postQuery(node.url, 'bulk', { queryString: 'n=none', start: '1d' }, { token, format: 'json' });
  t.same(empty.json(), [], 'no match: []');
});

/** A raw HTTP/1.1 request whose reader can stop reading for a while. */
function rawQuery(body: string, onSocket: (s: ReturnType<typeof connect>) => void, base = node.url, tok = token): Promise<{ head: string; body: string; complete: boolean }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => {
      const all = Buffer.concat(chunks).toString('utf8');
      const at = all.indexOf('\r\n\r\n');
      // A chunked body is complete only with its zero-length last chunk.
      resolve({ head: all.slice(0, at), body: dechunk(all.slice(at + 4)), complete: all.endsWith('\r\n0\r\n\r\n') });
    });
    s.write(`POST /api/v1/repositories/bulk/query HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${tok}\r\naccept: application/x-ndjson\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    onSocket(s);
  });
}

function dechunk(s: string): string {
  let out = '';
  let i = 0;
  for (;;) {
    const eol = s.indexOf('\r\n', i);
    if (eol < 0) return out;
    const n = parseInt(s.slice(i, eol), 16);
    if (!(n > 0)) return out;
    // Chunk sizes count bytes; the test's data is ASCII.
    out += s.slice(eol + 2, eol + 2 + n);
    i = eol + 2 + n + 2;
  }
}

t.test('a client that stops reading gets the whole answer once it reads again', async (t) => {
  const got = await rawQuery(JSON.stringify({ queryString: '', start: '1d' }), (s) => {
    s.pause();
    setTimeout(() => s.resume(), 3000);
  });
  t.match(got.head, /^HTTP\/1\.1 200/);
  t.match(got.head, /transfer-encoding: chunked/i, 'streamed (chunked)');
  t.equal(got.complete, true, 'the body ends with its last chunk');
  const rows = parseNdjson(got.body);
  t.equal(rows.length, N, 'every event');
  t.same(seen(rows.map((r) => r.n as string)), { distinct: N, all: true }, 'each once');
});

t.test('a client that leaves mid-stream stops its query; the node serves on', async (t) => {
  let received = 0;
  await rawQuery(JSON.stringify({ queryString: '', start: '1d' }), (s) => {
    s.on('data', (c: Buffer) => {
      received += c.length;
      if (received > 512 * 1024) s.destroy();
    });
  });
  t.ok(received > 512 * 1024, 'part of the answer arrived');
  await sleep(500);
  t.equal((await api(node.url, '/api/v1/status', { timeoutMs: 10_000 })).status, 200, 'status answers');
  t.equal(await countOf(node.url, 'bulk', token, ''), N, 'queries still run');
});

t.test('a client that stops reading past query.max_query_seconds gets a cut answer, never a complete one', async (t) => {
  const slow = await startNode(t, { config: CONFIG.replace('[digest]', '[query]\nmax_query_seconds = 3\n[digest]') });
  const r = await createRepo(slow.url, slow.adminToken, 'bulk');
  await ingestStructured(slow.url, r.ingestToken, events, 5000);
  t.equal(await waitForCount(slow.url, 'bulk', slow.adminToken, N, 60_000), N);
  const got = await rawQuery(
    JSON.stringify({ queryString: '', start: '1d' }),
    (s) => {
      s.pause();
      setTimeout(() => s.resume(), 8000);
    },
    slow.url,
    slow.adminToken,
  );
  if (/^HTTP\/1\.1 200/.test(got.head)) {
    t.equal(got.complete, false, 'the chunked body has no last chunk: the connection was closed');
    t.ok(parseNdjson(got.body.slice(0, got.body.lastIndexOf('\n') + 1)).length < N, 'fewer than every event');
  } else t.match(got.head, /^HTTP\/1\.1 400/, 'or, on a slow machine, the time ran out before the answer started: a 400');
  t.equal((await api(slow.url, '/api/v1/status', { timeoutMs: 10_000 })).status, 200, 'the node serves on');
});
