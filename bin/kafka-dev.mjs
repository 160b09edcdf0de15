#!/usr/bin/env node
// A real Apache Kafka for tests and development: fetches the broker's jars from Maven Central and
// runs a single-node KRaft broker (combined broker+controller) on loopback, stopped by its PID.
//
//   bin/kafka-dev fetch                                   jars into $LOGSVC_KAFKA_HOME (default
//                                                         ~/.cache/logsvc/kafka-4.1.1)/lib
//   bin/kafka-dev start --data-dir D --port P --controller-port C
//                                                         formats D (first time only), starts the
//                                                         broker detached, writes D/kafka.pid, waits
//                                                         until P accepts; prints one JSON line
//   bin/kafka-dev stop --data-dir D [--kill] [--timeout-ms N]
//                                                         TERM (or KILL), then KILL after the bound
//   bin/kafka-dev status --data-dir D                     prints the PID or "not running"
//
// Needs Java 17+ and Maven (`mvn`) on PATH. Every process it starts binds 127.0.0.1.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KAFKA_VERSION = '4.1.1';
const ARTIFACTS = [
  ['org.apache.kafka', 'kafka_2.13'],
  ['org.apache.kafka', 'kafka-tools'],
];

export function kafkaHome() {
  return process.env.LOGSVC_KAFKA_HOME || join(homedir(), '.cache', 'logsvc', `kafka-${KAFKA_VERSION}`);
}

const libDir = (home) => join(home, 'lib');
const completeMarker = (home) => join(home, 'lib', '.complete');

function pom() {
  const deps = ARTIFACTS.map(([g, a]) => `    <dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${KAFKA_VERSION}</version></dependency>`).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>logsvc</groupId>
  <artifactId>kafka-dev-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
${deps}
  </dependencies>
</project>
`;
}

/** Fetches the jars unless a complete copy is there already. Returns the lib dir. */
export function fetchJars({ quiet = false } = {}) {
  const home = kafkaHome();
  if (existsSync(completeMarker(home))) return libDir(home);
  mkdirSync(home, { recursive: true });
  const work = join(home, `fetch-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, 'pom.xml'), pom());
  const out = join(work, 'lib');
  const r = spawnSync('mvn', ['-B', '-q', '-f', join(work, 'pom.xml'), 'dependency:copy-dependencies', `-DoutputDirectory=${out}`, '-DincludeScope=runtime'], {
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
    timeout: 10 * 60 * 1000,
  });
  if (r.error || r.status !== 0) {
    const detail = quiet ? `\n${r.stdout ?? ''}${r.stderr ?? ''}` : '';
    rmSync(work, { recursive: true, force: true });
    throw new Error(`kafka-dev fetch: mvn dependency:copy-dependencies failed (${r.error ? r.error.message : `exit ${r.status}`})${detail}`);
  }
  const jars = readdirSync(out).filter((n) => n.endsWith('.jar'));
  if (!jars.some((n) => n.startsWith(`kafka_2.13-${KAFKA_VERSION}`)) || !jars.some((n) => n.startsWith(`kafka-tools-${KAFKA_VERSION}`))) {
    rmSync(work, { recursive: true, force: true });
    throw new Error(`kafka-dev fetch: the Kafka jars are missing from ${out}`);
  }
  writeFileSync(join(out, '.complete'), `${jars.length} jars\n`);
  rmSync(libDir(home), { recursive: true, force: true });
  renameSync(out, libDir(home));
  rmSync(work, { recursive: true, force: true });
  return libDir(home);
}

export function serverProperties({ dataDir, port, controllerPort }) {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    `log.dirs=${join(dataDir, 'logs')}`,
    'num.partitions=1',
    'default.replication.factor=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'min.insync.replicas=1',
    'auto.create.topics.enable=false',
    'delete.topic.enable=true',
    'group.initial.rebalance.delay.ms=0',
    '',
  ].join('\n');
}

/** Whether the process we signalled has exited: no such PID, or a zombie (Z) or dead (X) one. */
function exited(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    // Linux: the PID went between the two reads; elsewhere kill(0) said it is there.
    return existsSync('/proc');
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A PID can be reused: only a Kafka broker counts (Linux: /proc; elsewhere trust kill(0)).
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmd.includes('kafka.Kafka');
  } catch {
    return !existsSync('/proc');
  }
}

export function readPid(dataDir) {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, 'kafka.pid'), 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function portAccepts(port) {
  return new Promise((res) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      res(true);
    });
    s.once('error', () => res(false));
    s.setTimeout(1000, () => {
      s.destroy();
      res(false);
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function logTail(dataDir, lines = 30) {
  try {
    return readFileSync(join(dataDir, 'kafka.log'), 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no kafka.log)';
  }
}

/** Starts a broker; resolves with { pid, brokers, port, controllerPort, dataDir } once the port accepts. */
export async function start({ dataDir, port, controllerPort, heap = '512m', readyTimeoutMs = 120_000 }) {
  if (!dataDir || !Number.isInteger(port) || !Number.isInteger(controllerPort)) throw new Error('kafka-dev start: --data-dir, --port and --controller-port are required');
  dataDir = resolve(dataDir);
  mkdirSync(dataDir, { recursive: true });
  const old = readPid(dataDir);
  if (old !== null && alive(old)) throw new Error(`kafka-dev start: a broker already runs for ${dataDir} (PID ${old})`);
  const lib = fetchJars({ quiet: true });
  const cp = `${lib}/*`;
  const props = join(dataDir, 'server.properties');
  writeFileSync(props, serverProperties({ dataDir, port, controllerPort }));
  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  const jvm = [`-Xmx${heap}`, '-Xms64m', '-XX:+UseSerialGC', '-Djava.awt.headless=true', '-Dlog4j2.level=WARN'];
  if (!existsSync(join(dataDir, 'logs', 'meta.properties'))) {
    // Storage is formatted once; a restart on the same data dir keeps the topics.
    // A random Kafka Uuid (16 bytes, base64url); one starting with "-" would read as an option.
    let clusterId = randomBytes(16).toString('base64url');
    while (clusterId.startsWith('-')) clusterId = randomBytes(16).toString('base64url');
    const f = spawnSync(java, [...jvm, '-cp', cp, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', props], { encoding: 'utf8', timeout: 120_000 });
    if (f.error || f.status !== 0) throw new Error(`kafka-dev start: storage format failed (${f.error ? f.error.message : `exit ${f.status}`}): ${f.stdout}${f.stderr}`);
  }
  const log = openSync(join(dataDir, 'kafka.log'), 'a');
  const child = spawn(java, [...jvm, '-cp', cp, 'kafka.Kafka', props], { detached: true, stdio: ['ignore', log, log], cwd: dataDir });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error('kafka-dev start: java did not start');
  child.unref();
  writeFileSync(join(dataDir, 'kafka.pid'), `${pid}\n`);
  let exited = null;
  child.once('exit', (code, sig) => {
    exited = sig ?? code;
  });
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (exited !== null) {
      rmSync(join(dataDir, 'kafka.pid'), { force: true });
      throw new Error(`kafka-dev start: the broker exited (${exited}) before port ${port} accepted; log tail:\n${logTail(dataDir)}`);
    }
    if (await portAccepts(port)) return { pid, brokers: `127.0.0.1:${port}`, port, controllerPort, dataDir };
    await sleep(250);
  }
  await stop({ dataDir, kill: true });
  throw new Error(`kafka-dev start: port ${port} did not accept within ${readyTimeoutMs} ms; log tail:\n${logTail(dataDir)}`);
}

/** Stops the broker of `dataDir` by its PID: TERM (or KILL at once), then KILL after `timeoutMs`. */
export async function stop({ dataDir, kill = false, timeoutMs = 30_000 }) {
  dataDir = resolve(dataDir);
  const pid = readPid(dataDir);
  if (pid === null || !alive(pid)) {
    rmSync(join(dataDir, 'kafka.pid'), { force: true });
    return { pid, stopped: false };
  }
  process.kill(pid, kill ? 'SIGKILL' : 'SIGTERM');
  // Waits until the process has exited (gone or a zombie), not only until its memory is released:
  // a dying JVM has no command line for a while before it is a zombie.
  const deadline = Date.now() + timeoutMs;
  while (!exited(pid) && Date.now() < deadline) await sleep(100);
  if (!exited(pid)) {
    process.kill(pid, 'SIGKILL');
    while (!exited(pid)) await sleep(50);
  }
  rmSync(join(dataDir, 'kafka.pid'), { force: true });
  return { pid, stopped: true };
}

function parseArgs(argv) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const key = a.slice(2);
      if (key === 'kill') out.kill = true;
      else out[key] = argv[++i];
    } else out._.push(a);
  }
  return out;
}

const USAGE = 'usage: kafka-dev fetch | start --data-dir D --port P --controller-port C [--heap 512m] | stop --data-dir D [--kill] [--timeout-ms N] | status --data-dir D';

export async function main(argv) {
  const a = parseArgs(argv);
  const cmd = a._[0];
  const num = (k) => (a[k] === undefined ? undefined : Number(a[k]));
  if (cmd === 'fetch') {
    const lib = fetchJars();
    process.stdout.write(`${lib} (${readdirSync(lib).filter((n) => n.endsWith('.jar')).length} jars)\n`);
  } else if (cmd === 'start') {
    const r = await start({ dataDir: a['data-dir'], port: num('port'), controllerPort: num('controller-port'), ...(a.heap ? { heap: a.heap } : {}) });
    process.stdout.write(`${JSON.stringify(r)}\n`);
  } else if (cmd === 'stop') {
    if (!a['data-dir']) throw new Error('kafka-dev stop: --data-dir is required');
    const r = await stop({ dataDir: a['data-dir'], kill: a.kill === true, ...(a['timeout-ms'] ? { timeoutMs: num('timeout-ms') } : {}) });
    process.stdout.write(`${JSON.stringify(r)}\n`);
  } else if (cmd === 'status') {
    if (!a['data-dir']) throw new Error('kafka-dev status: --data-dir is required');
    const pid = readPid(resolve(a['data-dir']));
    process.stdout.write(pid !== null && alive(pid) ? `running, PID ${pid}\n` : 'not running\n');
  } else {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
  }
}

export function run(argv) {
  main(argv).catch((err) => {
    process.stderr.write(`${err && err.message ? err.message : err}\n`);
    process.exit(1);
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) run(process.argv.slice(2));
