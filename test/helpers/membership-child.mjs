// A cluster membership instance in its own process, for kill -9 tests. Runs the built module
// (dist/, as `logsvc node` does). Options come as JSON in argv[2]; it prints one JSON line per
// event on stdout: {"ready": addr} once listening, then {"up": id} / {"down": id, "reason": r}.
// It exits by itself after `lifetimeMs` so a lost test cannot leave it running.
import { Membership } from '../../dist/cluster/index.js';
import { systemClock } from '../../dist/lib/clock.js';
import { createLogger } from '../../dist/lib/logger.js';

const o = JSON.parse(process.argv[2]);
const m = new Membership({
  selfId: o.id,
  selfUuid: o.uuid,
  clusterId: 'child-cluster',
  uri: `http://127.0.0.1:${9000 + o.id}`,
  listen: { host: '127.0.0.1', port: o.port ?? 0 },
  peers: o.peers,
  heartbeatIntervalMs: o.heartbeatMs,
  failureTimeoutMs: o.failureMs,
  reconnectInitialMs: 50,
  reconnectMaxMs: 500,
  logger: createLogger('info'),
  clock: systemClock,
  payload: () => ({ pid: process.pid }),
});
// A stream that goes on until cancelled, one small chunk every 10 ms: for "killed mid-stream" tests.
m.handleStream('ticks', async function* ticks(_body, ctx) {
  for (let i = 0; !ctx.signal.aborted; i++) {
    yield { i, pid: process.pid };
    await new Promise((r) => setTimeout(r, 10));
  }
});
m.handle('pid', () => process.pid);
const out = (obj) => process.stdout.write(JSON.stringify({ ...obj, at: Date.now() }) + '\n');
m.on('up', (n) => out({ up: n.id }));
m.on('down', (n, reason) => out({ down: n.id, reason }));
const { advertise } = await m.start();
out({ ready: advertise });
setTimeout(() => process.exit(3), o.lifetimeMs).unref();
process.on('SIGTERM', () => void m.stop().then(() => process.exit(0)));
setInterval(() => {}, 1 << 30);
