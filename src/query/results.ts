/**
 * Result rows as clients see them (api-facts §1.3, §1.5): JSON objects whose values are strings,
 * except `@timestamp`, a number of epoch milliseconds; or text lines, `@rawstring` when the row has
 * one, otherwise `name->value` pairs joined by ", ".
 */
import type { Ev } from './runtime.js';

export type ResultRow = Record<string, string | number>;

export function toJsonRow(e: Ev): ResultRow {
  // A null-prototype object: field names are data ("__proto__" is a field like any other).
  const out = Object.create(null) as ResultRow;
  for (const name of e.names()) {
    const v = e.get(name);
    if (v === undefined) continue;
    if (name === '@timestamp') {
      const n = Number(v);
      out[name] = Number.isFinite(n) ? n : v;
    } else out[name] = v;
  }
  return out;
}

export function toTextLine(e: Ev): string {
  const raw = e.get('@rawstring');
  if (raw !== undefined) return raw;
  const parts: string[] = [];
  for (const name of e.names()) {
    const v = e.get(name);
    if (v !== undefined) parts.push(`${name}->${v}`);
  }
  return parts.join(', ');
}
