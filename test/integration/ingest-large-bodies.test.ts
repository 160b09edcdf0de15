/**
 * Large ingest bodies on a real node. Bodies of a declared length from 64 KiB up are read into
 * pooled shared slabs that are reused request after request (src/lib/slab-pool.ts); bodies sent
 * without a length (chunked) take the plain path. Whatever path and however the requests overlap,
 * every acknowledged event comes back exactly once with exactly the text that was sent: a slab
 * reused too early would show up as another request's bytes.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { createRepo, queryJson } from '../helpers/query.js';

t.setTimeout(180_000);

/** Events per request, ~2.2 KB each: bodies of ~230 KB. */
const EVENTS = 100;

/** Text that differs in every position from request to request. */
function rawOf(r: number, j: number): string {
  let x = (r * 2_654_435_761 + j * 40_503 + 1) >>> 0;
  const parts = [`r=${r} j=${j}`];
  while (parts.join(' ').length < 2200) {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    parts.push(x.toString(36));
  }
  return parts.join(' ');
}

function bodyOf(r: number): string {
  const at = Date.now();
  return JSON.stringify([{ tags: { host: 'large' }, events: Array.from({ length: EVENTS }, (_, j) => ({ timestamp: at, attributes: { r: String(r), j: String(j) }, rawstring: rawOf(r, j) })) }]);
}

/** POSTs a body as a stream: chunked transfer encoding, no Content-Length. */
async function postChunked(url: string, token: string, text: string): Promise<number> {
  const bytes = Buffer.from(text);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let at = 0; at < bytes.length; at += 16_384) c.enqueue(bytes.subarray(at, at + 16_384));
      c.close();
    },
  });
  const res = await fetch(`${url}/api/v1/ingest/humio-structured`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: stream,
    duplex: 'half',
    signal: AbortSignal.timeout(60_000),
  } as RequestInit);
  await res.text();
  return res.status;
}

t.test('overlapping large bodies, with and without a length, come back exactly as sent', async (t) => {
  const node = await startNode(t);
  const repo = await createRepo(node.url, node.adminToken, 'large');
  const token = repo.ingestToken;
  const acked: number[] = [];
  let r = 0;
  // Rounds of overlapping requests: later rounds take slabs the earlier ones gave back.
  for (let round = 0; round < 3; round++) {
    const ids = Array.from({ length: 6 }, () => r++);
    const answers = await Promise.all(ids.map((id) => api(node.url, '/api/v1/ingest/humio-structured', { token, body: bodyOf(id), timeoutMs: 60_000 })));
    answers.forEach((a, k) => {
      t.equal(a.status, 200, `request ${ids[k]}: 200 (${a.text.slice(0, 200)})`);
      if (a.status === 200) acked.push(ids[k]!);
    });
    // A bad body in between: refused with a message, and it spoils no other request's slab.
    const bad = await api(node.url, '/api/v1/ingest/humio-structured', { token, body: `${bodyOf(999).slice(0, -5)}`, timeoutMs: 60_000 });
    t.equal(bad.status, 400, 'a truncated large body is a 400');
    t.match(bad.text, /JSON|json/, 'naming the JSON problem');
  }
  for (let k = 0; k < 2; k++) {
    const id = r++;
    t.equal(await postChunked(node.url, token, bodyOf(id)), 200, `chunked request ${id}: 200`);
    acked.push(id);
  }
  const rows = await queryJson(node.url, 'large', { queryString: `tail(${acked.length * EVENTS + 100})`, start: '1d' }, { token: node.adminToken });
  t.equal(rows.length, acked.length * EVENTS, 'every acknowledged event, none of the refused');
  const seen = new Set<string>();
  let wrong = 0;
  for (const row of rows) {
    const key = `${row.r}/${row.j}`;
    if (seen.has(key)) t.fail(`event ${key} came back twice`);
    seen.add(key);
    if (row['@rawstring'] !== rawOf(Number(row.r), Number(row.j))) wrong++;
  }
  t.equal(wrong, 0, 'every event holds exactly the text sent for it');
  for (const id of acked) for (let j = 0; j < EVENTS; j++) if (!seen.has(`${id}/${j}`)) t.fail(`event ${id}/${j} is missing`);
  t.equal(seen.size, acked.length * EVENTS);
});

t.test('events that each bring new field names are refused with a 413 before they take the memory, and the node serves on', async (t) => {
  const node = await startNode(t);
  const repo = await createRepo(node.url, node.adminToken, 'sparse');
  const at = Date.now();
  // A record stores a length for every event and field name: 4,100 x 4,102 is past its bound.
  const sparse = JSON.stringify([{ tags: { host: 'sparse' }, events: Array.from({ length: 4100 }, (_, i) => ({ timestamp: at, rawstring: 'r', attributes: { [`f${i}`]: 1 } })) }]);
  const refused = await api(node.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body: sparse, timeoutMs: 60_000 });
  t.equal(refused.status, 413, refused.text);
  t.match(refused.text, /4100 events of one datasource have more than \d+ distinct field names.*split the request/);
  // Just under the bound, the same shape is taken.
  const under = JSON.stringify([{ tags: { host: 'sparse' }, events: Array.from({ length: 4000 }, (_, i) => ({ timestamp: at, rawstring: `r${i}`, attributes: { [`f${i}`]: 1 } })) }]);
  const taken = await api(node.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body: under, timeoutMs: 60_000 });
  t.equal(taken.status, 200, taken.text);
  const rows = await queryJson(node.url, 'sparse', { queryString: 'f3999=* | tail(10)', start: '1d' }, { token: node.adminToken });
  t.same(rows.map((r) => [r['@rawstring'], r.f3999]), [['r3999', '1']], 'the events of the accepted request are stored');
});
