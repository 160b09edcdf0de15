/**
 * The lookup files a query names (the file argument of match() and lookup()), found in its syntax
 * tree before it is compiled, so the coordinator can load those tables (asynchronously, once per
 * content hash) and hand them to the compiler on every thread. Only literal names count; a name
 * that does not resolve makes compiling fail with a message naming it.
 */
import type { Call, Pipeline } from './ast.js';
import { parsedQuery } from './params.js';

/** The functions whose first parameter is a lookup file. */
export const FILE_FUNCTIONS: ReadonlySet<string> = new Set(['match', 'lookup', 'readfile']);
/** Functions that name a lookup file only with `file=` (their unnamed parameter is something else). */
const NAMED_FILE_FUNCTIONS: ReadonlySet<string> = new Set(['cidr']);

function isCall(v: unknown): v is Call {
  const o = v as Partial<Call>;
  return typeof o === 'object' && o !== null && typeof o.name === 'string' && Array.isArray(o.args) && typeof o.span === 'object';
}

/** File names used by `text` (with `args` substituted); a query that does not parse names none. */
export function fileNamesIn(text: string, args: Readonly<Record<string, string>> = {}): string[] {
  let tree: Pipeline;
  try {
    tree = parsedQuery(text, args);
  } catch {
    // Compiling reports the problem properly.
    return [];
  }
  return fileNamesInTree(tree);
}

/** callsOf's answers by tree: a request's preamble and its file names walk its tree once. */
const callLists = new WeakMap<Pipeline, readonly Call[]>();

/**
 * Every call of a parsed query at any depth, in the order a walk of the tree meets them (a call
 * before the calls in its arguments). Trees are not changed once parsed, so the list is kept per tree.
 */
export function callsOf(tree: Pipeline): readonly Call[] {
  let out = callLists.get(tree);
  if (out !== undefined) return out;
  const calls: Call[] = [];
  const visit = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (isCall(v)) calls.push(v);
    const o = v as Record<string, unknown>;
    for (const k in o) if (k !== 'span') visit(o[k]);
  };
  visit(tree);
  out = calls;
  callLists.set(tree, out);
  return out;
}

/** File names used by a parsed query (`parsedQuery(text, args)`; only read here). */
export function fileNamesInTree(tree: Pipeline): string[] {
  const names = new Set<string>();
  for (const c of callsOf(tree)) {
    const fn = c.name.toLowerCase();
    if (!FILE_FUNCTIONS.has(fn) && !NAMED_FILE_FUNCTIONS.has(fn)) continue;
    for (const a of c.args) {
      if (a.name === null ? NAMED_FILE_FUNCTIONS.has(fn) : a.name.toLowerCase() !== 'file' && a.name.toLowerCase() !== 'table') continue;
      const e = a.value;
      if (e.k === 'str') names.add(e.v);
      else if (e.k === 'ident') names.add(e.name);
      else if (e.k === 'array') for (const it of e.items) if (it.k === 'str') names.add(it.v);
      break;
    }
  }
  return [...names];
}
