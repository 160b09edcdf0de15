/**
 * The web UI end to end in a real browser (Debian's chromium driven by playwright-core) against a
 * real node: sign in, pick a repository, search (histogram, events, expand, field filter, zoom),
 * live mode sees a newly ingested event, an aggregate as a chart and a table, a parser edited with
 * its test case run as you type, an action and an alert created, a file uploaded, the cluster page.
 * Screenshots go to test-artifacts/ui/ (gitignored).
 */
import t from 'tap';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startNode } from '../helpers/node-process.js';
import { createRepo, ingestStructured, type KnownEvent } from '../helpers/query.js';
import { openBrowser } from '../helpers/browser.js';

// What the functions run inside the page see (this program is type-checked without the DOM library).
declare const document: { querySelector(s: string): { textContent: string | null } | null; querySelectorAll(s: string): { length: number } };
declare const location: { hash: string };
declare const sessionStorage: { getItem(k: string): string | null };

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/ui/', import.meta.url));

function sampleEvents(n: number, now: number): KnownEvent[] {
  const methods = ['GET', 'GET', 'POST', 'DELETE'];
  const paths = ['/', '/login', '/api/items', '/health'];
  const statuses = ['200', '200', '404', '500'];
  return Array.from({ length: n }, (_, i) => {
    const ts = now - 60_000 - Math.floor(((i * 7919) % n) * (2 * 3600_000 / n));
    const m = methods[i % 4]!;
    const p = paths[(i >> 2) % 4]!;
    const s = statuses[(i * 3) % 4]!;
    return { timestamp: ts, rawstring: `10.0.0.${i % 20} "${m} ${p} HTTP/1.1" ${s} ${100 + i}`, attributes: { method: m, path: p, status: s }, tags: { host: `web-${i % 2}` } };
  });
}

t.test('the web UI, end to end', { timeout: 600_000 }, async (t) => {
  await mkdir(ARTIFACTS, { recursive: true });
  const node = await startNode(t);
  const repo = await createRepo(node.url, node.adminToken, 'web');
  await ingestStructured(node.url, repo.ingestToken, sampleEvents(400, Date.now()));
  const { page, errors } = await openBrowser(t);
  const shot = (name: string): Promise<Buffer> => page.screenshot({ path: `${ARTIFACTS}${name}.png` });

  // Sign in: a wrong token is refused, the right one kept in sessionStorage (never in the URL).
  await page.goto(`${node.url}/`);
  await page.fill('[data-testid=token]', 'not-a-token');
  await page.click('[data-testid=sign-in]');
  await page.waitForSelector('[data-testid=sign-in-error]');
  await shot('signin');
  await page.fill('[data-testid=token]', node.adminToken);
  await page.click('[data-testid=sign-in]');
  await page.waitForSelector('[data-testid=repo-picker]');
  t.equal(await page.evaluate(() => sessionStorage.getItem('logsvc.token')), node.adminToken, 'token in sessionStorage');
  t.notMatch(page.url(), node.adminToken, 'token not in the URL');

  // Pick the repository; run a search.
  await page.selectOption('[data-testid=repo-picker]', 'web');
  await page.click('[data-testid=query-editor] .cm-content');
  await page.keyboard.type('method=GET');
  await page.click('[data-testid=run]');
  await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent?.includes('200 matching') === true, undefined, { timeout: 60_000 });
  await page.waitForSelector('[data-testid=histogram] canvas');
  // The list comes from the other job: wait until it is done too.
  await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent?.startsWith('Done') === true && document.querySelectorAll('[data-testid=event]').length > 10, undefined, { timeout: 60_000 });
  t.ok((await page.locator('[data-testid=event]').count()) > 10, 'events listed');
  t.ok((await page.locator('[data-testid=event]').count()) < 120, 'the list is virtualised (only the visible rows are in the page)');
  t.match(decodeURIComponent(page.url()), /repo=web&q=method=GET/, 'the URL holds the repository and query');
  await shot('search');

  // Completion: function names after a pipe, field names of the result.
  await page.click('[data-testid=query-editor] .cm-content');
  await page.keyboard.press('End');
  await page.keyboard.type(' | grou');
  await page.waitForSelector('.cm-tooltip-autocomplete >> text=groupBy');
  await page.keyboard.press('Escape');
  await page.keyboard.type('pBy(sta');
  await page.waitForSelector('.cm-tooltip-autocomplete >> text=status');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('method=GET');
  await page.keyboard.press('Escape');
  t.equal(await page.locator('[data-testid=query-editor] .cm-content').textContent(), 'method=GET', 'completion offered; the query is as it was');

  // Expand an event; filter on a field value from the sidebar.
  await page.locator('[data-testid=event] .line').first().click();
  await page.waitForSelector('[data-testid=event] .detail >> text=method');
  await page.locator('[data-testid=field]', { hasText: 'status' }).click();
  await shot('search-expanded');
  await page.locator('[data-testid=top-value]', { hasText: '500' }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent?.includes('Done') === true && decodeURIComponent(location.hash).includes('status="500"'));
  // "N matching" once the histogram's job is done ("N+ matching" while it counts).
  await page.waitForFunction(() => /\d matching/.test(document.querySelector('[data-testid=status]')?.textContent ?? ''));
  const filtered = await page.locator('[data-testid=status]').textContent();
  t.match(filtered, / 100 matching/, `click-to-filter narrowed the search (${decodeURIComponent(page.url())})`);

  // Zoom: drag across the histogram; the range becomes absolute.
  const over = page.locator('[data-testid=histogram] .u-over');
  const box = (await over.boundingBox())!;
  // The events are in the last two hours of the 24 shown: drag across most of that stretch.
  await page.mouse.move(box.x + box.width * 0.93, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.985, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => /start=\d+&end=\d+/.test(location.hash));
  t.match(await page.locator('[data-testid=time-picker]').textContent(), /→/, 'the time picker shows the absolute range');
  await page.waitForFunction(() => /\d matching/.test(document.querySelector('[data-testid=status]')?.textContent ?? ''));
  const zoomed = Number(/([\d,]+) matching/.exec((await page.locator('[data-testid=status]').textContent()) ?? '')?.[1]?.replace(/,/g, ''));
  t.ok(zoomed > 0 && zoomed < 100, `the zoomed range holds part of the events (${zoomed} of 100)`);
  await shot('search-zoomed');

  // Query errors are marked in the editor.
  await page.goto(`${node.url}/#/search?repo=web&q=${encodeURIComponent('groupBy(path) | cuont()')}&start=24h`);
  await page.waitForSelector('[data-testid=query-error]');
  await page.waitForSelector('.cm-lintRange-error');
  t.match(await page.locator('[data-testid=query-error]').textContent(), /400/);

  // Live: an event ingested after the search started appears.
  await page.goto(`${node.url}/#/search?repo=web&q=livemarker&start=1h`);
  await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent?.includes('Done') === true);
  await page.check('[data-testid=live-toggle]');
  await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent?.startsWith('Live') === true, undefined, { timeout: 60_000 });
  await ingestStructured(node.url, repo.ingestToken, [{ timestamp: Date.now(), rawstring: 'livemarker arrived while following', attributes: {}, tags: { host: 'web-0' } }]);
  await page.waitForSelector('[data-testid=event] >> text=livemarker arrived while following', { timeout: 60_000 });
  t.pass('live mode shows the new event');
  await shot('search-live');
  await page.click('[data-testid=cancel]');

  // An aggregate as a chart and a table; a timechart as lines.
  await page.goto(`${node.url}/#/search?repo=web&q=${encodeURIComponent('groupBy(path)')}&start=24h`);
  await page.waitForSelector('[data-testid=chart] canvas', { timeout: 60_000 });
  await shot('aggregate-bar');
  await page.click('[data-testid=view-table]');
  t.equal(await page.locator('[data-testid=result-table] tbody tr').count(), 4, 'one row per path');
  await page.goto(`${node.url}/#/search?repo=web&q=${encodeURIComponent('timeChart(status)')}&start=4h`);
  await page.waitForSelector('[data-testid=chart] canvas', { timeout: 60_000 });
  t.match(await page.locator('[data-testid=view-chart]').textContent(), /Line chart/);
  await shot('aggregate-timechart');

  // A parser: its test case runs as the script is typed; then saved.
  await page.click('[data-testid=nav-parsers]');
  await page.click('[data-testid=new-parser]');
  await page.fill('[data-testid=parser-name]', 'kv-test');
  await page.fill('[data-testid=test-input]', 'user=alice action=login');
  await page.click('[data-testid=parser-script] .cm-content');
  await page.keyboard.type('kvParse()');
  await page.waitForSelector('[data-testid=test-output] >> text=alice');
  t.pass('test case output shown as you type');
  await page.click('[data-testid=save-parser]');
  await page.waitForSelector('[data-testid=parser-message] >> text=Saved parser');
  await shot('parsers');

  // An action and an alert.
  await page.click('[data-testid=nav-alerts]');
  await page.click('[data-testid=new-action]');
  await page.fill('[data-testid=action-name]', 'ops-hook');
  await page.fill('[data-testid=action-url]', 'http://127.0.0.1:9/hook');
  await page.click('[data-testid=save-action]');
  await page.waitForSelector('[data-testid=alert-message] >> text=Created action');
  await page.click('[data-testid=new-alert]');
  await page.fill('[data-testid=alert-name]', 'server errors');
  await page.fill('[data-testid=alert-query]', 'status=500 | count()');
  await page.check('[data-testid=alert-action]');
  await page.click('[data-testid=save-alert]');
  await page.waitForSelector('[data-testid=alert-list] >> text=server errors');
  t.pass('alert created and listed');
  await shot('alerts');

  // A lookup file: upload, listed.
  await page.click('[data-testid=nav-files]');
  await page.setInputFiles('[data-testid=file-input]', { name: 'hosts.csv', mimeType: 'text/csv', buffer: Buffer.from('host,owner\nweb-0,alice\nweb-1,bob\n') });
  await page.waitForSelector('[data-testid=file-list] >> text=hosts.csv');
  t.pass('file uploaded and listed');
  await shot('files');

  await page.click('[data-testid=nav-cluster]');
  await page.waitForSelector('[data-testid=nodes] >> text=node-1');
  await page.waitForSelector('[data-testid=partitions] .partition');
  await shot('cluster');

  t.same(errors, [], 'no page errors and nothing fetched from another origin');
});
