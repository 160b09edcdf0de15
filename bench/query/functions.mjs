#!/usr/bin/env node
/**
 * Per-event cost of the 40 most-used query functions (query-functions.md §3), each measured side
 * by side with an existing function of its kind in the same run: the same access-log blocks
 * (bench/lib/datasets.mjs, encoded and decoded as segments store them, columns read lazily), the
 * compiled query's stages up to and including its aggregate, rounds alternating between the pair so
 * a shared machine's noise falls on both. Prints CPU ns/event for each and the ratio new/baseline.
 *
 *   node bench/query/functions.mjs [--events 20000] [--rounds 5] [--only name,name] [--against DIR] [--control]
 *                                  [--pair 'name@@query@@baseline' ...] [--dist DIR] [--alone]
 *
 * Times are the process's CPU time (process.cpuUsage, user + system) per event, not wall time: on a
 * shared machine a round that waits for a core is not charged. The order rotates every round
 * (A B C, B C A, C A B, ...), so no side always runs in the same place (a query run right after
 * another measured cheaper in the first version of this bench, which kept one order).
 *
 * --against DIR: the baseline of each pair is the same query compiled by another build's dist/
 * (e.g. main's), so a change to a function is measured against its previous version side by side;
 * that side reads the blocks through its own build's BlockView and ColumnEvent.
 * --pair 'name@@query@@baseline' (repeatable): measure this pair too (with --only, name it there).
 * --control: a third query in every round, the baseline again, compiled separately: its ratio to the
 * baseline (A/A) is what noise alone gives, the yardstick for a ratio near 1.
 * --dist DIR: the build to measure (default this checkout's dist/). --alone: only each pair's
 * function, no baseline in the process: for functions whose garbage falls in the other side's
 * rounds (a state that holds many objects), run once per build in separate processes, alternating.
 *
 * Needs `npm run build` (it loads dist/). In-process, one thread, no server.
 */
import { resolve as resolvePath } from 'node:path';
import { createDataset } from '../lib/datasets.mjs';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : Number(process.argv[i + 1]);
};
const EVENTS = arg('events', 20_000);
const ROUNDS = arg('rounds', 5);
const AGAINST = process.argv.includes('--against') ? process.argv[process.argv.indexOf('--against') + 1] : null;
const CONTROL = process.argv.includes('--control');
const ONLY = process.argv.includes('--only') ? new Set(process.argv[process.argv.indexOf('--only') + 1].split(',')) : null;
const ALONE = process.argv.includes('--alone');
const DIST = process.argv.includes('--dist') ? process.argv[process.argv.indexOf('--dist') + 1] : null;

const dist = DIST === null ? new URL('../../dist/', import.meta.url) : new URL(`file://${resolvePath(DIST).replace(/\/?$/, '/')}`);
const { compileQuery } = await import(new URL('query/compile.js', dist));
const { BlockView, ColumnEvent } = await import(new URL('query/block-view.js', dist));
const { chainStages } = await import(new URL('query/pipeline.js', dist));
const { appendEvent, emptyColumns, encodeBlockContent } = await import(new URL('segments/block.js', dist));
const other = AGAINST === null ? null : new URL(`file://${AGAINST.replace(/\/?$/, '/')}`);
const otherCompile = other === null ? compileQuery : (await import(new URL('query/compile.js', other))).compileQuery;
const otherChain = other === null ? chainStages : (await import(new URL('query/pipeline.js', other))).chainStages;
// The other build reads the blocks through its own BlockView and ColumnEvent: a function that asks
// `e instanceof ColumnEvent` (selfJoinFilter) saw the first build's events as foreign and took its
// per-event path, which put the other side of such a pair 4x too high.
const otherViews = other === null ? { BlockView, ColumnEvent } : await import(new URL('query/block-view.js', other));

/** The client addresses of the dataset (filled by blocks()). */
const CLIENTS = new Set();

/** Blocks of 2,000 access-log events with their parsed fields, plus a few array/location fields. */
function blocks() {
  const gen = createDataset('accesslog', 7);
  const out = [];
  for (let b = 0; b < EVENTS / 2000; b++) {
    const c = emptyColumns();
    for (let i = 0; i < 2000; i++) {
      const e = gen();
      const f = {};
      for (const [k, v] of Object.entries(e.attributes)) f[k] = String(v);
      f['lat'] = String((i % 170) - 85);
      f['lon'] = String((i % 350) - 175);
      f['tags[0]'] = f['method'];
      f['tags[1]'] = f['statuscode'];
      // The same three values as JSON and as key=value text (the parseJson pair).
      f['j'] = JSON.stringify({ method: f['method'], status: f['statuscode'], size: f['responsesize'] });
      f['kv'] = `method=${f['method']} status=${f['statuscode']} size=${f['responsesize']}`;
      CLIENTS.add(f['client']);
      appendEvent(c, e.timestamp, 'Z', e.rawstring, f, 0, b * 2000 + i, 0);
    }
    out.push(encodeBlockContent(c).body);
  }
  return out;
}

/** [name, new query, baseline query (an existing function of the same kind)] */
const PAIRS = [
  ['groupBy', 'groupBy(statuscode)', 'count()'],
  ['count', 'count(userid)', 'count()'],
  ['rename', 'rename(url, as=u) | count()', 'drop(url) | count()'],
  ['timeChart', 'timeChart(span=1h)', 'groupBy(statuscode)'],
  ['format', 'format("%s %s", field=[method, url], as=f) | count()', 'lower(url, as=f) | count()'],
  ['collect', 'collect(method)', 'count(method, distinct=true)'],
  ['table', 'table([url, statuscode])', 'tail(200)'],
  ['sort', 'sort(responsesize, limit=200)', 'tail(200)'],
  ['top', 'top(url)', 'groupBy(url)'],
  ['regex', 'regex("HTTP/(?<v>\\\\d)", field=@rawstring) | count()', 'method=GET | count()'],
  ['drop', 'drop([url, useragent]) | count()', 'select([method]) | count()'],
  ['select', 'select([method, url]) | count()', 'drop([url]) | count()'],
  ['formatTime', 'formatTime("%Y-%m-%d %H", as=d) | count()', 'lower(method, as=d) | count()'],
  ['in', 'in(statuscode, values=["200", "404"]) | count()', 'statuscode=200 | count()'],
  ['match', 'statuscode match { 200 => x := 1 ; * => x := 2 } | count()', 'case { statuscode=200 | x := 1 ; * | x := 2 } | count()'],
  ['selectLast', 'groupBy(statuscode, function=selectLast(url))', 'groupBy(statuscode, function=max(responsesize))'],
  ['ipLocation', 'ipLocation(client) | count()', 'lower(client, as=x) | count()'],
  // The lookup kind: match() against a table of exactly the addresses ipLocation finds, with the
  // same four columns, so both write four fields on the same events.
  ['ipLocation (pair: match)', 'ipLocation(client) | count()', 'match(geo, field=client, column=ip, include=[country, city, lat, lon], strict=false) | count()'],
  // Another lookup of the address in a configured data file (it writes fields on few events).
  ['ipLocation (pair: ioc:lookup)', 'ipLocation(client) | count()', 'ioc:lookup(client, type=ip_address, confidenceThreshold=low) | count()'],
  ['default', 'default(field=userid, value="-") | count()', 'lower(method, as=m) | count()'],
  ['sankey', 'sankey(source=method, target=statuscode)', 'groupBy([method, statuscode])'],
  ['worldMap', 'worldMap(lat=lat, lon=lon)', 'groupBy([lat, lon])'],
  ['test', 'test(responsesize > 1000) | count()', 'responsesize > 1000 | count()'],
  ['wildcard', 'wildcard("*login*", field=url) | count()', 'url=*login* | count()'],
  ['wildcard (pair swapped)', 'url=*login* | count()', 'wildcard("*login*", field=url) | count()'],
  ['sum', 'sum(responsesize)', 'count()'],
  ['join', 'join({x}, field=method, include=[kind], mode=left) | count()', 'match(t, field=method, strict=false) | count()'],
  ['parseTimestamp', 'd := "2024-01-02" | parseTimestamp("yyyy-MM-dd", field=d, timezone=UTC) | count()', 'd := "2024-01-02" | count()'],
  ['replace', 'replace("\\\\d", with="#", field=url, as=r) | count()', 'lower(url, as=r) | count()'],
  // A regex run per event (the kind): replace finds every match and builds a string, regex() stops at the first.
  ['replace (pair: regex)', 'replace("\\\\d", with="#", field=url, as=r) | count()', 'regex("(?<r>\\\\d)", field=url, strict=false) | count()'],
  ['cidr', 'cidr(client, subnet=["10.0.0.0/8"]) | count()', 'in(method, values=[GET]) | count()'],
  // The same filter on the same field: the address column read either way.
  ['cidr (pair: in on client)', 'cidr(client, subnet=["10.0.0.0/8"]) | count()', 'in(client, values=["10.*"]) | count()'],
  ['ioc:lookup', 'ioc:lookup(client, type=ip_address, confidenceThreshold=low) | count()', 'cidr(client, subnet=["10.0.0.0/8"]) | count()'],
  ['lower', 'lower(url) | count()', 'upper(url) | count()'],
  ['parseJson', 'parseJson(useragent) | count()', 'kvParse(useragent) | count()'],
  // Text that holds JSON, against key=value text with the same three values.
  ['parseJson (JSON field)', 'parseJson(j) | count()', 'kvParse(kv) | count()'],
  ['max', 'max(responsesize)', 'sum(responsesize)'],
  ['round', 'round(responsetime) | count()', 'x := responsetime * 1 | count()'],
  ['now', 'now() | count()', 'count()'],
  ['selectFromMax', 'selectFromMax(responsesize, include=[url])', 'max(responsesize)'],
  ['split', 'split(tags) | count()', 'count()'],
  ['min', 'min(responsesize)', 'max(responsesize)'],
  ['selfJoinFilter', 'selfJoinFilter(url, where=[{method=GET}, {method=POST}]) | count()', 'groupBy(url)'],
  ['correlate', 'correlate(get: { method=GET } include: [statuscode], post: { method=POST | url <=> get.url } include: [statuscode], within=1h)', 'selfJoinFilter(url, where=[{method=GET}, {method=POST}])'],
  ['avg', 'avg(responsesize)', 'sum(responsesize)'],
  ['kvParse', 'kvParse(url) | count()', 'regex("(?<k>\\\\w+)=(?<v>\\\\w+)", field=url, strict=false) | count()'],
  ['splitString', 'splitString(url, by="/") | count()', 'lower(url) | count()'],
  ['free text (all fields)', 'zq7xk2vblm | count()', '@rawstring=*zq7xk2vblm* | count()'],
];

// Extra pairs from the command line (a fair control for one row, say).
process.argv.forEach((a, i) => {
  if (a !== '--pair') return;
  const parts = (process.argv[i + 1] ?? '').split('@@');
  if (parts.length !== 3) throw new Error(`--pair wants 'name@@query@@baseline', got ${process.argv[i + 1]}`);
  PAIRS.push(/** @type {[string, string, string]} */ (parts));
});

const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
const { join: pathJoin } = await import('node:path');
const dir = mkdtempSync(pathJoin(tmpdir(), 'bench-fns-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const bodies = blocks();
const geoip = pathJoin(dir, 'geo.csv');
const ioc = pathJoin(dir, 'ioc.csv');
const nets = Array.from({ length: 5000 }, (_, i) => `${(i >> 8) + 1}.${i & 255}.0.0/16,C${i % 200},City${i},${(i % 170) - 85},${(i % 350) - 175}`);
writeFileSync(geoip, `network,country,city,lat,lon\n${nets.join('\n')}\n`);
writeFileSync(ioc, `indicator,type,malicious_confidence,labels,published_date,last_updated\n${Array.from({ length: 5000 }, (_, i) => `10.${i >> 8}.${i & 255}.1,ip_address,high,x,1,2`).join('\n')}\n`);
const ctx = { start: 0, end: Date.now() + 86_400_000, timeZoneOffsetMinutes: 0, now: Date.now(), live: false, dataFiles: { geoip, ioc } };
const { packTable } = await import(new URL('files/packed.js', dist));
const { joinKey } = await import(new URL('query/subqueries.js', dist));
const table = packTable('bench', 'csv', { columns: ['method', 'kind'], rows: [['GET', 'read'], ['POST', 'write']], keyColumn: null });
// The rows of geo.csv that the dataset's client addresses fall in, one per address (see PAIRS).
const geoRows = [...CLIENTS].flatMap((ip) => {
  const [a, b] = ip.split('.').map(Number);
  const i = (a - 1) * 256 + b;
  return a >= 1 && i < 5000 ? [[ip, `C${i % 200}`, `City${i}`, String((i % 170) - 85), String((i % 350) - 175)]] : [];
});
const geo = packTable('geo', 'csv', { columns: ['ip', 'country', 'city', 'lat', 'lon'], rows: geoRows, keyColumn: null });
const files = { t: table, [joinKey(0)]: table, geo };

function runOnce(text, bodies, old = false) {
  const q = (old ? otherCompile : compileQuery)(text, { ctx, files });
  const at = q.stages.findIndex((s) => s.kind === 'agg');
  const agg = q.stages[at].agg;
  const st = agg.init();
  const feed = (old ? otherChain : chainStages)(q.stages.slice(0, at), (e) => agg.add(st, e));
  const { BlockView: View, ColumnEvent: Row } = old ? otherViews : { BlockView, ColumnEvent };
  const t0 = process.cpuUsage();
  let n = 0;
  for (const body of bodies) {
    const view = View.fromBody(body, { repoName: 'bench', partition: 0, tags: { host: 'h' } });
    for (let i = 0; i < view.n; i++) feed(new Row(view, i));
    n += view.n;
  }
  agg.finish(st);
  const t = process.cpuUsage(t0);
  return ((t.user + t.system) * 1000) / n;
}

const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const rows = [];
for (const [name, q, baseQuery] of PAIRS) {
  if (ONLY !== null && !ONLY.has(name)) continue;
  const base = other === null ? baseQuery : `${q} (${AGAINST})`;
  const old = other !== null;
  // [label, run] for the function, its baseline and (--control) the baseline again.
  const sides = [() => runOnce(q, bodies)];
  if (!ALONE) sides.push(() => runOnce(old ? q : baseQuery, bodies, old));
  if (CONTROL && !ALONE) sides.push(() => runOnce(old ? q : baseQuery, bodies, old));
  for (const run of sides) run(); // warm-up: compile paths and JIT on the whole set
  const times = sides.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    const order = sides.map((_, i) => (i + r) % sides.length);
    for (const i of order) times[i].push(sides[i]());
  }
  rows.push([name, q, base, ...times.map(med)]);
}
process.stdout.write(`events: ${EVENTS} (access log, blocks of 2,000), rounds: ${ROUNDS}, order rotated each round, medians, CPU ns/event\n\n`);
if (ALONE) {
  process.stdout.write(`build: ${dist.pathname}\n\n| function | query | ns/event |\n|---|---|---|\n`);
  for (const [name, q, , a] of rows) process.stdout.write(`| ${name} | \`${q.replace(/\|/g, '\\|')}\` | ${a.toFixed(0)} |\n`);
  process.exit(0);
}
const controlHead = CONTROL ? ' control (baseline again) | A/A ratio |' : '';
process.stdout.write(`| function | query | ns/event | baseline (same kind) | ns/event | ratio |${controlHead}\n|---|---|---|---|---|---|${CONTROL ? '---|---|' : ''}\n`);
for (const [name, q, base, a, b, c] of rows) {
  const control = c === undefined ? '' : ` ${c.toFixed(0)} | ${(c / b).toFixed(2)} |`;
  process.stdout.write(`| ${name} | \`${q.replace(/\|/g, '\\|')}\` | ${a.toFixed(0)} | \`${base.replace(/\|/g, '\\|')}\` | ${b.toFixed(0)} | ${(a / b).toFixed(2)} |${control}\n`);
}
