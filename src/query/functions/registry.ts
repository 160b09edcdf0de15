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
import { mathFunctions } from './math.js';
import { timePartFunctions } from './time-parts.js';
import { cryptoFunctions } from './crypto.js';
import { textFunctions } from './text.js';
import { moreAggregateFunctions } from './aggregates-more.js';
import { sequenceFunctions } from './sequence.js';
import { arrayFunctions } from './array.js';
import { networkFunctions } from './network.js';
import { moreParsingFunctions } from './parsing-more.js';
import { miscFunctions } from './misc.js';
import { correlationFunctions } from './correlation.js';
import { correlateFunctions } from './correlate.js';
import { dnsFunctions } from './dns.js';
import type { FnDef } from './types.js';

const registry: ReadonlyMap<string, FnDef> = (() => {
  const m = new Map<string, FnDef>();
  for (const list of [
    aggregateFunctions,
    rowFunctions,
    timeFunctions,
    logicFunctions,
    stringFunctions,
    parsingFunctions,
    lookupFunctions,
    mathFunctions,
    timePartFunctions,
    cryptoFunctions,
    textFunctions,
    moreAggregateFunctions,
    sequenceFunctions,
    arrayFunctions,
    networkFunctions,
    moreParsingFunctions,
    miscFunctions,
    correlationFunctions,
    correlateFunctions,
    dnsFunctions,
  ]) {
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
/** Every function definition, by canonical name (the function reference is generated from these). */
export function allFunctions(): FnDef[] {
  return [...registry.values()].sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
}

