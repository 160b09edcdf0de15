/**
 * What every bench command does before its work: --help, option problems (exit 2), and the
 * clean-up hooks — on exit, Ctrl-C, SIGTERM or a blown time budget, every process the run started
 * is stopped and every temp dir removed.
 */
import { cleanupAll, cleanupSync } from './processes.mjs';

const progress = (/** @type {string} */ s) => process.stderr.write(`${s}\n`);

/**
 * @template T
 * @param {{ help: true } | { help: false, problems: string[] } | { help: false, options: T }} parsed
 * @param {string} help
 * @returns {{ options: T, abort: (why: string, code: number) => Promise<void> }}
 */
export function startRun(parsed, help) {
  if (parsed.help) {
    process.stdout.write(help);
    process.exit(0);
  }
  if ('problems' in parsed) {
    process.stderr.write(`run.mjs: ${parsed.problems.length} problem(s) with the options:\n${parsed.problems.map((p) => `  ${p}`).join('\n')}\n\n${help}`);
    process.exit(2);
  }
  process.on('exit', cleanupSync);
  let stopping = false;
  /** @param {string} why @param {number} code */
  const abort = async (why, code) => {
    if (stopping) return;
    stopping = true;
    progress(`\n${why}; stopping every process this run started and removing its temp dirs`);
    await cleanupAll();
    process.exit(code);
  };
  process.on('SIGINT', () => void abort('interrupted', 130));
  process.on('SIGTERM', () => void abort('terminated', 143));
  return { options: /** @type {{ options: T }} */ (parsed).options, abort };
}

/**
 * A numeric option checker that collects problems instead of throwing.
 * @param {string[]} problems
 */
export function numberOption(problems) {
  /** @param {string} name @param {string} text @param {number} min @param {number} max @param {boolean} integer */
  return (name, text, min, max, integer) => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
      problems.push(`--${name}: must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got "${text}"`);
      return min;
    }
    return n;
  };
}

/**
 * Runs `main` under a time budget; on success stops what the run started, on failure or an
 * exhausted budget aborts (exit 1).
 * @param {(why: string, code: number) => Promise<void>} abort
 * @param {number} budgetMs
 * @param {string} budgetText how the budget is named in the message
 * @param {() => Promise<void>} main
 */
export async function runWithin(abort, budgetMs, budgetText, main) {
  const deadline = setTimeout(() => void abort(`the run exceeded its time budget of ${budgetText}`, 1), budgetMs);
  try {
    await main();
    clearTimeout(deadline);
    await cleanupAll();
  } catch (err) {
    clearTimeout(deadline);
    progress(`run.mjs: ${/** @type {Error} */ (err).stack ?? String(err)}`);
    await abort('failed', 1);
  }
}
