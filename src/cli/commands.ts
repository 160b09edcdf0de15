/**
 * The yargs commands of `logsvc` (yargs' only importer), loaded by main.ts for every command line
 * that is not a plain `logsvc node`: help, version, `config check`, `segments inspect|verify`, and
 * `node` with anything yargs must explain.
 */
import yargs from 'yargs';
import { ConfigError, loadConfig } from '../config/index.js';
import { VERSION } from '../lib/version.js';
import { inspectSegment, verifyDataDir } from '../segments/inspect.js';
import { printConfigError, runNode } from './run-node.js';

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

export async function runCommands(args: string[]): Promise<void> {
  await yargs(args)
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
