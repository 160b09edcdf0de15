/**
 * A real browser for UI tests: playwright-core's one home, driving Debian's chromium
 * (/usr/bin/chromium, installed by .ci/run) headless with a fresh profile that is removed after.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Teardown } from './node-process.js';

export const CHROMIUM = process.env.LOGSVC_CHROMIUM ?? '/usr/bin/chromium';

export async function openBrowser(t: Teardown, viewport = { width: 1400, height: 860 }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  if (!existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium), as .ci/run does`);
  const profile = await mkdtemp(join(tmpdir(), 'logsvc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    timeout: 60_000,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  t.teardown(async () => {
    await context.close().catch(() => {});
    await rm(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // Refusals the test provokes (a wrong token, a bad query) are logged by the browser as failed loads.
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  // Nothing may be fetched from anywhere but the node.
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1' || url.protocol === 'data:') return route.continue();
    errors.push(`request to another origin: ${url.href}`);
    return route.abort();
  });
  return { context, page, errors };
}
