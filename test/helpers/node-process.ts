/**
 * Starts real `logsvc node` processes for integration tests: a fresh data dir, port 0, the ready
 * line parsed for the URL, the local admin token read from the data dir. Every process is stopped in
 * the test's teardown, and killed by the test process's reaper (reaper.ts) should the test process
 * die without it; every wait is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reapDir, reapProcess, spareDir, spareProcess } from './reaper.js';

export const BIN = fileURLToPath(new URL('../../bin/logsvc', import.meta.url));
const READY = /ready at (http:\/\/\S+) /;

/** The subset of tap's Test that the helpers use. */
export interface Teardown {
  teardown(fn: () => unknown): void;
  /** tap's: false once an assertion of this test failed (the node's log is then kept). */
  passing?(): boolean;
  name?: string;
}

/**
 * Where the stderr of nodes whose test failed is written (one file per node), so a failure on a
 * CI machine can be explained afterwards; .ci/run prints their warnings and errors.
 */
export const FAILED_LOG_DIR = process.env.LOGSVC_TEST_LOG_DIR ?? join(tmpdir(), 'logsvc-test-logs');

async function keepLogIfFailed(t: Teardown, dataDir: string, pid: number | undefined, stderr: string): Promise<void> {
  if (typeof t.passing !== 'function' || t.passing()) return;
  const file = `${basename(process.argv[1] ?? 'test')}-${basename(dataDir)}-${pid}.log`.replace(/[^\w.-]+/g, '_');
  await mkdir(FAILED_LOG_DIR, { recursive: true });
  await writeFile(join(FAILED_LOG_DIR, file), `# test: ${t.name ?? '?'}\n# data dir: ${dataDir}\n${stderr}`);
}

export interface TestNode {
  url: string;
  dataDir: string;
  adminToken: string;
  proc: ChildProcess;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then wait for exit; returns the exit code (null: ended by a signal, see stopOutcome). */
  stop(): Promise<number | null>;
  /** SIGTERM, then wait for exit (SIGKILL after STOP_WAIT_MS): how the process ended. */
  stopOutcome(): Promise<StopOutcome>;
  /** SIGKILL, then wait for exit. */
  kill(): Promise<void>;
}

/**
 * How long a test waits for a SIGTERMed node before it kills it: the node's own documented bound on
 * its stop (STOP_LIMIT_MS, 20 s, src/node/stop.ts) plus room for a busy machine.
 */
export const STOP_WAIT_MS = 35_000;

export interface StopOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  /** The test gave up waiting and sent SIGKILL itself. */
  killedByTest: boolean;
  /** Says which of those happened, for assertion messages. */
  describe: string;
}

export interface StartOptions {
  dataDir?: string;
  /** TOML text written to a config file passed with --config. */
  config?: string;
  args?: string[];
  readyTimeoutMs?: number;
  /** Added to the child's environment. */
  env?: NodeJS.ProcessEnv;
  /**
   * Let the node ingest its own log lines into repository `humio` (self_logs.enabled, on by default
   * in the product). Off here unless asked, so that tests which list repositories or read every
   * stored event see only their own data; a config that has a [self_logs] section decides itself.
   */
  selfLogs?: boolean;
}

export async function tempDir(t: Teardown, prefix = 'logsvc-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  reapDir(dir);
  t.teardown(async () => {
    await rm(dir, { recursive: true, force: true });
    spareDir(dir);
  });
  return dir;
}

/** The environment for child nodes: without the test runner's loaders and coverage hooks. */
export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_OPTIONS' || k.startsWith('TAP') || k.startsWith('_TAPJS') || k === 'NODE_V8_COVERAGE') continue;
    env[k] = v;
  }
  return env;
}

function exited(proc: ChildProcess): Promise<number | null> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
}

/** Runs the CLI to completion (bounded), for commands that exit by themselves. */
export async function runCli(args: string[], timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const code = await exited(proc);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export async function startNode(t: Teardown, opts: StartOptions = {}): Promise<TestNode> {
  const dataDir = opts.dataDir ?? (await tempDir(t));
  const args = [BIN, 'node', '--port', '0', '--data-dir', dataDir, ...(opts.args ?? [])];
  const ownConfigFile = opts.args?.includes('--config') === true;
  const config = opts.selfLogs === true || ownConfigFile || /^\s*\[self_logs\]/m.test(opts.config ?? '') ? opts.config : `${opts.config ?? ''}\n[self_logs]\nenabled = false\n`;
  if (config !== undefined) {
    const file = join(dataDir, '..', `${dataDir.split('/').pop()}-config.toml`);
    await writeFile(file, config);
    reapDir(file);
    t.teardown(async () => {
      await rm(file, { force: true });
      spareDir(file);
    });
    args.push('--config', file);
  }
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...childEnv(), ...opts.env } });
  // Killed if this test process dies first (reaper.ts); forgotten there once it has exited.
  reapProcess(proc.pid);
  proc.once('exit', () => spareProcess(proc.pid));
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited(proc);
    }
    await keepLogIfFailed(t, dataDir, proc.pid, stderr).catch(() => undefined);
  });

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`node did not become ready within ${opts.readyTimeoutMs ?? 60_000} ms; stderr:\n${stderr}`));
    }, opts.readyTimeoutMs ?? 60_000);
    const onData = (): void => {
      const m = READY.exec(stdout);
      if (m !== null) {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with code ${code} before it was ready; stderr:\n${stderr}`));
    });
  });
  const adminToken = (await readFile(join(dataDir, 'local-admin-token.txt'), 'utf8')).trim();
  const stopOutcome = async (): Promise<StopOutcome> => {
    const t0 = Date.now();
    let killedByTest = false;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => {
      killedByTest = true;
      proc.kill('SIGKILL');
    }, STOP_WAIT_MS);
    const code = await exited(proc);
    clearTimeout(timer);
    const ms = Date.now() - t0;
    const signal = proc.signalCode;
    const tail = stderr.split('\n').filter((l) => /stop/i.test(l)).slice(-6).join(' | ');
    const describe = killedByTest
      ? `still running ${STOP_WAIT_MS} ms after SIGTERM; killed by the test (stderr: ${tail})`
      : signal !== null
        ? `died by signal ${signal} after ${ms} ms (stderr: ${tail})`
        : `exited with code ${code} after ${ms} ms (stderr: ${tail})`;
    return { code, signal, ms, killedByTest, describe };
  };
  return {
    url,
    dataDir,
    adminToken,
    proc,
    stderr: () => stderr,
    async stop() {
      return (await stopOutcome()).code;
    },
    stopOutcome,
    async kill() {
      proc.kill('SIGKILL');
      await exited(proc);
    },
  };
}
