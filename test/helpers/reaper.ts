/**
 * What a test process starts ends with it, however the test process ends (tap kills a test file at
 * its timeout without running its teardown): the helpers that start brokers and nodes register them
 * here, with one detached reaper process per test process (reaper.mjs) that ends them once the pipe
 * from this process closes. Teardown still stops them as before and unregisters them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REAPER = fileURLToPath(new URL('./reaper.mjs', import.meta.url));

let reaper: ChildProcess | null = null;

function send(op: string, arg: string | number | undefined): void {
  if (arg === undefined) return;
  if (reaper === null) {
    // Its own session (detached): a signal to this test's process group does not reach it. No test
    // loaders or coverage hooks in its environment: it is plain JavaScript.
    reaper = spawn(process.execPath, [REAPER], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: { PATH: process.env.PATH ?? '' } });
    reaper.unref();
    // Neither the reaper nor its pipe keeps this process alive; the pipe closing is the reaper's signal.
    (reaper.stdin as unknown as { unref(): void }).unref();
    reaper.stdin!.on('error', () => undefined);
  }
  reaper.stdin!.write(`${op}\t${arg}\n`);
}

/** A process to SIGKILL if this test process dies first. */
export const reapProcess = (pid: number | undefined): void => send('+proc', pid);
export const spareProcess = (pid: number | undefined): void => send('-proc', pid);
/** A launcher (kafka-dev start) the reaper lets finish before it stops the brokers. */
export const awaitLauncher = (pid: number | undefined): void => send('+wait', pid);
/** A bin/kafka-dev broker, stopped by the PID file in its data dir. */
export const reapBroker = (dataDir: string): void => send('+broker', dataDir);
export const spareBroker = (dataDir: string): void => send('-broker', dataDir);
/** A directory (or file) removed once the processes are gone. */
export const reapDir = (dir: string): void => send('+dir', dir);
export const spareDir = (dir: string): void => send('-dir', dir);
