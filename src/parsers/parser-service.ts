/**
 * ParserService: custom parsers of a repository (createParserV2 / deleteParser, api-facts §4.3 and
 * Appendix B). Saving compiles the script (no aggregates) and runs every test case through the
 * same code the ingest path uses; a failing case refuses the save and is named. The built-in
 * parsers are listed next to the custom ones, marked isBuiltIn.
 */
import { randomBytes } from 'node:crypto';
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import { requireRight, requireUser, visibleRepository, type Principal } from '../auth/index.js';
import type { GlobalStore, ParserTestCase, Repository, StoredParser } from '../global/index.js';
import { BUILT_IN_PARSER_NAMES, isBuiltInParser } from '../ingest/parsers/index.js';
import type { IngestLimits } from '../ingest/limits.js';
import { CustomParser, ParserBudget, type CustomParserDef, type ParsedEvent, type ParserTimeLimits } from './custom-parser.js';
import { encodeParserSet, type ParserSet } from './parser-set.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.\- ]{0,99}$/;
const FIELD_NAME = /^[^\p{Cc}]{1,200}$/u;
export const MAX_SCRIPT_CHARS = 64 * 1024;
const MAX_TEST_CASES = 100;
const MAX_TEST_INPUT_CHARS = 64 * 1024;
const MAX_ASSERTIONS = 1000;
const MAX_NAMED_FIELDS = 100;

export interface ParserLimits extends ParserTimeLimits {
  maxPerRepository: number;
}

export interface ParserView {
  id: string;
  name: string;
  isBuiltIn: boolean;
  script: string;
  fieldsToTag: string[];
  fieldsToBeRemovedBeforeParsing: string[];
  testCases: ParserTestCase[];
}

export interface CreateParserInput {
  name: string;
  script: string;
  testCases: ParserTestCase[];
  repositoryName: string;
  fieldsToTag: string[];
  fieldsToBeRemovedBeforeParsing: string[];
  allowOverwritingExistingParser: boolean;
}

function builtInView(name: string): ParserView {
  return { id: name, name, isBuiltIn: true, script: '', fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [], testCases: [] };
}

function customView(p: StoredParser): ParserView {
  return { id: p.id, name: p.name, isBuiltIn: false, script: p.script, fieldsToTag: p.fieldsToTag, fieldsToBeRemovedBeforeParsing: p.fieldsToBeRemovedBeforeParsing, testCases: p.testCases };
}

export function defOf(p: StoredParser): CustomParserDef {
  return { id: p.id, name: p.name, script: p.script, fieldsToTag: p.fieldsToTag, fieldsToBeRemovedBeforeParsing: p.fieldsToBeRemovedBeforeParsing, savedAt: p.savedAt };
}

/** The value a test assertion reads from an output event. */
function outputValue(out: ParsedEvent, field: string): string | undefined {
  const e = out.event;
  if (field === '@timestamp') return String(e.timestamp);
  if (field === '@timezone') return e.timezone;
  if (field === '@rawstring') return e.rawstring;
  if (field.startsWith('#')) return Object.hasOwn(out.tags, field.slice(1)) ? out.tags[field.slice(1)] : undefined;
  return Object.hasOwn(e.fields, field) ? e.fields[field] : undefined;
}

const quote = (s: string, n = 80): string => JSON.stringify(s.length > n ? `${s.slice(0, n)}...` : s);

function checkNames(list: unknown, what: string): string[] {
  if (!Array.isArray(list)) throw new LogsvcError('E_VALIDATION', `${what}: must be a list of field names`);
  if (list.length > MAX_NAMED_FIELDS) throw new LogsvcError('E_VALIDATION', `${what}: at most ${MAX_NAMED_FIELDS} names`);
  for (const n of list) if (typeof n !== 'string' || !FIELD_NAME.test(n)) throw new LogsvcError('E_VALIDATION', `${what}: ${quote(String(n))} is not a field name`);
  return [...new Set(list as string[])];
}

function checkTestCases(cases: ParserTestCase[]): void {
  if (cases.length > MAX_TEST_CASES) throw new LogsvcError('E_VALIDATION', `testCases: at most ${MAX_TEST_CASES}`);
  let assertions = 0;
  cases.forEach((c, i) => {
    if (c.rawString.length > MAX_TEST_INPUT_CHARS) throw new LogsvcError('E_VALIDATION', `testCases[${i}].event.rawString: longer than ${MAX_TEST_INPUT_CHARS} characters`);
    for (const a of c.assertions) assertions += a.fieldsHaveValues.length + a.fieldsNotPresent.length + 1;
  });
  if (assertions > MAX_ASSERTIONS) throw new LogsvcError('E_VALIDATION', `testCases: at most ${MAX_ASSERTIONS} assertions in all`);
}

export class ParserService {
  private readonly sets = new Map<string, { parsers: readonly StoredParser[]; set: ParserSet }>();

  constructor(
    private readonly store: GlobalStore,
    private readonly clock: Clock,
    private readonly limits: ParserLimits,
    private readonly ingestLimits: IngestLimits,
  ) {}

  list(p: Principal, repo: Repository): ParserView[] {
    requireUser(p, 'listing parsers');
    return [...BUILT_IN_PARSER_NAMES.map(builtInView), ...this.store.state.parsers.list(repo.id).map(customView)];
  }

  find(p: Principal, repo: Repository, by: { id?: string | null; name?: string | null }): ParserView | null {
    requireUser(p, 'reading a parser');
    const key = by.name ?? by.id;
    if (key === undefined || key === null) throw new LogsvcError('E_VALIDATION', 'parser: give id or name');
    if (isBuiltInParser(key)) return builtInView(key);
    const ps = this.store.state.parsers;
    const found = (by.name != null ? ps.byName(repo.id, by.name) : undefined) ?? (by.id != null ? ps.byId(repo.id, by.id) : undefined);
    return found === undefined ? null : customView(found);
  }

  /** Compiles the script, runs the test cases, then saves (or replaces, when allowed). */
  async create(p: Principal, input: CreateParserInput): Promise<ParserView> {
    requireUser(p, 'creating a parser');
    const repo = visibleRepository(this.store.state, p, input.repositoryName);
    requireRight(this.store.state, p, repo, 'parsers', 'changing parsers');
    if (typeof input.name !== 'string' || !NAME.test(input.name)) throw new LogsvcError('E_VALIDATION', 'name: must be 1 to 100 letters, digits, spaces, "_", "-" or ".", starting with a letter or digit');
    if (isBuiltInParser(input.name)) throw new LogsvcError('E_CONFLICT', `name: "${input.name}" is a built-in parser; choose another name`);
    if (input.script.length > MAX_SCRIPT_CHARS) throw new LogsvcError('E_VALIDATION', `script: longer than ${MAX_SCRIPT_CHARS} characters`);
    const fieldsToTag = checkNames(input.fieldsToTag, 'fieldsToTag');
    const removeBefore = checkNames(input.fieldsToBeRemovedBeforeParsing, 'fieldsToBeRemovedBeforeParsing');
    checkTestCases(input.testCases);
    const existing = this.store.state.parsers.byName(repo.id, input.name);
    const def: CustomParserDef = {
      id: existing?.id ?? randomBytes(12).toString('base64url'),
      name: input.name,
      script: input.script,
      fieldsToTag,
      fieldsToBeRemovedBeforeParsing: removeBefore,
      savedAt: this.clock.now(),
    };
    let parser: CustomParser;
    try {
      parser = new CustomParser(def);
    } catch (err) {
      if (err instanceof LogsvcError) throw new LogsvcError('E_VALIDATION', `script: ${err.message}`);
      throw err;
    }
    this.runTests(parser, input.testCases);
    await this.store.transact((s) => {
      const r = s.repositories.get(repo.id);
      if (r === undefined) throw new LogsvcError('E_NOT_FOUND', `repository "${repo.name}" no longer exists`);
      const now = s.parsers.byName(repo.id, input.name);
      if (now !== undefined && !input.allowOverwritingExistingParser) {
        throw new LogsvcError('E_CONFLICT', `parser "${input.name}" already exists in repository "${repo.name}"; set allowOverwritingExistingParser to replace it`);
      }
      if (now === undefined && s.parsers.list(repo.id).length >= this.limits.maxPerRepository) {
        throw new LogsvcError('E_CONFLICT', `repository "${repo.name}" already has ${this.limits.maxPerRepository} parsers (parsers.max_per_repository)`);
      }
      const { savedAt, ...rest } = def;
      return { events: [{ type: 'ParserSaved', repositoryId: repo.id, ...rest, id: now?.id ?? def.id, testCases: input.testCases, at: savedAt }], result: undefined };
    });
    return customView(this.store.state.parsers.byName(repo.id, input.name)!);
  }

  /**
   * Runs `script` over the test cases without saving anything (the UI's parser editor, as you
   * type): per case, the output events (fields, tags as "#name") and the failure createParserV2
   * would report, or a compile error for the script. Same bounds as a save.
   */
  tryScript(p: Principal, repositoryName: string, name: string, script: string, cases: ParserTestCase[]): { compileError: string | null; results: { outputs: Record<string, string>[]; failure: string | null }[] } {
    requireUser(p, 'testing a parser');
    visibleRepository(this.store.state, p, repositoryName);
    if (script.length > MAX_SCRIPT_CHARS) throw new LogsvcError('E_VALIDATION', `script: longer than ${MAX_SCRIPT_CHARS} characters`);
    checkTestCases(cases);
    let parser: CustomParser;
    try {
      parser = new CustomParser({ id: 'try', name, script, fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [], savedAt: this.clock.now() });
    } catch (err) {
      if (err instanceof LogsvcError) return { compileError: err.message, results: [] };
      throw err;
    }
    const budget = new ParserBudget({ maxRequestMs: this.limits.maxRequestMs });
    const results = cases.map((c, i) => {
      const out = parser.parse({ rawstring: c.rawString, input: {}, tags: {}, after: {}, timestamp: null, timezone: null }, this.clock.now(), this.ingestLimits, budget);
      const outputs = out.map((o) => {
        const row: Record<string, string> = { '@timestamp': String(o.event.timestamp), '@rawstring': o.event.rawstring };
        for (const [k, v] of Object.entries(o.tags)) row[`#${k}`] = v;
        return Object.assign(row, o.event.fields);
      });
      let failure: string | null = null;
      try {
        this.runTests(parser, [c]);
      } catch (err) {
        if (!(err instanceof LogsvcError)) throw err;
        failure = err.message.replace(/^test case 1 /, `test case ${i + 1} `);
      }
      return { outputs, failure };
    });
    return { compileError: null, results };
  }

  /** Runs every test case; the first failing one refuses the save, named by its number and input. */
  private runTests(parser: CustomParser, cases: readonly ParserTestCase[]): void {
    const budget = new ParserBudget({ maxRequestMs: this.limits.maxRequestMs });
    cases.forEach((c, i) => {
      const name = `test case ${i + 1} (rawString ${quote(c.rawString)})`;
      const out = parser.parse({ rawstring: c.rawString, input: {}, tags: {}, after: {}, timestamp: null, timezone: null }, this.clock.now(), this.ingestLimits, budget);
      const expectsError = c.assertions.some((a) => a.fieldsHaveValues.some((f) => f.fieldName === '@error'));
      out.forEach((o, k) => {
        if (!expectsError && o.event.fields['@error'] === 'true') {
          throw new LogsvcError('E_VALIDATION', `${name} failed: output event ${k} has a parser error: ${o.event.fields['@error_msg'] ?? 'unknown'}`);
        }
      });
      for (const a of c.assertions) {
        const o = out[a.outputEventIndex];
        if (o === undefined) throw new LogsvcError('E_VALIDATION', `${name} failed: it has ${out.length} output events, so no output event ${a.outputEventIndex}`);
        for (const f of a.fieldsHaveValues) {
          const got = outputValue(o, f.fieldName);
          if (got !== f.expectedValue) {
            throw new LogsvcError('E_VALIDATION', `${name} failed: output event ${a.outputEventIndex} field ${f.fieldName} is ${got === undefined ? 'missing' : quote(got)}, expected ${quote(f.expectedValue)}`);
          }
        }
        for (const f of a.fieldsNotPresent) {
          if (outputValue(o, f) !== undefined) throw new LogsvcError('E_VALIDATION', `${name} failed: output event ${a.outputEventIndex} has field ${f}, expected it not to be present`);
        }
      }
    });
  }

  async delete(p: Principal, repositoryName: string, idOrName: string): Promise<void> {
    requireUser(p, 'deleting a parser');
    const repo = visibleRepository(this.store.state, p, repositoryName);
    requireRight(this.store.state, p, repo, 'parsers', 'changing parsers');
    if (isBuiltInParser(idOrName)) throw new LogsvcError('E_VALIDATION', `parser "${idOrName}" is built in and cannot be deleted`);
    await this.store.transact((s) => {
      const found = s.parsers.byId(repo.id, idOrName) ?? s.parsers.byName(repo.id, idOrName);
      if (found === undefined) throw new LogsvcError('E_NOT_FOUND', `parser "${idOrName.slice(0, 100)}" does not exist in repository "${repo.name}"`);
      const r = s.repositories.get(repo.id)!;
      for (const t of r.ingestTokens.values()) {
        if (t.parser === found.name) throw new LogsvcError('E_CONFLICT', `parser "${found.name}" is used by ingest token "${t.name}"; assign another parser to it first`);
      }
      return { events: [{ type: 'ParserDeleted', repositoryId: repo.id, id: found.id }], result: undefined };
    });
  }

  /**
   * The custom parsers an ingest request may need: the token's parser when it is a custom one; for
   * unstructured bodies without a token parser, every custom parser (an item's `type` may name any).
   */
  defsForIngest(repositoryId: string, tokenParser: string | null, kind: 'structured' | 'unstructured' | 'raw'): CustomParserDef[] | ParserSet {
    const ps = this.store.state.parsers;
    if (tokenParser !== null) {
      const p = ps.byName(repositoryId, tokenParser);
      return p === undefined ? [] : [defOf(p)];
    }
    if (kind !== 'unstructured') return [];
    const all = ps.list(repositoryId);
    return all.length === 0 ? [] : this.parserSet(repositoryId, all);
  }

  /**
   * The repository's parsers as one shared buffer, rebuilt only when the list changed (a save
   * stores a new StoredParser object, so comparing identities is enough).
   */
  private parserSet(repositoryId: string, parsers: readonly StoredParser[]): ParserSet {
    const hit = this.sets.get(repositoryId);
    if (hit !== undefined && hit.parsers.length === parsers.length && hit.parsers.every((p, i) => p === parsers[i])) return hit.set;
    const set = encodeParserSet(parsers.map(defOf));
    this.sets.set(repositoryId, { parsers, set });
    // Repositories whose parsers all went: nothing to keep.
    for (const id of this.sets.keys()) if (this.store.state.parsers.list(id).length === 0) this.sets.delete(id);
    return set;
  }

  get timeLimits(): ParserTimeLimits {
    return { maxRequestMs: this.limits.maxRequestMs };
  }
}
