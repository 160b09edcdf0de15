/** Waiting for a node to have every acknowledged byte in segment files (GET /api/v1/metrics). */
import { getJson } from './http.mjs';

const DIGEST_POLL_MS = 500;
const progress = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);

/**
 * Waits until the node has written every acknowledged byte to segments (metrics: undigestedBytes
 * and pendingBlockBytes both 0).
 * @param {import('undici').Pool} control
 * @param {string} adminToken
 * @param {number} timeoutMs
 */
export async function waitDigested(control, adminToken, timeoutMs) {
  const t0 = performance.now();
  let last = { undigestedBytes: /** @type {number | null} */ (null), pendingBlockBytes: /** @type {number | null} */ (null), segments: /** @type {number | null} */ (null) };
  let lastPrint = 0;
  for (;;) {
    const r = await getJson(control, '/api/v1/metrics', adminToken);
    if (r.status !== 200) throw new Error(`GET /api/v1/metrics answered HTTP ${r.status}: ${r.text.slice(0, 300)}`);
    const m = /** @type {any} */ (r.json);
    last = { undigestedBytes: m?.undigestedBytes ?? null, pendingBlockBytes: m?.pendingBlockBytes ?? null, segments: m?.segments ?? null };
    const seconds = (performance.now() - t0) / 1000;
    if (last.undigestedBytes === 0 && last.pendingBlockBytes === 0) return { seconds, ...last, complete: true };
    if (typeof last.undigestedBytes !== 'number') throw new Error(`GET /api/v1/metrics has no undigestedBytes: ${r.text.slice(0, 300)}`);
    if (seconds * 1000 > timeoutMs) return { seconds, ...last, complete: false };
    if (seconds - lastPrint >= 5) {
      lastPrint = seconds;
      progress(`[digest] ${seconds.toFixed(0)} s: undigestedBytes ${last.undigestedBytes}, pendingBlockBytes ${last.pendingBlockBytes}`);
    }
    await new Promise((res) => setTimeout(res, DIGEST_POLL_MS));
  }
}

