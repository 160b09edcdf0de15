/**
 * The registry of built-in parsers, looked up by the name on an ingest token, an unstructured
 * group's `type` or a HEC sourcetype. Unknown names and "default" (what humioctl sends) get `kv`,
 * the product's fallback.
 */
import { AccessLogParser } from './accesslog.js';
import { JsonParser } from './json.js';
import { KvParser } from './kv.js';
import { NoneParser } from './none.js';
import type { BuiltInParser } from './parser.js';
import { SyslogParser } from './syslog.js';

export type { BuiltInParser, ParseResult } from './parser.js';
export { SyslogParser } from './syslog.js';

const kv = new KvParser();
const PARSERS: ReadonlyMap<string, BuiltInParser> = new Map(
  [kv, new JsonParser(), new AccessLogParser(), new SyslogParser(), new NoneParser()].map((p) => [p.name, p]),
);

export const BUILT_IN_PARSER_NAMES: readonly string[] = Object.freeze([...PARSERS.keys()]);

/** The parser for a name; unknown names and "default" give kv (the product's fallback). */
export function builtInParser(name: string | null | undefined): BuiltInParser {
  return (name == null ? undefined : PARSERS.get(name)) ?? kv;
}

export function isBuiltInParser(name: string): boolean {
  return PARSERS.has(name);
}
