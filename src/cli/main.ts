/**
 * The `logsvc` command line (yargs' only importer): `logsvc node` runs a node, `logsvc config check`
 * validates a config file and prints every problem at once.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ConfigError, loadConfig, type Overrides } from '../config/index.js';
import { describeError, isLogsvcError } from '../lib/errors.js';
import { startNode } from '../node/node.js';
import { VERSION } from '../lib/version.js';
import { tuneHeap } from '../lib/heap-tuning.js';
import { nativeBlockBuilder, nativeBlockUnavailable } from '../digest/native-block.js';
import { nativeStructuredUnavailable } from '../ingest/native-structured.js';
import { inspectSegment, verifyDataDir } from '../segments/inspect.js';

interface NodeArgs {
  config?: string | undefined;
  host?: string | undefined;
  port?: number | undefined;
  'data-dir'?: string | undefined;
}

function overridesFrom(a: NodeArgs): Overrides {
  return { 'node.host': a.host, 'node.port': a.port, 'node.data_dir': a['data-dir'] };
}

function printConfigError(err: ConfigError, source: string): void {
  process.stderr.write(`logsvc: ${source} has ${err.problems.length} problem(s):\n`);
  for (const p of err.problems) process.stderr.write(`  ${p}\n`);
}

async function runNode(a: NodeArgs): Promise<void> {
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
  try {
    node = await startNode(config);
  } catch (err) {
    process.stderr.write(`logsvc: the node did not start: ${isLogsvcError(err) ? `${err.message} [${err.code}]` : describeError(err)}\n`);
    process.exit(1);
  }
  if (nativeBlockBuilder === null) process.stderr.write(`logsvc: blocks are built in JavaScript, about three times slower than natively: ${nativeBlockUnavailable}\n`);
  if (nativeStructuredUnavailable !== null) process.stderr.write(`logsvc: structured ingest bodies are parsed in JavaScript, two to three times slower than natively: ${nativeStructuredUnavailable}\n`);
  process.stdout.write(`logsvc node ${config.node.id} ready at ${node.url} (data dir ${node.dataDir}, version ${VERSION})\n`);
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

async function checkConfig(file: string): Promise<void> {
  try {
    await loadConfig(file);
  } catch (err) {
    if (err instanceof ConfigError) {
      printConfigError(err, file);
      process.exit(1);
    }
    throw err;
  }
  process.stdout.write(`${file}: OK\n`);
}

async function inspect(file: string, events: boolean): Promise<void> {
  for (const line of await inspectSegment(file, { events })) process.stdout.write(`${line}\n`);
}

async function verify(dataDir: string): Promise<void> {
  const r = await verifyDataDir(dataDir);
  for (const p of r.problems) process.stdout.write(`PROBLEM ${p}\n`);
  process.stdout.write(`${r.segments} segments, ${r.blocks} blocks, ${r.queueFiles} queue files, ${r.queueRecords} queue records checked; ${r.problems.length} problem(s)\n`);
  if (r.problems.length > 0) process.exitCode = 1;
}

export async function main(argv: string[]): Promise<void> {
  await yargs(hideBin(argv))
    .scriptName('logsvc')
    .command(
      'node',
      'run a logsvc node',
      (y) =>
        y
          .option('config', { type: 'string', describe: 'TOML config file (see cluster.example.toml)' })
          .option('host', { type: 'string', describe: 'bind address (overrides node.host)' })
          .option('port', { type: 'number', describe: 'HTTP port, 0 for any free port (overrides node.port)' })
          .option('data-dir', { type: 'string', describe: 'data directory (overrides node.data_dir)' }),
      (a) => runNode(a),
    )
    .command('config', 'configuration tools', (y) =>
      y
        .command(
          'check',
          'validate a config file, printing every problem',
          (c) => c.option('config', { type: 'string', demandOption: true, describe: 'TOML config file' }),
          (a) => checkConfig(a.config),
        )
        .demandCommand(1, 'name a config subcommand: check'),
    )
    .command('segments', 'segment file tools', (y) =>
      y
        .command(
          'inspect <file>',
          "print a segment's header, blocks and events (events as JSON lines)",
          (c) => c.positional('file', { type: 'string', demandOption: true }).option('events', { type: 'boolean', default: true, describe: 'print events' }),
          (a) => inspect(a.file, a.events),
        )
        .command(
          'verify <data-dir>',
          'check every checksum of every segment and digest-queue file (read-only)',
          (c) => c.positional('data-dir', { type: 'string', demandOption: true }),
          (a) => verify(a['data-dir']),
        )
        .demandCommand(1, 'name a segments subcommand: inspect, verify'),
    )
    .demandCommand(1, 'name a command: node, config, segments')
    .strict()
    .version(VERSION)
    .help()
    .parseAsync();
}
