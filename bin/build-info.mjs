#!/usr/bin/env node
// Writes dist/build-info.json (build number = commit count, sha = short commit) for the version string.
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const git = (...args) => {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
};
const build = Number.parseInt(git('rev-list', '--count', 'HEAD'), 10);
const sha = git('rev-parse', '--short=10', 'HEAD');
mkdirSync(new URL('../dist/', import.meta.url), { recursive: true });
writeFileSync(new URL('../dist/build-info.json', import.meta.url), JSON.stringify({ build: Number.isFinite(build) ? build : 0, sha: sha || '0' }) + '\n');
