/**
 * Turning a JSON value into flat string fields, the way the product names them: `a.b` for nested
 * object members, `a[0]` for array elements. Used for JSON parsing, structured-ingest attributes
 * and HEC events. Nesting is bounded here (`maxDepth`, E_JSON_TOO_DEEP beyond it), so callers can
 * hand over values from V8's JSON.parse (which itself handles any depth) without a separate scan.
 */
import { LogsvcError } from '../lib/errors.js';
import { MAX_FIELD_NAME_CHARS } from './limits.js';

interface FlattenState {
  count: number;
  truncated: boolean;
  readonly max: number;
  readonly maxDepth: number;
}

export const DEFAULT_MAX_DEPTH = 64;

/**
 * Flattens `value`'s members into `target`: nested objects joined with ".", arrays as "name[0]";
 * strings as-is, numbers, booleans and bigints via String(); null members skipped. A primitive
 * `value` with a non-empty `prefix` becomes the single field `prefix`. Keys are taken as-is (no
 * escaping); the names never stored are the empty one (a primitive with no prefix, or a top-level
 * member keyed ""), since no query could refer to it, and names longer than MAX_FIELD_NAME_CHARS.
 *
 * `maxFields` bounds the fields this call creates (replacing a field already in `target` does not
 * count); once a new field would exceed it, flattening stops and `truncated` is true. `count` is the
 * number of fields created.
 */
export function flattenInto(
  target: Record<string, string>,
  value: unknown,
  prefix: string,
  maxFields: number,
  maxDepth = DEFAULT_MAX_DEPTH,
): { count: number; truncated: boolean } {
  const state: FlattenState = { count: 0, truncated: false, max: maxFields, maxDepth };
  walk(target, value, prefix, state, 0);
  return { count: state.count, truncated: state.truncated };
}

/** Returns false once the field limit has stopped the walk. */
function walk(target: Record<string, string>, value: unknown, name: string, state: FlattenState, depth: number): boolean {
  switch (typeof value) {
    case 'string':
      return name === '' || put(target, name, value, state);
    case 'number':
    case 'boolean':
    case 'bigint':
      return name === '' || put(target, name, String(value), state);
    case 'object': {
      if (value === null) return true;
      if (depth >= state.maxDepth) {
        throw new LogsvcError('E_JSON_TOO_DEEP', `${name === '' ? 'value' : `"${name.slice(0, 200)}"`}: JSON nesting deeper than ${state.maxDepth} levels`);
      }
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!walk(target, value[i] as unknown, `${name}[${i}]`, state, depth + 1)) return false;
        }
        return true;
      }
      const obj = value as Record<string, unknown>;
      for (const key in obj) {
        if (!Object.hasOwn(obj, key)) continue;
        if (!walk(target, obj[key], name === '' ? key : `${name}.${key}`, state, depth + 1)) return false;
      }
      return true;
    }
    default:
      // undefined, functions and symbols cannot come from JSON; there is nothing to store.
      return true;
  }
}

function put(target: Record<string, string>, name: string, text: string, state: FlattenState): boolean {
  if (name.length > MAX_FIELD_NAME_CHARS) return true;
  if (!Object.hasOwn(target, name)) {
    if (state.count >= state.max) {
      state.truncated = true;
      return false;
    }
    state.count++;
  }
  // A JSON member named "__proto__" is an ordinary own key; plain assignment would hit the
  // prototype setter and silently drop it.
  if (name === '__proto__') {
    Object.defineProperty(target, name, { value: text, enumerable: true, writable: true, configurable: true });
  } else {
    target[name] = text;
  }
  return true;
}
