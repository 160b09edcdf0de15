/**
 * Bounded JSON parsing. V8's `JSON.parse` is iterative and copes with any nesting, but code that
 * walks the result recursively does not, so nesting deeper than the limit is refused with a 400.
 * The depth is measured on the parsed value with an explicit stack: that visits containers only,
 * about 20x cheaper than scanning the text (0.16 ms against 3.4 ms for parsing a 1.1 MB ingest body,
 * bench/ingest accesslog dataset). `jsonDepth` scans text, for callers that must not parse at all.
 */
import { LogsvcError } from './errors.js';

/** Nesting depth of a parsed JSON value (scalars 0), or the first depth past `limit`. */
export function valueDepth(value: unknown, limit: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  const stack: unknown[] = [value, 1];
  let max = 0;
  while (stack.length > 0) {
    const depth = stack.pop() as number;
    const node = stack.pop() as object;
    if (depth > max) {
      max = depth;
      if (max > limit) return max;
    }
    if (Array.isArray(node)) {
      for (const x of node) if (typeof x === 'object' && x !== null) stack.push(x, depth + 1);
    } else {
      for (const k in node) {
        const x = (node as Record<string, unknown>)[k];
        if (typeof x === 'object' && x !== null) stack.push(x, depth + 1);
      }
    }
  }
  return max;
}

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

/** Parses `text` as JSON, refusing malformed input and nesting deeper than `maxDepth` with a 400. */
export function parseJsonBounded(text: string, maxDepth: number, what = 'request body'): unknown {
  const value = parseJson(text, what);
  if (valueDepth(value, maxDepth) > maxDepth) throw new LogsvcError('E_JSON_TOO_DEEP', `${what}: JSON nesting deeper than ${maxDepth} levels`);
  return value;
}
