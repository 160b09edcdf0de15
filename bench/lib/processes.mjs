/**
 * The processes and temp dirs a benchmark starts, and the guarantee that it ends them: every child
 * (a logsvc node, the parse-only server) and every temp dir is registered here, stopped or removed
 * when its phase ends, and again by `cleanupAll` (Ctrl-C, errors, the run's deadline) or
 * `cleanupSync` (process exit). Children bind 127.0.0.1 on port 0 and announce their URL on stdout.
 * Also: reading a child's RSS and CPU time from /proc, and the stored size of a data dir.
 */
import { spawn, execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The logsvc CLI shim of this checkout. */
export const LOGSVC_BIN = fileURLToPath(new URL('../../bin/logsvc', import.meta.url));
const PARSE_ONLY_SCRIPT = fileURLToPath(new URL('../ingest/parse-only-server.mjs', import.meta.url));
const STDERR_TAIL_CHARS = 16_384;

/** @type {Set<ChildServer>} */
const children = new Set();
/** @type {Set<string>} */
const tempDirs = new Set();

/** The environment for children: without loaders, coverage hooks or test-runner variables. */
function childEnv() {
  /** @type {NodeJS.ProcessEnv} */
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_OPTIONS' || k === 'NODE_V8_COVERAGE' || k.startsWith('TAP') || k.startsWith('_TAPJS')) continue;
    env[k] = v;
  }
  return env;
}

/** A child process that serves HTTP on a URL it printed. */
export class ChildServer {
  /**
   * @param {string} name for messages
   * @param {import('node:child_process').ChildProcess} proc
   */
  constructor(name, proc) {
    this.name = name;
    this.proc = proc;
    this.url = '';
    this.stderr = '';
    this.stdout = '';
    /** @type {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} */
    this.exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
    // Always drain both pipes: a child blocked on a full pipe would look like a slow server.
    proc.stdout?.on('data', (/** @type {Buffer} */ d) => (this.stdout = (this.stdout + d.toString()).slice(-STDERR_TAIL_CHARS)));
    proc.stderr?.on('data', (/** @type {Buffer} */ d) => (this.stderr = (this.stderr + d.toString()).slice(-STDERR_TAIL_CHARS)));
  }

  get pid() {
    return /** @type {number} */ (this.proc.pid);
  }

  get running() {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /**
   * SIGTERM, then SIGKILL if it has not exited within `timeoutMs`.
   * @param {number} timeoutMs
   * @returns {Promise<{ code: number | null, signal: NodeJS.Signals | null, killed: boolean, ms: number }>}
   */
  async stop(timeoutMs) {
    const t0 = performance.now();
    let killed = false;
    if (this.running) {
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => {
        killed = true;
        this.proc.kill('SIGKILL');
      }, timeoutMs);
      await this.exited;
      clearTimeout(timer);
    }
    children.delete(this);
    const { code, signal } = await this.exited;
    return { code, signal, killed, ms: performance.now() - t0 };
  }
}

/**
 * Spawns `node <args>` and waits (bounded) for the ready line.
 * @param {string} name
 * @param {string[]} args arguments after the node executable
 * @param {RegExp} ready matched against stdout; group 1 is the URL
 * @param {number} timeoutMs
 * @returns {Promise<ChildServer>}
 */
async function spawnServer(name, args, ready, timeoutMs) {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() });
  const child = new ChildServer(name, proc);
  children.add(child);
  child.url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${name} did not print its ready line within ${timeoutMs} ms; stderr:\n${child.stderr}`));
    }, timeoutMs);
    const onData = () => {
      const m = ready.exec(child.stdout);
      if (m === null) return;
      clearTimeout(timer);
      proc.stdout?.off('data', onData);
      resolve(/** @type {string} */ (m[1]));
    };
    proc.stdout?.on('data', onData);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready; stderr:\n${child.stderr}`));
    });
  });
  return child;
}

/** @returns {Promise<ChildServer>} */
export function startParseOnly() {
  return spawnServer('parse-only server', [PARSE_ONLY_SCRIPT, '--port', '0', '--host', '127.0.0.1'], /ready at (http:\/\/\S+) /, 15_000);
}

/**
 * Starts `logsvc node` on 127.0.0.1:0 with a fresh data dir under `rootDir` and the given TOML config.
 * @param {object} o
 * @param {string} o.rootDir a temp dir this run owns
 * @param {string} o.config TOML text
 * @param {string[]} o.nodeFlags flags for the node executable (e.g. --cpu-prof)
 * @param {string} [o.bin] the logsvc executable (default: this checkout's bin/logsvc)
 * @returns {Promise<{ server: ChildServer, dataDir: string, adminToken: string }>}
 */
export async function startLogsvcNode(o) {
  const dataDir = join(o.rootDir, 'data');
  const configFile = join(o.rootDir, 'bench.toml');
  await writeFile(configFile, o.config);
  const args = [...o.nodeFlags, o.bin ?? LOGSVC_BIN, 'node', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--config', configFile];
  const server = await spawnServer('logsvc node', args, /ready at (http:\/\/\S+) /, 60_000);
  const adminToken = (await readFile(join(dataDir, 'local-admin-token.txt'), 'utf8')).trim();
  return { server, dataDir, adminToken };
}

/** @param {string} prefix @returns {Promise<string>} */
export async function makeTempDir(prefix) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** @param {string} dir */
export async function removeTempDir(dir) {
  await rm(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/**
 * Takes a temp dir off the cleanup list: it outlives the run (the user asked to keep it).
 * @param {string} dir
 */
export function keepTempDir(dir) {
  tempDirs.delete(dir);
}

/** Stops every child still running (SIGTERM, SIGKILL after 5 s) and removes every temp dir. */
export async function cleanupAll() {
  await Promise.all([...children].map((c) => c.stop(5_000)));
  await Promise.all([...tempDirs].map((d) => removeTempDir(d)));
}

/** Last resort at process exit, where nothing can be awaited. */
export function cleanupSync() {
  for (const c of children) if (c.running) c.proc.kill('SIGKILL');
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
}

/**
 * Bytes and count of `*.seg` files under `<dataDir>/segments`, recursively.
 * @param {string} dataDir
 * @returns {Promise<{ files: number, bytes: number }>}
 */
export async function storedSegmentBytes(dataDir) {
  let files = 0;
  let bytes = 0;
  /** @param {string} dir */
  const walk = async (dir) => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && e.name.endsWith('.seg')) {
        files++;
        bytes += (await stat(p)).size;
      }
    }
  };
  await walk(join(dataDir, 'segments'));
  return { files, bytes };
}

/**
 * VmRSS of a process in bytes, from /proc (Linux); null where unavailable.
 * @param {number} pid
 */
export async function readVmRss(pid) {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return m === null ? null : Number(m[1]) * 1024;
  } catch {
    return null;
  }
}

let clockTicks = 0;
function clockTicksPerSecond() {
  if (clockTicks === 0) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * CPU seconds (user + system, all threads) a process has used, from /proc/<pid>/stat; null where
 * unavailable.
 * @param {number} pid
 */
export async function readCpuSeconds(pid) {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / clockTicksPerSecond();
  } catch {
    return null;
  }
}
