/**
 * The function registry: every query function by lower-cased name (the language matches function
 * names case-insensitively). Definitions live in the themed modules next to this one.
 */
import { aggregateFunctions } from './aggregates.js';
import { logicFunctions } from './logic.js';
import { parsingFunctions } from './parsing.js';
import { rowFunctions } from './rows.js';
import { stringFunctions } from './strings.js';
import { timeFunctions } from './timechart.js';
import { lookupFunctions } from './lookups.js';
import type { FnDef } from './types.js';

const registry: ReadonlyMap<string, FnDef> = (() => {
  const m = new Map<string, FnDef>();
  for (const list of [aggregateFunctions, rowFunctions, timeFunctions, logicFunctions, stringFunctions, parsingFunctions, lookupFunctions]) {
    for (const def of list) {
      const key = def.name.toLowerCase();
      if (m.has(key)) throw new Error(`query function ${def.name} is defined twice`);
      m.set(key, def);
    }
  }
  return m;
})();

export function lookupFunction(name: string): FnDef | undefined {
  return registry.get(name.toLowerCase());
}


/** Every function's canonical name, parameter names and whether it aggregates (editors complete them). */
export function functionSignatures(): { name: string; params: string[]; aggregate: boolean }[] {
  return [...registry.values()].map((d) => ({ name: d.name, params: d.params.map((p) => p.name), aggregate: d.agg !== undefined }));
}
