/**
 * The built-in `none` parser: stores the line untouched, no fields and no timestamp (the caller
 * uses the ingest time). HEC events without a sourcetype get this one.
 */
import type { BuiltInParser, ParseResult } from './parser.js';

export class NoneParser implements BuiltInParser {
  readonly name = 'none';

  parse(_rawstring: string, _maxFields: number): ParseResult {
    return { timestamp: null, timezone: null, fields: {}, error: null };
  }
}
