/**
 * The `logsvc` command line: `logsvc node` runs a node, `logsvc config check` validates a config
 * file and prints every problem at once, `logsvc segments` inspects and verifies segment files.
 *
 * A plain `logsvc node [--config F] [--host H] [--port N] [--data-dir D]` (how every supervisor, test
 * and benchmark starts a node) is read with Node's own `util.parseArgs` and runs the node without
 * loading the rest of the command line: yargs and its text layout (string-width, cliui, ICU's
 * grapheme segmenter) would otherwise stay in a node's memory for its whole life for nothing. Every
 * other command line (help, version, other commands, unknown or malformed flags) goes to the yargs
 * commands (commands.ts), which print what they always printed.
 */
import { parseArgs } from 'node:util';
import { runNode, type NodeArgs } from './run-node.js';

/**
 * The flags of a plain `node` command, or null when the command line is anything else (then yargs
 * reads it, with its help and its messages). Integers only for --port (yargs' NaN for "abc" becomes
 * its config problem, via yargs).
 */
export function plainNodeArgs(args: readonly string[]): NodeArgs | null {
  if (args[0] !== 'node') return null;
  let parsed;
  try {
    parsed = parseArgs({
      args: args.slice(1),
      strict: true,
      allowPositionals: false,
      options: { config: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, 'data-dir': { type: 'string' } },
    });
  } catch {
    return null;
  }
  const v = parsed.values;
  let port: number | undefined;
  if (v.port !== undefined) {
    if (!/^-?\d+$/.test(v.port)) return null;
    port = Number(v.port);
  }
  return { config: v.config, host: v.host, port, 'data-dir': v['data-dir'] };
}

export async function main(argv: string[]): Promise<void> {
  const args = argv.slice(2);
  const plain = plainNodeArgs(args);
  if (plain !== null) return runNode(plain);
  const { runCommands } = await import('./commands.js');
  return runCommands(args);
}
