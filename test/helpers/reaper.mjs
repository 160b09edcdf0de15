// The reaper of one test process: ends what that process started once it is gone, however it ended
// (tap kills a test file at its timeout with no teardown run; a crash; kill -9). Started detached
// by test/helpers/reaper.ts, so signals to the test's process group do not reach it, with its stdin
// a pipe from the test process: the pipe's end (every writer gone, which the kernel sees to) is the
// signal. Lines on stdin, tab-separated:
//
//   +proc <pid>              a process to kill (SIGKILL)
//   -proc <pid>              no longer (stopped by the test)
//   +wait <pid>              a launcher to let finish first (kafka-dev start writes the PID file)
//   +broker <data dir>       a Kafka broker run by bin/kafka-dev, stopped by the PID file in its dir
//   -broker <data dir>
//   +dir <path>              a directory (or file) to remove once the rest is stopped
//   -dir <path>
//
// A PID is acted on only while its start time (read from /proc when it is registered, right after
// the spawn) is unchanged: PIDs are reused.
import { readFileSync, rmSync } from 'node:fs';
import { stop as stopBroker } from '../../bin/kafka-dev.mjs';

/** Longest wait for a launcher (kafka-dev start bounds its own wait for the port at 120 s). */
const LAUNCHER_WAIT_MS = 180_000;

const procs = new Map();
const launchers = new Map();
const brokers = new Set();
const dirs = new Set();

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces), or null if gone or a zombie. */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? null : fields[19];
  } catch {
    return null;
  }
}

function handle(line) {
  const [op, a] = line.split('\t');
  const since = op === '+proc' || op === '+wait' ? startTime(Number(a)) : null;
  if (op === '+proc' && since !== null) procs.set(Number(a), since);
  else if (op === '-proc') procs.delete(Number(a));
  else if (op === '+wait' && since !== null) launchers.set(Number(a), since);
  else if (op === '+broker') brokers.add(a);
  else if (op === '-broker') brokers.delete(a);
  else if (op === '+dir') dirs.add(a);
  else if (op === '-dir') dirs.delete(a);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let reaping = false;
async function reap() {
  if (reaping) return;
  reaping = true;
  for (const [pid, start] of procs) {
    if (startTime(pid) !== start) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  const deadline = Date.now() + LAUNCHER_WAIT_MS;
  while ([...launchers].some(([pid, start]) => startTime(pid) === start) && Date.now() < deadline) await sleep(200);
  for (const dataDir of brokers) await stopBroker({ dataDir, kill: true }).catch(() => undefined);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
    handle(buf.slice(0, i));
    buf = buf.slice(i + 1);
  }
});
process.stdin.on('end', () => void reap());
process.stdin.on('error', () => void reap());
