/**
 * Loading the effective configuration: defaults, then the TOML file, then command-line overrides.
 * Every problem is collected (unknown keys, wrong types, out-of-range values, cross-option rules) and
 * reported together, each naming its key path; the result is frozen.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseToml } from 'smol-toml';
import { LogsvcError } from '../lib/errors.js';
import { OPTIONS, crossChecks, type NodeConfig } from './schema.js';

export type Overrides = Partial<Record<string, unknown>>;

export class ConfigError extends LogsvcError {
  readonly problems: readonly string[];
  constructor(source: string, problems: string[]) {
    super('E_CONFIG_INVALID', `${source}: ${problems.length} problem(s): ${problems.join('; ')}`);
    this.problems = problems;
  }
}

const KNOWN = new Map(OPTIONS.map((o) => [o.path, o]));
const SECTIONS = new Set(OPTIONS.map((o) => o.path.split('.')[0]));

function flatten(obj: Record<string, unknown>, prefix: string, out: Map<string, unknown>, problems: string[]): void {
  for (const [key, value] of Object.entries(obj)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (prefix === '') {
      if (!SECTIONS.has(key)) {
        problems.push(`${path}: unknown section`);
        continue;
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        problems.push(`${path}: must be a [${key}] table`);
        continue;
      }
      flatten(value as Record<string, unknown>, path, out, problems);
      continue;
    }
    if (!KNOWN.has(path)) {
      problems.push(`${path}: unknown key`);
      continue;
    }
    out.set(path, value);
  }
}

function deepFreeze<T>(o: T): T {
  if (typeof o === 'object' && o !== null) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** Validates raw TOML data plus overrides; returns the config and the list of problems. */
export function buildConfig(raw: Record<string, unknown>, overrides: Overrides = {}): { config: NodeConfig; problems: string[] } {
  const problems: string[] = [];
  const given = new Map<string, unknown>();
  flatten(raw, '', given, problems);
  for (const [path, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!KNOWN.has(path)) problems.push(`${path}: unknown key`);
    else given.set(path, value);
  }
  const config: Record<string, Record<string, unknown>> = {};
  const failed = new Set<string>();
  for (const opt of OPTIONS) {
    const [section, key] = opt.path.split('.') as [string, string];
    let value = opt.default;
    if (given.has(opt.path)) {
      const checked = opt.check(given.get(opt.path));
      if (typeof checked === 'object' && checked !== null && 'error' in checked) {
        problems.push(`${opt.path}: ${checked.error}`);
        failed.add(opt.path);
      } else {
        value = checked;
      }
    }
    (config[section] ??= {})[key] = value;
  }
  const typed = config as unknown as NodeConfig;
  problems.push(...crossChecks(typed, failed));
  return { config: deepFreeze(typed), problems };
}

/** Reads and validates a config file (or none), applying overrides; throws ConfigError listing every problem. */
export async function loadConfig(file: string | undefined, overrides: Overrides = {}): Promise<NodeConfig> {
  let raw: Record<string, unknown> = {};
  const source = file ?? 'configuration';
  if (file !== undefined) {
    let textContent: string;
    try {
      textContent = await readFile(file, 'utf8');
    } catch (err) {
      throw new ConfigError(file, [`cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
    }
    try {
      raw = parseToml(textContent) as Record<string, unknown>;
    } catch (err) {
      const msg = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new ConfigError(file, [`not valid TOML: ${msg}`]);
    }
  }
  const { config, problems } = buildConfig(raw, overrides);
  if (problems.length > 0) throw new ConfigError(source, problems);
  return config;
}

export function effectiveExternalUrl(c: NodeConfig, actualPort: number): string {
  if (c.node.external_url !== '') return c.node.external_url.replace(/\/+$/, '');
  const host = c.node.host.includes(':') && !c.node.host.startsWith('[') ? `[${c.node.host}]` : c.node.host;
  return `http://${host}:${actualPort}`;
}
