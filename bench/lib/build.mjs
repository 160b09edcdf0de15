/**
 * Which build of the node a benchmark ran: `dist/build-info.json` (build number and commit) and when
 * it was written (every `npm run build` rewrites it, also on a working tree with uncommitted
 * changes, where build and commit stay the same). Read at the start and the end of a run: a
 * rebuild in between means the node's worker threads may have loaded newer code than its main
 * thread, and the run's numbers belong to no single build.
 */
import { readFile, stat } from 'node:fs/promises';
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
