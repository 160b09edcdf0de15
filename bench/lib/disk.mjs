/**
 * How fast the disk under a directory makes a write durable right now: a probe file there, written
 * and fsync'ed `writes` times. logsvc acknowledges ingest only after an fsync and VictoriaLogs does
 * not, so a slow disk moves logsvc's ingest rate and not its CPU per event: the peer benchmark
 * reads this next to its ingest figures.
 */
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * @param {string} dir
 * @param {{ writes?: number, bytes?: number }} [o]
 * @returns {Promise<{ p50Ms: number, p90Ms: number, maxMs: number }>}
 */
export async function fsyncProbe(dir, o = {}) {
  const writes = o.writes ?? 20;
  const buf = Buffer.alloc(o.bytes ?? 256 * 1024, 0x61);
  const file = join(dir, `.fsync-probe-${process.pid}`);
  const fh = await open(file, 'w');
  /** @type {number[]} */
  const ms = [];
  try {
    for (let i = 0; i < writes; i++) {
      await fh.write(buf, 0, buf.length, i * buf.length);
      const t0 = performance.now();
      await fh.sync();
      ms.push(performance.now() - t0);
    }
  } finally {
    await fh.close();
    await unlink(file);
  }
  ms.sort((a, b) => a - b);
  const at = (/** @type {number} */ q) => /** @type {number} */ (ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]);
  return { p50Ms: at(0.5), p90Ms: at(0.9), maxMs: /** @type {number} */ (ms[ms.length - 1]) };
}
