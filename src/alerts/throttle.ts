/**
 * Throttling decisions (api-facts §5.1), as pure functions over the runtime state in global
 * state. Without a throttle field, the alert as a whole is held off for `throttleTimeMillis` after
 * it triggered (and its query is not even run meanwhile). With one, each distinct value of that
 * field in the result rows is held off on its own; rows without the field count as the empty value.
 * Values are remembered as fixed-size keys (16 bytes of their SHA-256), so the global events and
 * snapshots that carry them stay small whatever the data: MAX_THROTTLE_VALUES keys are ~45 KB.
 */
import { createHash } from 'node:crypto';
import { MAX_THROTTLE_VALUES, type AlertDefinition, type AlertRuntime } from '../global/index.js';
import type { ResultRow } from '../query/index.js';

/** Whether the whole alert is held off at `now` (never with a throttle field: values decide). */
export function heldOff(alert: AlertDefinition, rt: AlertRuntime | undefined, now: number): boolean {
  if (alert.throttleField !== '' || rt === undefined || rt.lastTriggeredAt === null) return false;
  return now < rt.lastTriggeredAt + alert.throttleTimeMillis;
}

/** Bytes of a value's SHA-256 kept as its key: 128 bits, collisions are not a practical concern. */
const KEY_BYTES = 16;

/** The key a throttle-field value is remembered by (22 base64url characters). */
export function throttleKey(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest().subarray(0, KEY_BYTES).toString('base64url');
}

/** How a row's throttle-field value is remembered. */
export function fieldValue(row: ResultRow, field: string): string {
  const v = row[field];
  return throttleKey(v === undefined ? '' : String(v));
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
