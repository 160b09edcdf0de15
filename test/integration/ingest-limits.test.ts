/**
 * The bounds of ingest on a real node with small limits: body size (on the wire and decompressed),
 * content encodings, malformed and over-deep JSON, validation errors naming the offending element,
 * events per request, oversize events, fields per event, the datasource cap and the reserved "repo"
 * tag. Every refusal is one line of text/plain and stores nothing; after all of it the node still
 * serves and every acknowledged event is in the segments (read back with `logsvc segments inspect`).
 */
import t, { type Test } from 'tap';
import { deflateSync, gzipSync } from 'node:zlib';
import { startNode } from '../helpers/node-process.js';
import { api, gql, type ApiResponse } from '../helpers/http.js';
import { inspectAll, tagKeys, verifyDataDir, type StoredEvent } from '../helpers/segments.js';

const MAX_BODY = 65536;
const MAX_DECOMPRESSED = 1048576;
const MAX_DEPTH = 16;
const MAX_EVENTS = 50;
const MAX_EVENT_BYTES = 2048;
const MAX_FIELDS = 10;
const MAX_DATASOURCES = 3;

const CONFIG = `
[health]
grace_period_seconds = 600
[http]
max_body_bytes = ${MAX_BODY}
max_decompressed_bytes = ${MAX_DECOMPRESSED}
max_json_depth = ${MAX_DEPTH}
[ingest]
max_events_per_request = ${MAX_EVENTS}
max_event_bytes = ${MAX_EVENT_BYTES}
max_fields_per_event = ${MAX_FIELDS}
max_datasources_per_repository = ${MAX_DATASOURCES}
[digest]
partitions = 1
worker_threads = 1
`;

const node = await startNode(t, { config: CONFIG });

async function createRepo(name: string): Promise<string> {
  const r = await gql(node.url, node.adminToken, 'mutation($n: String!) { createRepository(name: $n) { repository { ingestTokens { token } } } }', { n: name });
  if (r.errors !== undefined) throw new Error(`createRepository failed: ${JSON.stringify(r.errors)}`);
  return r.data.createRepository.repository.ingestTokens[0].token as string;
}
const token = await createRepo('lim');
const dsToken = await createRepo('dsr');
const elsewhereToken = await createRepo('elsewhere');

const STRUCTURED = '/api/v1/ingest/service-structured';
const UNSTRUCTURED = '/api/v1/ingest/service-unstructured';

/** Markers (`case` values) of acknowledged events, which must be stored once, and of refused ones. */
const accepted = new Set<string>();
const refused = new Set<string>();

async function post(path: string, body: unknown, opts: { token?: string; encoding?: string; contentType?: string } = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
  if (opts.encoding !== undefined) headers['content-encoding'] = opts.encoding;
  const raw = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return api(node.url, path, { token: opts.token ?? token, headers, body: raw, timeoutMs: 30_000 });
}

function isOk(t: Test, res: ApiResponse, what: string, markers: string[]): void {
  t.equal(res.status, 200, `${what}: 200 (${res.text.trim().slice(0, 200)})`);
  t.same(res.status === 200 ? res.json() : null, {}, `${what}: {}`);
  for (const m of markers) (res.status === 200 ? accepted : refused).add(m);
}

/** A 4xx answer: the status, one line of text/plain, and (optionally) a message naming the problem. */
function isRefused(t: Test, res: ApiResponse, status: number, what: string, markers: string[], message?: RegExp): void {
  t.equal(res.status, status, `${what}: ${status} (${res.text.trim().slice(0, 300)})`);
  t.match(res.headers.get('content-type'), /^text\/plain/, `${what}: text/plain`);
  t.equal(res.text.trimEnd().split('\n').length, 1, `${what}: one line`);
  t.ok(res.text.trim().length > 0, `${what}: says why`);
  if (message !== undefined) t.match(res.text, message, `${what}: names the problem`);
  for (const m of markers) refused.add(m);
}

const ev = (c: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ timestamp: 1_700_000_000_000, attributes: { case: c }, ...extra });
const item = (...events: Record<string, unknown>[]): Record<string, unknown> => ({ tags: { host: 'lim' }, events });

async function statusOk(t: Test, what: string): Promise<void> {
  const s = await api(node.url, '/api/v1/status');
  t.equal(s.status, 200, `status 200 ${what}`);
}

t.test('body size on the wire', async (t) => {
  const big = [item(ev('too-big', { rawstring: 'x'.repeat(MAX_BODY + 1000) }))];
  isRefused(t, await post(STRUCTURED, big), 413, 'a body over max_body_bytes', ['too-big'], new RegExp(String(MAX_BODY)));
  await statusOk(t, 'after a 413');
  // Just under the limit is fine.
  const fits = [item(ev('just-fits', { rawstring: 'y'.repeat(1500) }))];
  isOk(t, await post(STRUCTURED, fits), 'a small body', ['just-fits']);
  // The limit is on the bytes sent: a compressed body under it that inflates beyond it is accepted.
  const events = Array.from({ length: 40 }, (_, i) => ev(`inflates-${i}`, { rawstring: `inflates-${i} ${'lorem ipsum dolor sit amet '.repeat(70)}` }));
  const json = JSON.stringify([item(...events)]);
  const gz = gzipSync(json);
  t.ok(json.length > MAX_BODY && gz.length < MAX_BODY && json.length < MAX_DECOMPRESSED, `test body: ${gz.length} bytes gzipped, ${json.length} inflated`);
  isOk(t, await post(STRUCTURED, gz, { encoding: 'gzip' }), 'gzip body inflating past max_body_bytes', events.map((e) => (e.attributes as { case: string }).case));
});

t.test('content encodings', async (t) => {
  const s = (c: string): string => JSON.stringify([item(ev(c))]);
  isOk(t, await post(STRUCTURED, gzipSync(s('gzip-1')), { encoding: 'gzip' }), 'gzip', ['gzip-1']);
  isOk(t, await post(STRUCTURED, gzipSync(s('xgzip-1')), { encoding: 'x-gzip' }), 'x-gzip', ['xgzip-1']);
  isOk(t, await post(STRUCTURED, deflateSync(s('deflate-1')), { encoding: 'deflate' }), 'deflate', ['deflate-1']);
  isOk(t, await post(STRUCTURED, s('identity-1'), { encoding: 'identity' }), 'identity', ['identity-1']);
  isOk(t, await post(UNSTRUCTURED, gzipSync(JSON.stringify([{ messages: ['case=gzip-u1'] }])), { encoding: 'GZIP' }), 'gzip unstructured, encoding in upper case', ['gzip-u1']);
  isOk(t, await post('/api/v1/ingest/raw', deflateSync('case=deflate-raw1'), { encoding: 'deflate', contentType: 'text/plain' }), 'deflate raw', ['deflate-raw1']);

  isRefused(t, await post(STRUCTURED, s('br-1'), { encoding: 'br' }), 415, 'Content-Encoding br', ['br-1'], /br/);
  isRefused(t, await post(STRUCTURED, s('compress-1'), { encoding: 'compress' }), 415, 'Content-Encoding compress', ['compress-1']);
  const gz = gzipSync(s('badgz-1'));
  const torn = gz.subarray(0, gz.length - 12);
  isRefused(t, await post(STRUCTURED, torn, { encoding: 'gzip' }), 400, 'a truncated gzip body', ['badgz-1'], /gzip/);
  const flipped = Buffer.from(gz);
  flipped[Math.floor(flipped.length / 2)]! ^= 0x40;
  const r = await post(STRUCTURED, flipped, { encoding: 'gzip' });
  isRefused(t, r, 400, 'a gzip body with a flipped bit', ['badgz-1']);
  isRefused(t, await post(STRUCTURED, s('notgz-1'), { encoding: 'gzip' }), 400, 'plain JSON labelled gzip', ['notgz-1'], /gzip/);
  isRefused(t, await post(STRUCTURED, gzipSync(s('notdeflate-1')), { encoding: 'deflate' }), 400, 'gzip labelled deflate', ['notdeflate-1'], /deflate/);
});

t.test('decompression bombs stop at max_decompressed_bytes', async (t) => {
  const zeros = Buffer.alloc(32 * 1024 * 1024);
  const bomb = gzipSync(zeros, { level: 9 });
  t.ok(bomb.length < MAX_BODY, `the gzip bomb is ${bomb.length} bytes on the wire, ${zeros.length} inflated`);
  const started = Date.now();
  isRefused(t, await post(STRUCTURED, bomb, { encoding: 'gzip' }), 413, 'gzip bomb', [], /decompresses to more than/);
  t.ok(Date.now() - started < 10_000, 'refused promptly');
  const dbomb = deflateSync(zeros, { level: 9 });
  isRefused(t, await post(STRUCTURED, dbomb, { encoding: 'deflate' }), 413, 'deflate bomb', [], new RegExp(String(MAX_DECOMPRESSED)));
  // Just over the cap, with valid JSON inside.
  const justOver = JSON.stringify([item(ev('overcap-1', { rawstring: 'z'.repeat(MAX_DECOMPRESSED) }))]);
  isRefused(t, await post(STRUCTURED, gzipSync(justOver), { encoding: 'gzip' }), 413, 'valid JSON inflating just past the cap', ['overcap-1']);
  await statusOk(t, 'after the bombs');
  isOk(t, await post(STRUCTURED, [item(ev('after-bomb'))]), 'ingest after the bombs', ['after-bomb']);
});

t.test('malformed and over-deep JSON', async (t) => {
  isRefused(t, await post(STRUCTURED, '[{"tags": {"host": "lim"}, "events": [{"timestamp": 1, "attributes": {"case": "trunc-1"}}'), 400, 'truncated JSON', ['trunc-1'], /malformed JSON/);
  isRefused(t, await post(UNSTRUCTURED, '[{"messages": ["case=trunc-2",]}]'), 400, 'a trailing comma', ['trunc-2'], /malformed JSON/);
  isRefused(t, await post(STRUCTURED, ''), 400, 'an empty body', [], /JSON/);
  let deep: unknown = 'bottom';
  for (let i = 0; i < MAX_DEPTH + 4; i++) deep = { d: deep };
  isRefused(t, await post(STRUCTURED, [item(ev('deep-1', { attributes: { case: 'deep-1', deep } }))]), 400, 'JSON deeper than max_json_depth', ['deep-1'], new RegExp(`deeper than ${MAX_DEPTH}`));
  // Refused one way or another (too deep, or not an array of items), without harm to the node.
  const bracketBomb = '['.repeat(30_000) + ']'.repeat(30_000);
  isRefused(t, await post(STRUCTURED, bracketBomb), 400, '30000 nested arrays', []);
  const braceBomb = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
  isRefused(t, await post(UNSTRUCTURED, braceBomb), 400, '10000 nested objects', []);
  // max_json_depth is "the deepest JSON nesting accepted in any request body": also where ingest
  // does not look (a member it ignores).
  let ignored: unknown = 1;
  for (let i = 0; i < MAX_DEPTH + 4; i++) ignored = [ignored];
  isRefused(t, await post(STRUCTURED, [{ ...item(ev('deep-ignored-1')), comment: ignored }]), 400, 'JSON deeper than max_json_depth in an ignored member', ['deep-ignored-1'], new RegExp(`deeper than ${MAX_DEPTH}`));
  // Nesting within the limit is flattened.
  let ok: unknown = 'leaf';
  for (let i = 0; i < 8; i++) ok = { n: ok };
  isOk(t, await post(STRUCTURED, [item(ev('nested-ok', { attributes: { case: 'nested-ok', ok } }))]), 'nesting within the limit', ['nested-ok']);
});

t.test('validation names the offending element', async (t) => {
  isRefused(t, await post(STRUCTURED, [{ events: [ev('notags-1')] }]), 400, 'an item without tags', ['notags-1'], /\[0\]\.tags/);
  isRefused(t, await post(STRUCTURED, [{ tags: {}, events: [ev('notags-2')] }]), 400, 'an item with empty tags', ['notags-2'], /\[0\]\.tags/);
  isRefused(t, await post(STRUCTURED, [item({ attributes: { case: 'nots-1' } })]), 400, 'an event without timestamp', ['nots-1'], /\[0\]\.events\[0\]\.timestamp/);
  isRefused(
    t,
    await post(STRUCTURED, [item(ev('nots-2')), item(ev('nots-3'), ev('nots-4'), { attributes: { case: 'nots-5' } })]),
    400,
    'the third event of the second item without timestamp',
    ['nots-2', 'nots-3', 'nots-4', 'nots-5'],
    /\[1\]\.events\[2\]\.timestamp/,
  );
  isRefused(t, await post(STRUCTURED, [item(ev('nozone-1', { timestamp: '2024-01-01T00:00:00' }))]), 400, 'an ISO timestamp without a zone', ['nozone-1'], /\[0\]\.events\[0\]\.timestamp/);
  isRefused(t, await post(STRUCTURED, [item(ev('badts-1', { timestamp: 'yesterday' }))]), 400, 'a timestamp that is not a date', ['badts-1'], /\[0\]\.events\[0\]\.timestamp/);
  isRefused(t, await post(STRUCTURED, [item(ev('badtz-1', { timezone: 'Mars/Olympus_Mons' }))]), 400, 'an unknown timezone', ['badtz-1'], /\[0\]\.events\[0\]\.timezone/);
  isRefused(t, await post(STRUCTURED, { tags: { host: 'lim' }, events: [ev('nonarray-1')] }), 400, 'a structured body that is an object', ['nonarray-1'], /array/);
  isRefused(t, await post(UNSTRUCTURED, { messages: ['case=nonarray-2'] }), 400, 'an unstructured body that is an object', ['nonarray-2'], /array/);
  isRefused(t, await post(STRUCTURED, '"just a string"'), 400, 'a body that is a string', [], /array/);
  isRefused(t, await post(UNSTRUCTURED, [{ messages: 'case=nonarray-3' }]), 400, 'messages not an array', ['nonarray-3'], /\[0\]\.messages/);
  isRefused(t, await post(UNSTRUCTURED, [{ messages: ['case=nonstring-1', 42] }]), 400, 'a message that is not a string', ['nonstring-1'], /\[0\]\.messages\[1\]/);
  isRefused(t, await post(UNSTRUCTURED, [{ messages: ['case=badfields-1'], fields: { a: { b: 1 } } }]), 400, 'a field value that is an object', ['badfields-1'], /\[0\]\.fields/);
});

t.test('events per request', async (t) => {
  const evs = (prefix: string, n: number): Record<string, unknown>[] => Array.from({ length: n }, (_, i) => ev(`${prefix}-${i}`));
  const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  isRefused(t, await post(STRUCTURED, [item(...evs('over', MAX_EVENTS + 1))]), 400, `${MAX_EVENTS + 1} events in one item`, names('over', MAX_EVENTS + 1), new RegExp(`more than ${MAX_EVENTS} events`));
  isRefused(t, await post(STRUCTURED, [item(...evs('overa', 26)), item(...evs('overb', MAX_EVENTS - 25))]), 400, `${MAX_EVENTS + 1} events over two items`, [...names('overa', 26), ...names('overb', MAX_EVENTS - 25)], /more than/);
  const msgs = Array.from({ length: MAX_EVENTS + 1 }, (_, i) => `case=overu-${i}`);
  isRefused(t, await post(UNSTRUCTURED, [{ messages: msgs }]), 400, `${MAX_EVENTS + 1} messages`, names('overu', MAX_EVENTS + 1), /more than/);
  isOk(t, await post(STRUCTURED, [item(...evs('exact', MAX_EVENTS))]), `exactly ${MAX_EVENTS} events`, names('exact', MAX_EVENTS));
});

const BIG_RAW = `big-event-1 ${'0123456789'.repeat(300)}`;
const BIG_KV = `big-kv-1 ${'k=v '.repeat(800)}`;
const BIG_UTF8 = `big-utf8-1 ${'€'.repeat(1000)}`;

t.test('oversize events are stored truncated', async (t) => {
  isOk(t, await post(STRUCTURED, [item({ timestamp: 1_700_000_000_000, rawstring: BIG_RAW, attributes: { case: 'big-1', a: 'b' } })]), 'an oversize structured event', []);
  isOk(t, await post(UNSTRUCTURED, [{ messages: [BIG_KV] }]), 'an oversize unstructured event', []);
  isOk(t, await post(STRUCTURED, [item({ timestamp: 1_700_000_000_000, rawstring: 'small-with-big-attr', attributes: { case: 'bigattr-1', blob: 'q'.repeat(3000) } })]), 'an event made oversize by an attribute', []);
  isOk(t, await post(STRUCTURED, [item({ timestamp: 1_700_000_000_000, rawstring: BIG_UTF8, attributes: { case: 'bigutf8-1' } })]), 'an event of 1011 characters but 3011 UTF-8 bytes', []);
});

t.test('fields per event', async (t) => {
  const attrs = (c: string, n: number): Record<string, string> => {
    const a: Record<string, string> = { case: c };
    for (let i = 1; i < n; i++) a[`f${String(i).padStart(2, '0')}`] = String(i);
    return a;
  };
  isOk(t, await post(STRUCTURED, [item({ timestamp: 1_700_000_000_000, attributes: attrs('fields-15', 15) })]), '15 attributes', ['fields-15']);
  isOk(t, await post(STRUCTURED, [item({ timestamp: 1_700_000_000_000, attributes: attrs('fields-10', 10) })]), 'exactly 10 attributes', ['fields-10']);
  const kv = Object.entries(attrs('fields-kv15', 15))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  isOk(t, await post(UNSTRUCTURED, [{ messages: [kv] }]), 'a kv line with 15 pairs', ['fields-kv15']);
  isOk(t, await post(UNSTRUCTURED, [{ type: 'json', messages: [JSON.stringify(attrs('fields-json15', 15))] }]), 'a json line with 15 members', ['fields-json15']);
});

t.test('the datasource cap', async (t) => {
  const s = (tv: string, c: string): unknown[] => [{ tags: { t: tv }, events: [ev(c)] }];
  for (const tv of ['1', '2', '3']) isOk(t, await post(STRUCTURED, s(tv, `ds-${tv}`), { token: dsToken }), `tag set ${tv}`, [`ds-${tv}`]);
  isRefused(t, await post(STRUCTURED, s('4', 'ds-4'), { token: dsToken }), 400, 'a 4th tag set', ['ds-4'], new RegExp(`limit of ${MAX_DATASOURCES} datasources`));
  isRefused(t, await post(STRUCTURED, [...s('1', 'ds-mixed-old'), ...s('5', 'ds-mixed-new')] as unknown[], { token: dsToken }), 400, 'an existing and a new tag set together', ['ds-mixed-old', 'ds-mixed-new'], /limit/);
  isRefused(t, await post(UNSTRUCTURED, [{ messages: ['case=ds-unstructured'] }], { token: dsToken }), 400, 'unstructured (#type=kv is a new tag set)', ['ds-unstructured'], /limit/);
  isOk(t, await post(STRUCTURED, s('1', 'ds-1-again'), { token: dsToken }), 'an existing tag set still ingests', ['ds-1-again']);
  isOk(t, await post(STRUCTURED, [...s('3', 'ds-3-again'), ...s('2', 'ds-2-again')] as unknown[], { token: dsToken }), 'two existing tag sets', ['ds-3-again', 'ds-2-again']);
  // Other repositories have their own budget.
  isOk(t, await post(STRUCTURED, [{ tags: { t: '4' }, events: [ev('ds-4-elsewhere')] }], { token: elsewhereToken }), 'the same new tag set in another repository', ['ds-4-elsewhere']);
});

t.test('the tag "repo" is reserved', async (t) => {
  isRefused(t, await post(STRUCTURED, [{ tags: { repo: 'other' }, events: [ev('repo-tag-1')] }]), 400, 'tag repo', ['repo-tag-1'], /"repo"/);
  isRefused(t, await post(STRUCTURED, [{ tags: { host: 'lim', '#repo': 'other' }, events: [ev('repo-tag-2')] }]), 400, 'tag #repo', ['repo-tag-2'], /"repo"/);
  isRefused(t, await post(UNSTRUCTURED, [{ tags: { repo: 'other' }, messages: ['case=repo-tag-3'] }]), 400, 'unstructured tag repo', ['repo-tag-3'], /"repo"/);
  isRefused(t, await post(STRUCTURED, [{ tags: { 'bad tag!': 'x' }, events: [ev('bad-tag-1')] }]), 400, 'an invalid tag name', ['bad-tag-1'], /\[0\]\.tags/);
});

t.test('after all that, the node serves and every acknowledged event is stored', async (t) => {
  await statusOk(t, 'at the end');
  isOk(t, await post(STRUCTURED, [item(ev('final-1'))]), 'a last ingest', ['final-1']);
  t.equal(await node.stop(), 0, 'the node stops cleanly');
  const segs = await inspectAll(node.dataDir);
  for (const s of segs) t.equal(s.code, 0, `inspect ${s.file}`);
  const events: StoredEvent[] = segs.flatMap((s) => s.events);
  const v = await verifyDataDir(node.dataDir);
  t.equal(v.code, 0, `segments verify: ${v.summary}`);
  t.same(v.problems, []);
  const withCase = (c: string): StoredEvent[] => events.filter((e) => e.case === c);
  for (const m of accepted) t.equal(withCase(m).length, 1, `acknowledged ${m} is stored once`);
  for (const m of refused) t.equal(withCase(m).length, 0, `refused ${m} is not stored`);
  const ids = events.map((e) => e['@id']);
  t.equal(new Set(ids).size, ids.length, '@id values are distinct');
  const withRaw = (prefix: string): StoredEvent[] => events.filter((e) => String(e['@rawstring']).startsWith(prefix));

  t.test('oversize events', async (t) => {
    for (const [prefix, full] of [
      ['big-event-1', BIG_RAW],
      ['big-kv-1', BIG_KV],
    ] as const) {
      const found = withRaw(prefix);
      t.equal(found.length, 1, `${prefix} stored once`);
      const e = found[0] ?? {};
      t.equal(e['@rawstring'], `${full.slice(0, MAX_EVENT_BYTES - 3)}...`, `${prefix}: @rawstring truncated to ${MAX_EVENT_BYTES} with "..."`);
      t.equal(e['@error'], 'true', `${prefix}: @error`);
      t.match(e['@error_msg'], /larger than/);
      const fields = Object.keys(e).filter((k) => !k.startsWith('@') && !k.startsWith('#'));
      t.same(fields, [], `${prefix}: no fields`);
    }
    const attr = withRaw('small-with-big-attr');
    t.equal(attr.length, 1, 'the event made big by an attribute is stored once');
    t.equal(attr[0]?.['@error'], 'true', 'and marked');
    t.notOk(attr[0] !== undefined && 'blob' in attr[0], 'without its fields');
    t.ok(String(attr[0]?.['@rawstring']).length <= MAX_EVENT_BYTES);
  });

  t.test('the event size limit counts bytes', async (t) => {
    const found = withRaw('big-utf8-1');
    t.equal(found.length, 1, 'stored once');
    const e = found[0] ?? {};
    const bytes = Buffer.byteLength(String(e['@rawstring']), 'utf8');
    t.ok(bytes <= MAX_EVENT_BYTES, `@rawstring is at most max_event_bytes = ${MAX_EVENT_BYTES} bytes of UTF-8 (it is ${bytes} bytes)`);
    t.equal(e['@error'], 'true', 'an event of 3011 UTF-8 bytes is over the 2048-byte limit and marked');
    t.notOk(String(e['@rawstring']).includes('\ufffd'), 'no character was split');
  });

  t.test('fields per event', async (t) => {
    const userFields = (e: StoredEvent): string[] => Object.keys(e).filter((k) => !k.startsWith('@') && !k.startsWith('#'));
    const first10 = ['case', ...Array.from({ length: 9 }, (_, i) => `f${String(i + 1).padStart(2, '0')}`)];
    const f15 = withCase('fields-15')[0] ?? {};
    t.same(userFields(f15).sort(), first10, 'structured: the first 10 attributes are kept');
    t.equal(f15['@error'], 'true', 'structured: marked with @error');
    t.match(f15['@error_msg'], /attributes|fields/);
    const f10 = withCase('fields-10')[0] ?? {};
    t.equal(userFields(f10).length, 10, 'exactly 10 attributes are all kept');
    t.notOk('@error' in f10, 'exactly 10 attributes: no @error');
    for (const c of ['fields-kv15', 'fields-json15']) {
      const e = withCase(c)[0] ?? {};
      t.same(userFields(e).sort(), first10, `${c}: the first 10 fields are kept`);
      t.equal(e['@error'], 'true', `${c}: a parsed event over max_fields_per_event is marked with @error, as max_fields_per_event promises`);
    }
  });

  t.test('datasources', async (t) => {
    const dsr = events.filter((e) => typeof e['#t'] === 'string' && String(e.case).startsWith('ds-') && e.case !== 'ds-4-elsewhere');
    t.same([...new Set(dsr.map((e) => e['#t']))].sort(), ['1', '2', '3'], 'only the first three tag sets exist in dsr');
    const lim = events.filter((e) => e['#host'] === 'lim');
    t.ok(lim.length > 0);
    for (const e of lim) t.same(tagKeys(e), ['#host', '#repo']);
  });
});
