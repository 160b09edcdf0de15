/**
 * A test process in miniature, for test/kafka/reaper.test.ts: starts a broker and a logsvc node
 * through the helpers, prints their PIDs and dirs as one JSON line, then waits to be killed. Its
 * teardown never runs (as when tap kills a test file at its timeout).
 */
import { startBroker } from './kafka-broker.js';
import { startNode, type Teardown } from './node-process.js';

const never: Teardown = { teardown: () => undefined };
const broker = await startBroker(never);
const node = await startNode(never);
process.stdout.write(`${JSON.stringify({ broker: broker.pid, brokerDir: broker.dataDir, node: node.proc.pid, nodeDir: node.dataDir })}\n`);
setInterval(() => undefined, 1 << 30);
