/**
 * Throttling decisions (api-facts §5.1), as pure functions over the runtime state in global
 * state. Without a throttle field, the alert as a whole is held off for `throttleTimeMillis` after
 * it triggered (and its query is not even run meanwhile). With one, each distinct value of that
 * field in the result rows is held off on its own; rows without the field count as the empty value.
 */
import { createHash } from 'node:crypto';
import { MAX_THROTTLE_VALUES, type AlertDefinition, type AlertRuntime } from '../global/index.js';
import type { ResultRow } from '../query/index.js';

/** Whether the whole alert is held off at `now` (never with a throttle field: values decide). */
export function heldOff(alert: AlertDefinition, rt: AlertRuntime | undefined, now: number): boolean {
  if (alert.throttleField !== '' || rt === undefined || rt.lastTriggeredAt === null) return false;
  return now < rt.lastTriggeredAt + alert.throttleTimeMillis;
}

/** Longer values are remembered by their SHA-256, so global events stay small whatever the data. */
const MAX_KEY_CHARS = 256;

/** How a row's throttle-field value is remembered. */
export function fieldValue(row: ResultRow, field: string): string {
  const v = row[field];
  const s = v === undefined ? '' : String(v);
  return s.length <= MAX_KEY_CHARS ? s : `sha256:${createHash('sha256').update(s, 'utf8').digest('hex')}`;
}

/**
 * The rows whose throttle-field value is not held off at `now`, and their distinct values (at most
 * MAX_THROTTLE_VALUES of them; rows of further values wait for a later trigger).
 */
export function freshRows(rows: readonly ResultRow[], field: string, held: ReadonlyMap<string, number> | undefined, throttleMs: number, now: number): { rows: ResultRow[]; values: string[] } {
  const values = new Set<string>();
  const out: ResultRow[] = [];
  for (const row of rows) {
    const v = fieldValue(row, field);
    const last = held?.get(v);
    if (last !== undefined && now < last + throttleMs) continue;
    if (!values.has(v)) {
      if (values.size >= MAX_THROTTLE_VALUES) continue;
      values.add(v);
    }
    out.push(row);
  }
  return { rows: out, values: [...values] };
}
