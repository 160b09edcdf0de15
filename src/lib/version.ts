/**
 * The node's version string, `<semver>--build-<n>--sha-<hex>`, the form clients parse (humioctl and
 * the operator need semver before the first "-"). The semver comes from package.json; build number and
 * commit come from `dist/build-info.json`, written by `npm run build` (bin/build-info.mjs).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

function readJson(rel: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(fileURLToPath(new URL(rel, import.meta.url)), 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function compute(): string {
  // Compiled layout: dist/lib/version.js -> ../../package.json and ../build-info.json.
  const pkg = readJson('../../package.json');
  const info = readJson('../build-info.json');
  const semver = typeof pkg?.version === 'string' ? pkg.version : '0.0.0';
  const build = typeof info?.build === 'number' ? info.build : 0;
  const sha = typeof info?.sha === 'string' && /^[0-9a-f]+$/.test(info.sha) ? info.sha : '0';
  return `${semver}--build-${build}--sha-${sha}`;
}

export const VERSION = compute();
