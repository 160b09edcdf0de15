/**
 * Hostile queries against a real node (issue 24, defects 1, 2, 5, 6 and 8): each must end in a
 * clear 4xx (or a complete answer) with the node still answering /api/v1/status afterwards.
 *
 * - memory: ten ~900 KB events and replace("e", with=<500 E's>) (the node died of a heap OOM);
 *   a result that stays under the per-value bound but adds up past the query's memory budget;
 * - parseJson over an event nested 100,000 deep (500 "Maximum call stack size exceeded");
 * - 5,000 ANDed words, eval with 8,000 "+" terms, 101 nested parentheses (500 / stack);
 * - format("%999999999d") (500 "Invalid string length");
 * - groupBy past its 20,000-group default: every /query form and query jobs say the result was cut;
 *   groupBy's limit=max is 1,000,000 and head/tail/sort/table's 200,000, the product's limits.
 */
import t, { type Test } from 'tap';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { createRepo, ingestStructured, openNdjsonStream, postQuery, queryJson, runJob, type Format, type KnownEvent } from '../helpers/query.js';

t.setTimeout(600_000);

const BUDGET = 64 * 1024 * 1024;
const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 1', 'worker_threads = 1', '[query]', `max_query_memory_bytes = ${BUDGET}`, ''].join('\n');

const node = await startNode(t, { config: CONFIG });
const token = node.adminToken;
const now = Date.now();

function events(n: number, make: (i: number) => Partial<KnownEvent>): KnownEvent[] {
  return Array.from({ length: n }, (_, i) => ({ timestamp: now - 60_000 - i, rawstring: `event ${i}`, attributes: {}, tags: { host: 'h1' }, ...make(i) }));
}

async function statusOk(t: Test): Promise<void> {
  const r = await api(node.url, '/api/v1/status', { timeoutMs: 10_000 });
  t.equal(r.status, 200, 'the node still answers /api/v1/status');
}

async function query(repo: string, q: string, format: Format = 'json', extra: Record<string, unknown> = {}): Promise<{ status: number; text: string; warning: string | null }> {
  const r = await postQuery(node.url, repo, { queryString: q, start: '1d', ...extra }, { token, format, timeoutMs: 120_000 });
  return { status: r.status, text: r.text, warning: r.headers.get('warning') };
}

const big = await createRepo(node.url, token, 'big');
const mid = await createRepo(node.url, token, 'mid');
const deep = await createRepo(node.url, token, 'deep');
const many = await createRepo(node.url, token, 'many');

await ingestStructured(node.url, big.ingestToken, events(10, () => ({ rawstring: 'e'.repeat(900_000) })), 2);
// 8,000 e's: replace() makes 4.2 M characters (~8.4 MB) per event, under the per-value bound; ten
// such rows pass 64 MiB. Keeping one row must fit with room for what two scan threads hold at once
// (each its kept row and the event it is replacing) and the coordinator's merge: ~6 rows, ~50 MB.
await ingestStructured(node.url, mid.ingestToken, events(10, () => ({ rawstring: 'e'.repeat(8_000) + 'x'.repeat(200_000) })), 2);
await ingestStructured(node.url, deep.ingestToken, [
  ...events(3, (i) => ({ rawstring: JSON.stringify({ a: { b: i } }) })),
  ...events(1, () => ({ timestamp: now - 30_000, rawstring: '['.repeat(100_000) + ']'.repeat(100_000) })),
]);
const GROUPS = 25_000;
await ingestStructured(node.url, many.ingestToken, events(GROUPS, (i) => ({ attributes: { k: `k${i}` } })), 5000);

t.test('replace() expanding ten 900 KB events: 400 naming replace, not a heap OOM', async (t) => {
  const r = await query('big', `replace("e", with="${'E'.repeat(500)}")`);
  t.equal(r.status, 400, r.text.slice(0, 300));
  t.match(r.text, /replace: the result would be at least \d+ characters long/);
  await statusOk(t);
});

t.test('values adding up past the query memory budget: 400 naming the budget', async (t) => {
  for (const format of ['json', 'text', 'ndjson'] as const) {
    const r = await query('mid', `replace("e", with="${'E'.repeat(500)}")`, format);
    t.equal(r.status, 400, `${format}: ${r.text.slice(0, 300)}`);
    t.match(r.text, /memory budget of 64 MiB \(query\.max_query_memory_bytes\)/);
  }
  // The same query keeping one row fits.
  const one = await query('mid', `replace("e", with="${'E'.repeat(500)}") | tail(1) | length(@rawstring, as=n) | select([n])`);
  t.equal(one.status, 200, one.text.slice(0, 300));
  t.same(JSON.parse(one.text), [{ n: String(8_000 * 500 + 200_000) }]);
  // The budget is given back: a plain query still runs.
  t.equal(JSON.parse((await query('mid', 'count()')).text)[0]._count, '10');
  await statusOk(t);
});

t.test('parseJson over JSON nested 100,000 deep: counted and marked with @error', async (t) => {
  const all = await query('deep', 'parseJson() | count()');
  t.equal(all.status, 200, all.text.slice(0, 300));
  t.same(JSON.parse(all.text), [{ _count: '4' }]);
  const marked = await query('deep', 'parseJson() | @error=true | table([@error, @error_msg])');
  t.equal(marked.status, 200, marked.text.slice(0, 300));
  t.same(JSON.parse(marked.text), [{ '@error': 'true', '@error_msg': 'parseJson: nesting deeper than 64 levels' }]);
  const parsed = await query('deep', 'parseJson() | a.b=* | count()');
  t.same(JSON.parse(parsed.text), [{ _count: '3' }], 'the other events are parsed as before');
  await statusOk(t);
});

t.test('long flat queries and deep nesting: 400 naming the limit', async (t) => {
  const ands = Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' AND ');
  const a = await query('deep', ands);
  t.equal(a.status, 400, a.text.slice(0, 300));
  t.match(a.text, /more than 3000 levels of operators and nesting/);
  const plus = await query('deep', `eval(y = ${Array.from({ length: 8000 }, () => 'x').join(' + ')})`);
  t.equal(plus.status, 400, plus.text.slice(0, 300));
  t.match(plus.text, /more than 3000 levels of operators and nesting/);
  const parens = await query('deep', `${'('.repeat(101)}a${')'.repeat(101)}`);
  t.equal(parens.status, 400, parens.text.slice(0, 300));
  t.match(parens.text, /nests more than 100 levels/);
  const ors = await query('deep', Array.from({ length: 900 }, (_, i) => `w${i}`).join(' or ') + ' | count()');
  t.equal(ors.status, 200, 'a chain under the bound runs');
  await statusOk(t);
});

t.test('oversized string results: 400 naming the function', async (t) => {
  const f = await query('deep', 'x := "1" | format("%999999999d", field=x)');
  t.equal(f.status, 400, f.text.slice(0, 300));
  t.match(f.text, /format: the width 999999999/);
  const p = await query('deep', 'x := "1" | format("%.200f", field=x)');
  t.equal(p.status, 400, p.text.slice(0, 300));
  t.match(p.text, /format: the precision 200/);
  const rep = await query('big', `tail(1) | replace("e", with="${'E'.repeat(20)}")`);
  t.equal(rep.status, 400, rep.text.slice(0, 300));
  t.match(rep.text, /replace: the result would be at least \d+ characters long, more than the 16777216 characters a query function may make/);
  await statusOk(t);
});

t.test('a cut groupBy says so in every response form', async (t) => {
  const q = 'groupBy(k)';
  for (const format of ['json', 'text', 'ndjson'] as const) {
    const r = await query('many', q, format);
    t.equal(r.status, 200, format);
    t.match(r.warning, /^299 logsvc "groupBy returned incomplete results limited to a restricted subset of groups and related events: the limit of 20000 groups was exceeded/, `${format}: Warning header`);
  }
  const json = JSON.parse((await query('many', q)).text) as unknown[];
  t.equal(json.length, 20_000);
  const job = await runJob(node.url, 'many', token, { queryString: q, start: '1d' });
  t.equal(job.final.events.length, 20_000);
  t.match(job.final.metaData.warnings, [/groupBy returned incomplete results/], 'query job metaData.warnings');

  // limit=max is the product's GroupMaxLimit: all 25,000 groups, no warning.
  const all = await query('many', 'groupBy(k, limit=max) | count()');
  t.same(JSON.parse(all.text), [{ _count: String(GROUPS) }]);
  t.equal(all.warning, null);
  t.equal((await query('many', 'groupBy(k, limit=1000000) | count()')).status, 200);
  const over = await query('many', 'groupBy(k, limit=1000001)');
  t.equal(over.status, 400);
  t.match(over.text, /above the maximum 1000000/);

  // head/tail/sort/table: the product's StateRowLimit, 200,000.
  t.equal((await query('many', 'tail(limit=200000) | count()')).status, 200);
  const tail = await query('many', 'tail(limit=200001)');
  t.equal(tail.status, 400);
  t.match(tail.text, /above the maximum 200000/);
  t.equal(JSON.parse((await query('many', 'sort(k, limit=max) | count()')).text)[0]._count, String(GROUPS));

  // A filter query on /query streams every event (api-facts §1.3), static or live (its historical part).
  const filter = await query('many', 'k=*', 'ndjson');
  t.equal(filter.text.split('\n').length - 1, 25_000, 'static /query: all 25,000 events');
  t.equal(filter.warning, null, 'static /query: nothing cut');
  const stream = await openNdjsonStream(node.url, 'many', token, { queryString: 'k=*', start: '1d', isLive: true });
  t.equal(stream.status, 200);
  t.equal(stream.headers.get('warning'), null, 'live /query: nothing cut, no Warning');
  // Read until all have come (60 s at most on a busy machine), then 1 s more for any repeated.
  const got: Record<string, any>[] = [];
  for (const deadline = Date.now() + 60_000; got.length < 25_000 && Date.now() < deadline; ) {
    const e = await stream.next(deadline - Date.now());
    if (e === null) break;
    got.push(e);
  }
  got.push(...(await stream.collectFor(1000)));
  t.equal(got.length, 25_000, 'live /query: the historical part holds all 25,000 events');
  t.equal(new Set(got.map((e) => e.k)).size, 25_000, 'each once');
  await stream.close();
  await statusOk(t);
});

t.test('the rows cut by a query with no aggregate are not a warning in jobs (hasMoreEvents says it)', async (t) => {
  const job = await runJob(node.url, 'many', token, { queryString: 'k=*', start: '1d' });
  t.same(job.final.metaData.warnings, []);
  t.equal(job.final.metaData.extraData.hasMoreEvents, 'true');
});

t.test('memory of all queries is given back', async (t) => {
  const rows = await queryJson(node.url, 'many', { queryString: 'groupBy(k, limit=max, function=collect(@rawstring)) | count()', start: '1d' }, { token });
  t.same(rows, [{ _count: String(GROUPS) }]);
  await statusOk(t);
});
