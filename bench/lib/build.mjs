/**
 * Which build of the node a benchmark ran: `dist/build-info.json` (build number and commit) and when
 * it was written (every `npm run build` rewrites it, also on a working tree with uncommitted
 * changes, where build and commit stay the same). Read at the start and the end of a run: a
 * rebuild in between means the node's worker threads may have loaded newer code than its main
 * thread, and the run's numbers belong to no single build.
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BUILD_INFO = fileURLToPath(new URL('../../dist/build-info.json', import.meta.url));

/** @returns {Promise<{ build: number | null, sha: string | null, builtAt: string | null }>} */
export async function distBuild() {
  try {
    const [text, st] = await Promise.all([readFile(BUILD_INFO, 'utf8'), stat(BUILD_INFO)]);
    const info = JSON.parse(text);
    return { build: typeof info.build === 'number' ? info.build : null, sha: typeof info.sha === 'string' ? info.sha : null, builtAt: st.mtime.toISOString() };
  } catch {
    return { build: null, sha: null, builtAt: null };
  }
}

/** @param {{ build: number | null, sha: string | null, builtAt: string | null }} b */
export function describeBuild(b) {
  return b.builtAt === null ? 'dist/build-info.json missing (not built?)' : `dist build ${b.build} (commit ${b.sha}, plus any uncommitted changes), built ${b.builtAt}`;
}

/**
 * Why a checkout's dist/ does not hold its current code, or null when it does: dist/ missing, built
 * from another commit than HEAD, or older than a source file (src/, native/). A benchmark of a
 * stale dist measures some earlier build under the new one's name.
 * @param {string} root the checkout (the directory holding dist/, src/ and native/)
 * @returns {Promise<string | null>}
 */
export async function staleDist(root) {
  const dist = join(root, 'dist');
  let info;
  let builtMs;
  try {
    const file = join(root, 'dist', 'build-info.json');
    [info, builtMs] = await Promise.all([readFile(file, 'utf8').then((t) => JSON.parse(t)), stat(file).then((s) => s.mtimeMs)]);
  } catch {
    return `${dist} is not built (no dist/build-info.json): run npm run build`;
  }
  let head = '';
  try {
    head = execFileSync('git', ['rev-parse', '--short=10', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // Not a git checkout: only the source times can tell.
  }
  if (head !== '' && info.sha !== head) return `${dist} was built from commit ${info.sha}, the checkout is at ${head}: run npm run build`;
  for (const dir of ['src', 'native']) {
    const newer = await newerFile(join(root, dir), builtMs);
    if (newer !== null) return `${newer} is newer than ${dist} (built ${new Date(builtMs).toISOString()}): run npm run build`;
  }
  return null;
}

/** The first file under `dir` changed after `ms`, or null. @param {string} dir @param {number} ms @returns {Promise<string | null>} */
async function newerFile(dir, ms) {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const found = await newerFile(p, ms);
      if (found !== null) return found;
    } else if ((await stat(p)).mtimeMs > ms) return p;
  }
  return null;
}
