/**
 * TCP ports on 127.0.0.1 for servers a test configures by number (cluster ports, Kafka listeners,
 * ingest listeners), which must stay free from the moment they are chosen until the server binds,
 * and again while a killed server restarts on the same number.
 *
 * A port the kernel hands out for `listen(0)` lies in the ephemeral range, the same range outgoing
 * connections take their source ports from: under a full suite another test's client connection can
 * take it before the server binds (CI saw `EADDRINUSE` on a cluster port). So ports are chosen below
 * the ephemeral range, where only explicit binds land, and reserved across the suite's concurrent
 * test processes by an exclusively created file naming the reserving PID (a reservation whose process
 * is gone is taken over). A port is handed out only when a bind to it succeeds.
 */
import { createServer } from 'node:net';
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, writeSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../../src/storage/data-dir-lock.js';

const LOW = 20_000;
const HIGH = 32_000; // below Linux's default ephemeral range (32768-60999)
const DIR = join(tmpdir(), 'logsvc-test-ports');
const mine = new Set<number>();
let cleanupHooked = false;

/** Creates the reservation file for `port`, taking over one whose process is gone. */
function reserve(port: number): boolean {
  const file = join(DIR, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      mine.add(port);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let owner = NaN;
      try {
        owner = Number(readFileSync(file, 'utf8'));
      } catch {
        continue; // removed meanwhile: try again
      }
      if (!Number.isInteger(owner) || owner <= 0 || processAlive(owner)) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

function release(port: number): void {
  mine.delete(port);
  rmSync(join(DIR, String(port)), { force: true });
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A port below the ephemeral range, reserved for this test process until it exits, and free to
 * bind a moment ago.
 */
export async function freePort(): Promise<number> {
  mkdirSync(DIR, { recursive: true });
  if (!cleanupHooked) {
    cleanupHooked = true;
    process.once('exit', () => {
      for (const p of [...mine]) release(p);
    });
  }
  for (let i = 0; i < 500; i++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (mine.has(port) || !reserve(port)) continue;
    if (await bindable(port)) return port;
    release(port);
  }
  throw new Error(`no free port between ${LOW} and ${HIGH} after 500 tries (reservations in ${DIR}: ${readdirSync(DIR).length})`);
}
