/**
 * Bounded JSON parsing. `JSON.parse` has no depth limit and recurses natively, so a body of a million
 * `[` can exhaust the stack; we scan the text once for nesting depth (outside strings) before parsing.
 * The scan is a single pass over UTF-16 code units and costs far less than the parse itself.
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
