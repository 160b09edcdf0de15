/**
 * Saved searches called from a query: `$name()`, `$"Name With Spaces"()`, with arguments
 * `$name(param=value, other="quoted value")`. Each call is replaced by the saved query's text before
 * the query is parsed (the grammar itself does not know `$`): arguments fill the saved text's
 * `?param` / `?{param=default}` parameters (as quoted strings); parameters a call leaves out stay,
 * for the request's `arguments` or their defaults. A saved text without a pipe is put in
 * parentheses, so `a $f() b` keeps `$f()` as one filter; one with pipes is put in as it is (as a
 * query's first part). Saved searches may call others, up to MAX_DEPTH; a cycle is an error.
 * Text inside double-quoted strings is left alone.
 */
import { LogsvcError } from '../lib/errors.js';

export const MAX_DEPTH = 10;
/** An expanded query is bounded like a request's query string. */
export const MAX_EXPANDED_CHARS = 64 * 1024;

/** The saved query text of `name` in the search domain, or undefined. */
export type SavedLookup = (name: string) => string | undefined;

const NAME_CHAR = /[A-Za-z0-9_.-]/;
const PARAM_NAME = /^[A-Za-z0-9_]+$/;

interface Call {
  start: number;
  end: number;
  name: string;
  args: Map<string, string>;
}

const fail = (msg: string): never => {
  throw new LogsvcError('E_QUERY', msg);
};

/** Reads a double-quoted string at `i` (text[i] === '"'); returns its value and the index after it. */
function readQuoted(text: string, i: number): { value: string; next: number } {
  let out = '';
  let j = i + 1;
  while (j < text.length) {
    const c = text[j]!;
    if (c === '\\' && j + 1 < text.length) {
      out += text[j + 1]!;
      j += 2;
      continue;
    }
    if (c === '"') return { value: out, next: j + 1 };
    out += c;
    j++;
  }
  return fail('a saved search call has an unterminated string');
}

function skipSpaces(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

/** The call starting at `i` (text[i] === '$'), or null when `$` does not start a call. */
function readCall(text: string, i: number): Call | null {
  let j = i + 1;
  let name: string;
  if (text[j] === '"') {
    const q = readQuoted(text, j);
    name = q.value;
    j = q.next;
  } else {
    const s = j;
    while (j < text.length && NAME_CHAR.test(text[j]!)) j++;
    name = text.slice(s, j);
  }
  if (name === '') return null;
  j = skipSpaces(text, j);
  if (text[j] !== '(') return null;
  j = skipSpaces(text, j + 1);
  const args = new Map<string, string>();
  while (text[j] !== ')') {
    if (j >= text.length) fail(`the call of saved search "${name}" has no closing ")"`);
    const s = j;
    while (j < text.length && /[A-Za-z0-9_]/.test(text[j]!)) j++;
    const param = text.slice(s, j);
    if (param === '') fail(`the call of saved search "${name}": expected a parameter name at "${text.slice(j, j + 20)}"`);
    j = skipSpaces(text, j);
    if (text[j] !== '=') fail(`the call of saved search "${name}": expected "=" after parameter "${param}"`);
    j = skipSpaces(text, j + 1);
    let value: string;
    if (text[j] === '"') {
      const q = readQuoted(text, j);
      value = q.value;
      j = q.next;
    } else {
      const v = j;
      while (j < text.length && !/[\s,)]/.test(text[j]!)) j++;
      value = text.slice(v, j);
    }
    args.set(param, value);
    j = skipSpaces(text, j);
    if (text[j] === ',') j = skipSpaces(text, j + 1);
  }
  return { start: i, end: j + 1, name, args };
}

/** The calls in `text`, outside double-quoted strings. */
function findCalls(text: string): Call[] {
  const calls: Call[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      i = readQuoted(text, i).next;
      continue;
    }
    if (c === '$') {
      const call = readCall(text, i);
      if (call !== null) {
        calls.push(call);
        i = call.end;
        continue;
      }
    }
    i++;
  }
  return calls;
}

const quote = (v: string): string => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** Fills `?p` / `?{p=...}` parameters of `text` that `args` names, outside quoted strings. */
function fillParams(text: string, args: Map<string, string>): string {
  if (args.size === 0) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const next = readQuoted(text, i).next;
      out += text.slice(i, next);
      i = next;
      continue;
    }
    if (c === '?') {
      let name: string;
      let end: number;
      if (text[i + 1] === '{') {
        const close = text.indexOf('}', i);
        end = close === -1 ? text.length : close + 1;
        name = text.slice(i + 2, close === -1 ? text.length : close).split('=')[0]!.trim();
      } else {
        let j = i + 1;
        while (j < text.length && /[A-Za-z0-9_]/.test(text[j]!)) j++;
        end = j;
        name = text.slice(i + 1, j);
      }
      const v = PARAM_NAME.test(name) ? args.get(name) : undefined;
      if (v !== undefined) {
        out += quote(v);
        i = end;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

function hasPipe(text: string): boolean {
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i = readQuoted(text, i).next;
      continue;
    }
    if (text[i] === '|') return true;
    i++;
  }
  return false;
}

/** `text` with every saved search call replaced; unchanged (same string) when it has none. */
export function expandSavedCalls(text: string, lookup: SavedLookup, depth = 0, chain: readonly string[] = []): string {
  if (!text.includes('$')) return text;
  const calls = findCalls(text);
  if (calls.length === 0) return text;
  if (depth >= MAX_DEPTH) fail(`saved searches call each other more than ${MAX_DEPTH} deep (${chain.join(' -> ')})`);
  let out = '';
  let at = 0;
  for (const call of calls) {
    if (chain.includes(call.name)) fail(`saved search "${call.name}" calls itself (${[...chain, call.name].join(' -> ')})`);
    const saved = lookup(call.name);
    if (saved === undefined) fail(`there is no saved search named "${call.name}" in this repository or view`);
    const body = expandSavedCalls(fillParams(saved!, call.args), lookup, depth + 1, [...chain, call.name]);
    out += text.slice(at, call.start) + (hasPipe(body) ? body : `(${body.trim() === '' ? '*' : body})`);
    at = call.end;
    if (out.length > MAX_EXPANDED_CHARS) fail(`the query with its saved searches put in is longer than ${MAX_EXPANDED_CHARS} characters`);
  }
  out += text.slice(at);
  if (out.length > MAX_EXPANDED_CHARS) fail(`the query with its saved searches put in is longer than ${MAX_EXPANDED_CHARS} characters`);
  return out;
}
