/**
 * `logsvc node`: loads the config, tunes the heap, starts the node and stops it on SIGTERM/SIGINT.
 * The node's modules are imported only here, after the heap tuning and the native allocators'
 * settings, so that the young generation is not sized by the start-up's burst of module loading
 * (src/lib/heap-tuning.ts) and mimalloc starts with its settings (src/lib/native-allocators.ts).
 */
import { ConfigError, loadConfig, type Overrides } from '../config/index.js';
import { describeError, isLogsvcError } from '../lib/errors.js';
import { VERSION } from '../lib/version.js';
import { holdYoungGeneration, tuneHeap } from '../lib/heap-tuning.js';
import { settleNativeAllocators } from '../lib/native-allocators.js';
import { trimAfterStart } from '../lib/malloc-trim.js';

export interface NodeArgs {
  config?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  'data-dir'?: string | undefined;
}

function overridesFrom(a: NodeArgs): Overrides {
  return { 'node.host': a.host, 'node.port': a.port, 'node.data_dir': a['data-dir'] };
}

export function printConfigError(err: ConfigError, source: string): void {
  process.stderr.write(`logsvc: ${source} has ${err.problems.length} problem(s):\n`);
  for (const p of err.problems) process.stderr.write(`  ${p}\n`);
}

export async function runNode(a: NodeArgs): Promise<void> {
  // Before anything loads the native modules and the node's own modules.
  settleNativeAllocators();
  const releaseYoung = holdYoungGeneration();
  let config;
  try {
    config = await loadConfig(a.config, overridesFrom(a));
  } catch (err) {
    if (err instanceof ConfigError) {
      printConfigError(err, a.config ?? 'the command line');
      process.exit(2);
    }
    throw err;
  }
  tuneHeap();
  let node;
  const { startNode } = await import('../node/node.js');
  const { nativeBlockBuilder, nativeBlockUnavailable } = await import('../digest/native-block.js');
  const { nativeStructuredUnavailable } = await import('../ingest/native-structured.js');
  try {
    node = await startNode(config);
  } catch (err) {
    process.stderr.write(`logsvc: the node did not start: ${isLogsvcError(err) ? `${err.message} [${err.code}]` : describeError(err)}\n`);
    process.exit(1);
  }
  releaseYoung();
  if (nativeBlockBuilder === null) process.stderr.write(`logsvc: blocks are built in JavaScript, about three times slower than natively: ${nativeBlockUnavailable}\n`);
  if (nativeStructuredUnavailable !== null) process.stderr.write(`logsvc: structured ingest bodies are parsed in JavaScript, two to three times slower than natively: ${nativeStructuredUnavailable}\n`);
  process.stdout.write(`logsvc node ${config.node.id} ready at ${node.url} (data dir ${node.dataDir}, version ${VERSION})\n`);
  // Start-up's threads leave freed malloc pages behind (native/malloc_trim.cc): given back once it is over.
  trimAfterStart();
  let stopping = false;
  const stop = (signal: string): void => {
    // A second signal (a supervisor repeating SIGTERM, a second Ctrl-C) must not cut the drain short.
    if (stopping) {
      process.stderr.write(`logsvc: ${signal} received again; still stopping\n`);
      return;
    }
    stopping = true;
    process.stderr.write(`logsvc: ${signal} received, stopping\n`);
    // The stop is bounded (src/node/stop.ts, STOP_LIMIT_MS); exit 0 only when every step finished.
    node.stop().then(
      (report) => {
        if (report.clean) {
          process.stderr.write(`logsvc: stopped in ${report.ms} ms\n`);
          process.exit(0);
        }
        process.stderr.write(`logsvc: stopped in ${report.ms} ms, not cleanly: ${report.problems.join('; ')}\n`);
        process.exit(1);
      },
      (err: unknown) => {
        process.stderr.write(`logsvc: stop failed: ${describeError(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
