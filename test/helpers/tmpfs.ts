/**
 * A small real disk for tests that need one to fill: a tmpfs of a given size mounted on a fresh
 * temporary directory, unmounted (and removed) in the test's teardown. Needs Linux and root; where
 * the machine does not allow it, `mountTmpfs` answers why, for the test to skip with that reason.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Teardown } from './node-process.js';

export function mountTmpfs(t: Teardown, sizeMb: number, prefix = 'logsvc-tmpfs-'): string | { dir: string } {
  if (process.platform !== 'linux') return `needs Linux tmpfs (platform ${process.platform})`;
  if (process.getuid?.() !== 0) return 'needs root to mount a small tmpfs';
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return `mount -t tmpfs failed here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()})`;
  }
  t.teardown(() => {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir };
}
