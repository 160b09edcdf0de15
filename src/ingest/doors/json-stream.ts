/**
 * Bodies of concatenated JSON values (HEC: objects back to back, with or without whitespace
 * between them). One scan finds where each top-level object ends (strings skipped with indexOf,
 * brackets counted, nesting bounded as it goes), then all of them are parsed with one JSON.parse
 * of `[a,b,...]`; only when that fails is each parsed alone, to name the first bad one.
 */
import { LogsvcError } from '../../lib/errors.js';

export class StreamItemError extends Error {
  constructor(
    /** 0-based index of the bad item. */
    readonly index: number,
    message: string,
  ) {
    super(message);
  }
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Start and end offsets of each top-level object in `text`; throws StreamItemError for the first bad one. */
export function objectRanges(text: string, maxDepth: number, maxItems: number): number[] {
  const bounds: number[] = [];
  const n = text.length;
  let i = 0;
  for (;;) {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (i >= n) return bounds;
    const item = bounds.length / 2;
    if (item >= maxItems) throw new LogsvcError('E_VALIDATION', `request carries more than ${maxItems} events (ingest.max_events_per_request); split it`);
    if (text.charCodeAt(i) !== 0x7b) throw new StreamItemError(item, `event ${item}: expected a JSON object ("{"), found ${JSON.stringify(text.slice(i, i + 20))}`);
    const start = i;
    let depth = 0;
    let end = -1;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        let k = text.indexOf('"', i + 1);
        for (;;) {
          if (k < 0) throw new StreamItemError(item, `event ${item}: unterminated string`);
          let b = k - 1;
          while (text.charCodeAt(b) === 0x5c) b--;
          if ((k - 1 - b) % 2 === 0) break;
          k = text.indexOf('"', k + 1);
        }
        i = k;
      } else if (c === 0x7b || c === 0x5b) {
        if (++depth > maxDepth) throw new LogsvcError('E_JSON_TOO_DEEP', `event ${item}: JSON nesting deeper than ${maxDepth} levels`);
      } else if (c === 0x7d || c === 0x5d) {
        if (--depth === 0) {
          end = i + 1;
          i++;
          break;
        }
      }
    }
    if (end < 0) throw new StreamItemError(item, `event ${item}: the JSON object is not closed`);
    bounds.push(start, end);
  }
}

/** Parses every object `objectRanges` found; the first that is not valid JSON throws StreamItemError. */
export function parseObjects(text: string, bounds: readonly number[]): unknown[] {
  if (bounds.length === 0) return [];
  let joined = '[';
  for (let j = 0; j < bounds.length; j += 2) joined += (j === 0 ? '' : ',') + text.slice(bounds[j], bounds[j + 1]);
  try {
    return JSON.parse(joined + ']') as unknown[];
  } catch {
    for (let j = 0; j < bounds.length; j += 2) {
      try {
        JSON.parse(text.slice(bounds[j], bounds[j + 1]));
      } catch (err) {
        throw new StreamItemError(j / 2, `event ${j / 2}: not valid JSON (${(err as Error).message.slice(0, 200)})`);
      }
    }
    throw new StreamItemError(0, 'the body is not valid JSON');
  }
}
