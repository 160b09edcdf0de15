/**
 * The parser names an ingest token may name. Until custom parsers exist (issue: custom parsers),
 * these are the built-in parser names; the ingest pipeline owns their behaviour.
 */
export const BUILT_IN_PARSERS: readonly string[] = ['kv', 'json', 'accesslog', 'syslog', 'none'];

export function isKnownParser(name: string): boolean {
  return BUILT_IN_PARSERS.includes(name);
}
