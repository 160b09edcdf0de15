import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
// @ts-expect-error the benchmarks are plain JavaScript modules without declarations
import { staleDist } from '../../../bench/lib/build.mjs';

const stale = staleDist as (root: string) => Promise<string | null>;

/** A checkout with src/ and native/ files, built (dist/build-info.json) at `builtAt` seconds. */
function checkout(t: Test, sha: string, builtAt: number): string {
  const root = mkdtempSync(join(tmpdir(), 'stale-dist-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'src', 'query'), { recursive: true });
  mkdirSync(join(root, 'native'));
  mkdirSync(join(root, 'dist'));
  for (const f of ['src/query/scan.ts', 'native/text_search.cc']) {
    writeFileSync(join(root, f), '// code\n');
    utimesSync(join(root, f), builtAt - 100, builtAt - 100);
  }
  writeFileSync(join(root, 'dist', 'build-info.json'), JSON.stringify({ build: 1, sha }));
  utimesSync(join(root, 'dist', 'build-info.json'), builtAt, builtAt);
  return root;
}

t.test('a dist built after every source file is current', async (t) => {
  const root = checkout(t, 'abc', 1_800_000_000);
  t.equal(await stale(root), null);
});

t.test('a source file changed after the build makes it stale, by name', async (t) => {
  const root = checkout(t, 'abc', 1_800_000_000);
  utimesSync(join(root, 'src', 'query', 'scan.ts'), 1_800_000_010, 1_800_000_010);
  t.match(await stale(root), /src\/query\/scan\.ts is newer than .*dist/);
  const other = checkout(t, 'abc', 1_800_000_000);
  utimesSync(join(other, 'native', 'text_search.cc'), 1_800_000_010, 1_800_000_010);
  t.match(await stale(other), /native\/text_search\.cc is newer/);
});

t.test('no dist is stale', async (t) => {
  const root = checkout(t, 'abc', 1_800_000_000);
  rmSync(join(root, 'dist'), { recursive: true });
  t.match(await stale(root), /is not built/);
});

t.test('a dist built from another commit than HEAD is stale', async (t) => {
  const root = checkout(t, 'not-the-head', 1_800_000_000);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  git('init', '-q');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'x');
  t.match(await stale(root), /was built from commit not-the-head, the checkout is at [0-9a-f]{10}/);
  const head = git('rev-parse', '--short=10', 'HEAD');
  writeFileSync(join(root, 'dist', 'build-info.json'), JSON.stringify({ build: 1, sha: head }));
  utimesSync(join(root, 'dist', 'build-info.json'), 1_800_000_000, 1_800_000_000);
  t.equal(await stale(root), null, 'built from HEAD');
});
