/**
 * match() and lookup(): enrich or filter events with the rows of an uploaded CSV or JSON file
 * (api-facts §4.2). The table was loaded by the coordinator before compiling (file-refs.ts) and is
 * shared memory on every thread; the index a mode needs is built on first use, on the thread that
 * uses it (src/files/lookup-index.ts). A file the query names but the repository does not have is
 * a query error naming it.
 */
import type { PackedTable } from '../../files/packed.js';
import { cellValue, viewsOf, type TableViews } from '../../files/packed.js';
import { cidrFinder, exactFinder, globFinder, type RowFinder } from '../../files/lookup-index.js';
import type { Ev } from '../runtime.js';
import type { BoundArgs } from './args.js';
import type { CompileEnv, FnDef } from './types.js';

/** Rows a file may have for mode=glob (each row is tested per event): the product's GLOB_MATCH_LIMIT. */
export const GLOB_MATCH_LIMIT = 20_000;
/** The product's bound on nrows. */
export const MAX_NROWS = 500;

type Mode = 'string' | 'glob' | 'cidr';

export interface LookupSpec {
  table: PackedTable;
  /** Event fields whose values are looked up. */
  fields: string[];
  /** The table columns they are compared with. */
  columns: number[];
  /** Columns copied into a matching event. */
  include: number[];
  strict: boolean;
  mode: Mode;
  ignoreCase: boolean;
  nrows: number;
}

function tableOf(a: BoundArgs, env: CompileEnv): PackedTable {
  const name = a.string('file')!;
  if (env.files === null) return a.fail('file', `${a.def.name}() cannot read lookup files here (not available in parsers)`);
  const t = Object.hasOwn(env.files, name) ? env.files[name] : undefined;
  if (t === undefined) {
    return a.fail('file', `lookup file "${name}" does not exist; upload it to the repository, name a shared file as /shared/<name>, or define it with defineTable(name="${name}", ...)`);
  }
  return t;
}

/** The table `file=` names and the index of the column the `param` parameter names (required). */
export function lookupColumn(a: BoundArgs, env: CompileEnv, param: string): { table: PackedTable; column: number } {
  const table = tableOf(a, env);
  const name = a.string(param) ?? a.fail(param, `${a.def.name}(): file= needs ${param}=, the column of ${a.string('file')!} to read`);
  return { table, column: columnIndex(a, param, table, name, a.string('file')!) };
}

function describeColumns(t: PackedTable): string {
  const named = t.columns.filter((c) => c !== '');
  const shown = named.slice(0, 20).map((c) => JSON.stringify(c)).join(', ');
  return named.length > 20 ? `${shown}, ...` : shown;
}

/** The index of column `name`; a keyed JSON object's unnamed key column when `name` is null. */
function columnIndex(a: BoundArgs, param: string, t: PackedTable, name: string | null, fileName: string): number {
  if (name === null) {
    if (t.keyColumn !== null) return t.keyColumn;
    return a.fail(param, `${a.def.name}(): name the column of ${fileName} to match (columns: ${describeColumns(t)})`);
  }
  const i = t.columns.indexOf(name);
  if (i < 0 || name === '') return a.fail(param, `${a.def.name}(): ${fileName} has no column "${name}" (columns: ${describeColumns(t)})`);
  return i;
}

export function buildStage(spec: LookupSpec): { run: (e: Ev, emit: (e: Ev) => void) => void } {
  const { table, fields, columns, include, strict, mode, ignoreCase, nrows } = spec;
  // Built on the first event, on the thread that scans: compiling on the coordinator costs nothing.
  let views: TableViews | null = null;
  let finder: RowFinder | null = null;
  const values: string[] = new Array<string>(fields.length);
  const copy = (e: Ev, row: number): void => {
    for (const c of include) {
      const v = cellValue(views!, row, c);
      if (v !== undefined) e.set(table.columns[c]!, v);
    }
  };
  return {
    run(e, emit) {
      for (let i = 0; i < fields.length; i++) {
        const v = e.get(fields[i]!);
        if (v === undefined) {
          if (!strict) emit(e);
          return;
        }
        values[i] = v;
      }
      if (finder === null) {
        views = viewsOf(table);
        finder = mode === 'string' ? exactFinder(table, columns, ignoreCase) : mode === 'glob' ? globFinder(table, columns[0]!, ignoreCase) : cidrFinder(table, columns[0]!);
      }
      const rows = finder(values, nrows);
      if (rows.length === 0) {
        if (!strict) emit(e);
        return;
      }
      // One event per matching row (nrows > 1); the last one reuses the event itself.
      for (let i = 0; i < rows.length; i++) {
        const out = i === rows.length - 1 ? e : e.clone();
        copy(out, rows[i]!);
        emit(out);
      }
    },
  };
}

function includeOf(a: BoundArgs, t: PackedTable, fileName: string): number[] {
  const names = a.list('include');
  if (names === undefined) return t.columns.map((_, i) => i).filter((i) => i !== t.keyColumn);
  return names.map((n) => columnIndex(a, 'include', t, n, fileName));
}

const match: FnDef = {
  name: 'match',
  params: [
    { name: 'file', type: 'string', unnamed: true, required: true, aliases: ['table'] },
    { name: 'field', type: 'fields', required: true },
    { name: 'column', type: 'strings', default: 'field' },
    { name: 'include', type: 'strings', default: 'all columns' },
    { name: 'strict', type: 'bool', default: 'true' },
    { name: 'mode', type: 'string', default: 'string' },
    { name: 'ignoreCase', type: 'bool', default: 'false' },
    { name: 'nrows', type: 'limit', default: '1' },
    { name: 'glob', type: 'bool', default: 'false' },
  ],
  stage: (a, env) => buildStage(matchSpec(a, env)),
  // `!match(...)`: events without a matching row (an anti-join); nothing is copied.
  filter(a, env) {
    const stage = buildStage({ ...matchSpec(a, env), include: [], strict: true, nrows: 1 });
    return (e) => {
      let hit = false;
      stage.run(e, () => {
        hit = true;
      });
      return hit;
    };
  },
};

function matchSpec(a: BoundArgs, env: CompileEnv): LookupSpec {
  {
    const table = tableOf(a, env);
    const fileName = JSON.stringify(a.string('file')!);
    const fields = a.list('field')!;
    const given = a.list('column');
    const colNames: (string | null)[] = given ?? fields.map((f) => (table.keyColumn !== null && !table.columns.includes(f) ? null : f));
    if (colNames.length !== fields.length) return a.fail('column', `match(): column names ${colNames.length} columns but field names ${fields.length} fields; give one column per field`);
    const columns = colNames.map((c) => columnIndex(a, given === undefined ? 'field' : 'column', table, c, fileName));
    const modeText = a.string('mode') ?? (a.bool('glob', false) ? 'glob' : 'string');
    const mode = modeText.toLowerCase();
    if (mode !== 'string' && mode !== 'glob' && mode !== 'cidr') return a.fail('mode', `match(): mode must be string, glob or cidr, not "${modeText}"`);
    if (mode !== 'string' && fields.length > 1) return a.fail('field', `match(): mode=${mode} takes one field, not ${fields.length}`);
    if (mode === 'glob' && table.nRows > GLOB_MATCH_LIMIT) {
      return a.fail('mode', `match(): ${fileName} has ${table.nRows} rows; mode=glob allows at most ${GLOB_MATCH_LIMIT}`);
    }
    if (mode === 'cidr' && a.bool('ignoreCase', false)) return a.fail('ignoreCase', 'match(): ignoreCase does not apply to mode=cidr');
    const nrows = a.limit('nrows', 1, MAX_NROWS);
    if (nrows < 1) return a.fail('nrows', 'match(): nrows must be at least 1');
    return { table, fields, columns, include: includeOf(a, table, fileName), strict: a.bool('strict', true), mode, ignoreCase: a.bool('ignoreCase', false), nrows };
  }
}

/** The predecessor of match(strict=false) (api-facts §4.2); `on` picks the key of a JSON array file. */
const lookup: FnDef = {
  name: 'lookup',
  params: [
    { name: 'file', type: 'string', unnamed: true, required: true },
    { name: 'column', type: 'string' },
    { name: 'field', type: 'field' },
    { name: 'include', type: 'strings', default: 'all columns' },
    { name: 'strict', type: 'bool', default: 'false' },
    { name: 'on', type: 'string' },
  ],
  stage(a, env) {
    const table = tableOf(a, env);
    const fileName = JSON.stringify(a.string('file')!);
    const field = a.string('field') ?? a.string('column');
    if (field === undefined) return a.fail('file', 'lookup(): give field (the event field to look up) or column');
    const keyName = a.string('on') ?? a.string('column') ?? (table.keyColumn !== null && !table.columns.includes(field) ? null : field);
    const column = columnIndex(a, a.has('on') ? 'on' : 'column', table, keyName, fileName);
    return buildStage({ table, fields: [field], columns: [column], include: includeOf(a, table, fileName), strict: a.bool('strict', false), mode: 'string', ignoreCase: false, nrows: 1 });
  },
};

export const lookupFunctions: FnDef[] = [match, lookup];
