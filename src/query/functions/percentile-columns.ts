/**
 * percentile()'s column path (issue 19): a block's selected rows added to the quantile state
 * without an event per row. A dictionary column parses each entry once; while the state keeps
 * exact values they are pushed in row order (as event by event), and once it is a sketch each
 * distinct value is added once with its count (sketches.ts quantileAddMany: the same buckets).
 * Integer columns give their numbers as stored; other columns are parsed row by row.
 */
import type { ColumnAggregator, ColumnRows } from '../runtime.js';
import { parseNumber } from '../values.js';
import { QUANTILE_EXACT_VALUES, quantileAdd, quantileAddMany, type QuantileState } from './sketches.js';

export function percentileColumns(field: string): ColumnAggregator<QuantileState> {
  return {
    addRows(st, rows) {
      const { sel, count } = rows;
      const dict = rows.dict(field);
      if (dict !== null) {
        const { d, codes, absent } = dict;
        const values = new Float64Array(d.length);
        for (let k = 0; k < d.length; k++) values[k] = parseNumber(d[k]) ?? Number.NaN;
        const tally = new Float64Array(d.length);
        let valid = 0;
        for (let j = 0; j < count; j++) {
          const c = codes[sel[j]!]!;
          if (c === absent || Number.isNaN(values[c]!)) continue;
          tally[c]!++;
          valid++;
        }
        if (st.v !== null && st.v.length + valid <= QUANTILE_EXACT_VALUES) {
          for (let j = 0; j < count; j++) {
            const c = codes[sel[j]!]!;
            if (c === absent) continue;
            const x = values[c]!;
            if (!Number.isNaN(x)) st.v.push(x);
          }
          return;
        }
        for (let k = 0; k < d.length; k++) if (tally[k]! > 0) quantileAddMany(st, values[k]!, tally[k]!);
        return;
      }
      eachNumber(rows, field, (x) => quantileAdd(st, x));
    },
  };
}

/** The numbers of a field over the selected rows, in row order (an integer column as stored, others parsed). */
export function eachNumber(rows: ColumnRows, field: string, add: (x: number) => void): void {
  const { sel, count } = rows;
  const ints = rows.ints(field);
  if (ints !== null) {
    for (let j = 0; j < count; j++) add(ints[sel[j]!]!);
    return;
  }
  const col = rows.strings(field);
  if (col === null) return;
  for (let j = 0; j < count; j++) {
    const x = parseNumber(col[sel[j]!] ?? undefined);
    if (x !== undefined) add(x);
  }
}
