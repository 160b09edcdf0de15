#!/usr/bin/env node
/**
 * The web UI benchmark: a spawned node with --events events (default 1,000,000) in one repository
 * over the last hour, then Debian's chromium (playwright-core) measures, on loopback:
 *   - the search page's first paint and first contentful paint, and the time until the histogram
 *     and the first event rows are on screen (a fresh tab each time, --loads times);
 *   - the search over every event (histogram of all, `--list` newest events listed): the longest
 *     main-thread task while it ran and rendered, the longest frame while the event list is scrolled
 *     end to end, and the rows in the page (virtualised: only the visible ones);
 *   - the UI's assets: bytes raw, gzip and brotli (dist/ui/sizes.json, written by npm run build).
 * Everything binds 127.0.0.1; the node and its temp dir are removed at the end.
 */
import { parseArgs } from 'node:util';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createControlClient, createLoadPool, graphql, postBody } from '../lib/http.mjs';
import { makeTempDir, removeTempDir, startLogsvcNode } from '../lib/processes.mjs';
import { numberOption, runWithin, startRun } from '../lib/cli.mjs';
import { waitDigested } from '../lib/digest.mjs';
import { percentile } from '../lib/stats.mjs';
import { progressLine } from '../lib/plot.mjs';
import { commandLine, machine } from '../ingest/report.mjs';

const HELP = `Usage: node bench/ui/run.mjs [options]

  --events N      events ingested into the searched repository            (default 1000000)
  --list N        newest events the search lists (the URL's limit)         (default 20000)
  --loads N       fresh page loads timed for first paint                   (default 5)
  --chromium P    the browser                                             (default /usr/bin/chromium)
  --help          this text
`;

const NODE_CONFIG = `# written by bench/ui/run.mjs
[digest]
flush_block_seconds = 5

[ingest]
max_undigested_bytes = 68719476736
`;
const BATCH = 5000;
const log = (/** @type {string} */ s) => process.stdout.write(`${s}\n`);
const progress = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);

/** @param {string[]} argv */
function parseOptions(argv) {
  const { values } = parseArgs({ args: argv, options: { events: { type: 'string' }, list: { type: 'string' }, loads: { type: 'string' }, chromium: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) return /** @type {const} */ ({ help: true });
  /** @type {string[]} */
  const problems = [];
  const num = numberOption(problems);
  const options = {
    events: num('events', values.events ?? '1000000', 1000, 50_000_000, true),
    list: num('list', values.list ?? '20000', 1, 20_000, true),
    loads: num('loads', values.loads ?? '5', 1, 50, true),
    chromium: values.chromium ?? '/usr/bin/chromium',
  };
  return problems.length > 0 ? { help: /** @type {const} */ (false), problems } : { help: /** @type {const} */ (false), options };
}

/** @param {number} n @param {number} now */
function body(n, first, now) {
  const methods = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
  const paths = ['/', '/login', '/api/items', '/api/items/42', '/static/app.js', '/health'];
  const statuses = ['200', '200', '200', '304', '404', '500'];
  const events = [];
  for (let i = first; i < first + n; i++) {
    const m = methods[i % 6];
    const p = paths[(i * 7) % 6];
    const s = statuses[(i * 5) % 6];
    events.push({ timestamp: now - 3_500_000 + Math.floor((i * 2_654_435_761) % 3_400_000), rawstring: `10.1.${(i >> 8) & 255}.${i & 255} - - "${m} ${p} HTTP/1.1" ${s} ${i % 9000} "bench/1.0"`, attributes: { method: m, path: p, status: s } });
  }
  return JSON.stringify([{ tags: { host: `web-${first % 3}` }, events }]);
}

/** @param {{ url: string, token: string, events: number }} o */
async function ingest(o) {
  const pool = createLoadPool(o.url, 4);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${o.token}` };
  const now = Date.now();
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  /** @type {number[]} */
  const recent = [];
  let last = 0;
  const ticker = setInterval(() => {
    const lat = Float64Array.from(recent.splice(0)).sort();
    progress(progressLine({ label: '[ingest]', elapsedSec: (performance.now() - t0) / 1000, rate: done - last, unit: 'events/s', p99Ms: lat.length === 0 ? null : percentile(lat, 99), extra: `${done.toLocaleString('en-US')} / ${o.events.toLocaleString('en-US')}` }));
    last = done;
  }, 1000);
  const worker = async () => {
    while (next < o.events) {
      const first = next;
      const n = Math.min(BATCH, o.events - first);
      next += n;
      const b = body(n, first, now);
      for (;;) {
        const sent = performance.now();
        const r = await postBody(pool, '/api/v1/ingest/humio-structured', headers, b);
        if (r.status === 200) {
          recent.push(performance.now() - sent);
          break;
        }
        if (r.status !== 503 && r.status !== 429) throw new Error(`ingest: HTTP ${r.status} ${r.text?.slice(0, 300)}`);
        await new Promise((res) => setTimeout(res, 200));
      }
      done += n;
    }
  };
  try {
    await Promise.all([worker(), worker(), worker(), worker()]);
  } finally {
    clearInterval(ticker);
    await pool.destroy();
  }
  return (performance.now() - t0) / 1000;
}

/** Collected in the page: long tasks (the main thread busy > 50 ms). */
const INIT = `
window.__longTasks = [];
try { new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push(e.duration); }).observe({ type: 'longtask', buffered: true }); } catch {}
`;

/** @param {typeof OPTIONS} o */
async function main(o) {
  const date = new Date().toISOString();
  log(`logsvc UI benchmark ${date}\n${commandLine()}\n${JSON.stringify(machine())}\n`);
  const sizes = JSON.parse(await readFile(new URL('../../dist/ui/sizes.json', import.meta.url), 'utf8'));
  const root = await makeTempDir('logsvc-bench-ui-');
  const { server, adminToken } = await startLogsvcNode({ rootDir: root, config: NODE_CONFIG, nodeFlags: [] });
  const control = createControlClient(server.url);
  const profile = await mkdtemp(join(tmpdir(), 'logsvc-bench-chromium-'));
  let browser = null;
  try {
    const created = await graphql(control, adminToken, 'mutation { createRepository(name: "bench") { repository { ingestTokens { token } } } }');
    const token = created?.createRepository?.repository?.ingestTokens?.[0]?.token;
    const secs = await ingest({ url: server.url, token, events: o.events });
    log(`ingested ${o.events.toLocaleString('en-US')} events in ${secs.toFixed(1)} s`);
    const dig = await waitDigested(control, adminToken, 600_000);
    log(`digested (segments written) after ${dig.seconds.toFixed(1)} s more`);

    browser = await chromium.launchPersistentContext(profile, {
      executablePath: o.chromium,
      headless: true,
      viewport: { width: 1400, height: 860 },
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    await browser.addInitScript(`sessionStorage.setItem('logsvc.token', ${JSON.stringify(adminToken)});${INIT}`);

    // First paint: a fresh tab each time, a small search (the newest 5 minutes).
    /** @type {{ fp: number, fcp: number, results: number }[]} */
    const loads = [];
    for (let i = 0; i < o.loads; i++) {
      const page = await browser.newPage();
      await page.goto(`${server.url}/#/search?repo=bench&q=&start=5m`);
      await page.waitForSelector('[data-testid=event]', { timeout: 120_000 });
      await page.waitForSelector('[data-testid=histogram] canvas', { timeout: 120_000 });
      const t = await page.evaluate(() => {
        const paint = Object.fromEntries(performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]));
        return { fp: paint['first-paint'] ?? Number.NaN, fcp: paint['first-contentful-paint'] ?? Number.NaN, results: performance.now() };
      });
      loads.push(t);
      progress(`[page load ${i + 1}/${o.loads}] first paint ${t.fp.toFixed(0)} ms, first contentful paint ${t.fcp.toFixed(0)} ms, results on screen ${t.results.toFixed(0)} ms`);
      await page.close();
    }

    // The search over everything: histogram of all events, the newest --list listed.
    const page = await browser.newPage();
    const t0 = Date.now();
    await page.goto(`${server.url}/#/search?repo=bench&q=&start=1h&limit=${o.list}`);
    const want = `${o.events.toLocaleString('en-US')} matching`;
    await page.waitForFunction((w) => document.querySelector('[data-testid=status]')?.textContent?.includes(w) === true, want, { timeout: 600_000, polling: 200 });
    await page.waitForFunction((n) => document.querySelector('[data-testid=status]')?.textContent?.startsWith('Done') === true && document.querySelectorAll('[data-testid=event]').length > 0, o.list, { timeout: 600_000, polling: 200 });
    const searchSeconds = (Date.now() - t0) / 1000;
    const during = await page.evaluate(() => ({ longTasks: /** @type {any} */ (window).__longTasks.slice(), rows: document.querySelectorAll('[data-testid=event]').length, status: document.querySelector('[data-testid=status]')?.textContent ?? '' }));
    // Scroll the list end to end in 40 steps, one per frame, timing the frames.
    const scroll = await page.evaluate(async () => {
      const list = /** @type {HTMLElement} */ (document.querySelector('[data-testid=event-list]'));
      const gaps = [];
      let last = performance.now();
      for (let i = 1; i <= 40; i++) {
        list.scrollTop = (list.scrollHeight * i) / 40;
        await new Promise((r) => requestAnimationFrame(() => r(null)));
        const now = performance.now();
        gaps.push(now - last);
        last = now;
      }
      return { maxFrameMs: Math.max(...gaps), scrollHeight: list.scrollHeight, rows: document.querySelectorAll('[data-testid=event]').length };
    });
    await page.close();

    const med = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
    log('\nresults');
    log(`  first paint                      median ${med(loads.map((l) => l.fp)).toFixed(0)} ms, max ${Math.max(...loads.map((l) => l.fp)).toFixed(0)} ms (${o.loads} fresh tabs; target < 1000 ms)`);
    log(`  first contentful paint           median ${med(loads.map((l) => l.fcp)).toFixed(0)} ms, max ${Math.max(...loads.map((l) => l.fcp)).toFixed(0)} ms`);
    log(`  histogram + events on screen     median ${med(loads.map((l) => l.results)).toFixed(0)} ms (search of the newest 5 minutes)`);
    log(`  search over ${o.events.toLocaleString('en-US')} events        ${searchSeconds.toFixed(1)} s to "Done" (${during.status.trim()})`);
    log(`  longest main-thread task         ${during.longTasks.length === 0 ? 'none over 50 ms' : `${Math.max(...during.longTasks).toFixed(0)} ms`} (${during.longTasks.length} tasks over 50 ms, load and search together)`);
    log(`  event list                       ${o.list.toLocaleString('en-US')} events listed, ${during.rows} rows in the page; scrolled end to end (${scroll.scrollHeight.toLocaleString('en-US')} px) in 40 frames: longest frame ${scroll.maxFrameMs.toFixed(0)} ms, ${scroll.rows} rows in the page`);
    log(`  UI assets                        ${sizes.raw.toLocaleString('en-US')} bytes raw, ${sizes.gzip.toLocaleString('en-US')} gzip, ${sizes.brotli.toLocaleString('en-US')} brotli (target < 1 MB compressed)`);
  } finally {
    await browser?.close().catch(() => {});
    await rm(profile, { recursive: true, force: true });
    await control.close();
    await server.stop(60_000);
    await removeTempDir(root);
  }
}

const OPTIONS = /** @type {{ events: number, list: number, loads: number, chromium: string }} */ ({});
const { options, abort } = startRun(parseOptions(process.argv.slice(2)), HELP);
await runWithin(abort, 30 * 60_000, '30 minutes', () => main(options));
