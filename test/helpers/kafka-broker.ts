/**
 * A real single-node KRaft Kafka broker for tests, run by bin/kafka-dev (jars fetched on first use
 * into $LOGSVC_KAFKA_HOME or ~/.cache/logsvc/kafka-4.1.1). The broker gets free loopback ports and a
 * temp data dir; it is stopped by its PID in the test's teardown. `restart()` keeps the data dir and
 * the ports, so clients configured with `brokers` reconnect to the same address. A broker (and its
 * dir) outlives no test process: if the test dies before its teardown, reaper.ts stops it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from './free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, type Teardown } from './node-process.js';
import { awaitLauncher, reapBroker, reapDir, spareBroker, spareDir } from './reaper.js';

const KAFKA_DEV = fileURLToPath(new URL('../../bin/kafka-dev.mjs', import.meta.url));

export interface TestBroker {
  /** Bootstrap list for clients: "127.0.0.1:port". */
  brokers: string;
  /** The broker's JVM PID (changes on restart). */
  pid: number;
  dataDir: string;
  /** SIGTERM by PID (KILL after a bound); waits for exit. */
  stop(): Promise<void>;
  /** SIGKILL by PID; waits for exit. */
  kill(): Promise<void>;
  /** Starts it again on the same data dir and ports (stop or kill it first). */
  restart(): Promise<void>;
}

function kafkaDev(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [KAFKA_DEV, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
    // A start the test dies during runs on and writes the broker's PID file; the reaper waits for it.
    awaitLauncher(proc.pid);
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // kafka-dev bounds its own waits; this only guards against a hung script (its broker, if any,
    // is stopped by PID from the data dir in teardown).
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`kafka-dev ${args[0]} failed (exit ${code}): ${err.trim() || out.trim()}`));
    });
  });
}

/** Fetches the jars if missing (about 55 MB from Maven Central the first time). */
export async function fetchKafka(): Promise<void> {
  await kafkaDev(['fetch'], 10 * 60_000);
}

export async function startBroker(t: Teardown): Promise<TestBroker> {
  // Our own temp dir (not tempDir's teardown): the broker must be stopped, by the PID file in it,
  // before the dir goes.
  const dataDir = await mkdtemp(join(tmpdir(), 'logsvc-kafka-'));
  // Should this test process die without its teardown, the broker and its dir go with it (reaper.ts).
  reapBroker(dataDir);
  reapDir(dataDir);
  const port = await freePort();
  let controllerPort = await freePort();
  while (controllerPort === port) controllerPort = await freePort();
  const launch = async (): Promise<number> => {
    const out = await kafkaDev(['start', '--data-dir', dataDir, '--port', String(port), '--controller-port', String(controllerPort)], 15 * 60_000);
    return (JSON.parse(out.trim().split('\n').at(-1)!) as { pid: number }).pid;
  };
  const stopIt = async (kill: boolean): Promise<void> => {
    await kafkaDev(['stop', '--data-dir', dataDir, ...(kill ? ['--kill'] : []), '--timeout-ms', '30000'], 60_000);
  };
  const broker: TestBroker = {
    brokers: `127.0.0.1:${port}`,
    pid: await launch(),
    dataDir,
    stop: () => stopIt(false),
    kill: () => stopIt(true),
    restart: async () => {
      broker.pid = await launch();
    },
  };
  t.teardown(async () => {
    await stopIt(false).catch(() => stopByPid(broker.pid));
    await rm(dataDir, { recursive: true, force: true });
    spareBroker(dataDir);
    spareDir(dataDir);
  });
  return broker;
}

function stopByPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Whether `pid` is a live process (a zombie waiting to be reaped counts as gone). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
