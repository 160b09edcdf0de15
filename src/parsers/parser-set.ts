/**
 * All custom parsers of a repository as one SharedArrayBuffer, for unstructured ingest without a
 * token parser (an item's `type` may name any of them). Cloning a task to a worker then shares the
 * bytes instead of copying up to 200 x 64 KB of scripts per request; the worker reads only the
 * parsers the body's items name, and not even those when it has them compiled already (by key).
 * Built once per version of the repository's parser list (ParserService caches it).
 *
 *   sab      UTF-8 JSON of each CustomParserDef, one after the other
 *   ends     where each one ends in sab
 *   names    parser names, in the same order
 *   keys     parserKey() of each (the worker's compiled-parser cache key)
 */
import { parserKey, type CustomParserDef } from './custom-parser.js';

export interface ParserSet {
  names: string[];
  keys: string[];
  ends: number[];
  sab: SharedArrayBuffer;
}

export function isParserSet(x: readonly CustomParserDef[] | ParserSet): x is ParserSet {
  return !Array.isArray(x);
}

export function encodeParserSet(defs: readonly CustomParserDef[]): ParserSet {
  const parts = defs.map((d) => Buffer.from(JSON.stringify(d), 'utf8'));
  const ends: number[] = [];
  let at = 0;
  for (const p of parts) ends.push((at += p.length));
  const sab = new SharedArrayBuffer(at);
  const bytes = new Uint8Array(sab);
  at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { names: defs.map((d) => d.name), keys: defs.map(parserKey), ends, sab };
}

/** The definition at index `i` (copied out of shared memory, then parsed). */
export function parserDefAt(set: ParserSet, i: number): CustomParserDef {
  const start = i === 0 ? 0 : set.ends[i - 1]!;
  const copy = new Uint8Array(set.ends[i]! - start);
  copy.set(new Uint8Array(set.sab, start, copy.length));
  return JSON.parse(Buffer.from(copy.buffer).toString('utf8')) as CustomParserDef;
}
