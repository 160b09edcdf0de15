/**
 * Bounded JSON parsing. V8's `JSON.parse` copes with any nesting, but code that walks the result
 * recursively does not: `parseJsonBounded` scans the text once for nesting depth (outside strings)
 * before parsing. The scan costs about as much as the parse, so the ingest hot path uses `parseJson`
 * and bounds depth where it walks values (ingest/flatten.ts) instead.
 */
import { LogsvcError } from './errors.js';

export function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}

/** Parses `text` as JSON, refusing malformed input with a 400; nesting is not checked here. */
export function parseJson(text: string, what = 'request body'): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new LogsvcError('E_JSON_MALFORMED', `${what}: malformed JSON (${detail.split('\n')[0]})`);
  }
}

/** Parses `text` as JSON, refusing nesting deeper than `maxDepth` and malformed input with a 400. */
export function parseJsonBounded(text: string, maxDepth: number, what = 'request body'): unknown {
  if (jsonDepth(text, maxDepth) > maxDepth) {
    throw new LogsvcError('E_JSON_TOO_DEEP', `${what}: JSON nesting deeper than ${maxDepth} levels`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new LogsvcError('E_JSON_MALFORMED', `${what}: malformed JSON (${detail.split('\n')[0]})`);
  }
}
