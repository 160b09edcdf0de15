/**
 * The parser of the query language (api-facts §4.1): query text -> Pipeline (ast.ts). Recursive
 * descent over the scanner (lexer.ts), which it asks for the token each position allows. It decides
 * syntax only; function names, parameters and what a value means are the compiler's.
 *
 * Bounds: the text is at most 64 KiB; parentheses, calls, arrays, blocks, lists and prefix operators
 * (`not`, `!`, unary `-`) nest at most 100 deep, checked before recursing, so no input can overflow
 * the stack. Sequences (stages, `a and b or c`, `1 + 2 + 3`, arguments, array items) are loops.
 * Every scanner consumes what it reads and lookahead is bounded per token, so parsing is linear.
 */

import type { Arg, BinaryOp, Call, CompareOp, Expr, Filter, MatchArm, Pipeline, Span, Stage, Value } from './ast.js';
import { lineColumn, queryError } from './errors.js';
import { Scanner, isFunctionName } from './lexer.js';

export const MAX_QUERY_BYTES = 64 * 1024;
export const MAX_QUERY_DEPTH = 100;
/**
 * Levels of the syntax tree: each nesting level and each operator of an and/or/comparison/arithmetic
 * chain is one (the compiler and the evaluator walk the tree recursively, so a chain of thousands
 * of terms overflowed the stack).
 */
export const MAX_QUERY_LEVELS = 3000;

/** Parses a query; throws a QueryError (E_QUERY) naming what was expected, what was found, and where. */
export function parseQuery(text: string): Pipeline {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_QUERY_BYTES) {
    throw queryError(text, { start: 0, end: 0 }, `The query is ${bytes} bytes long; the limit is ${MAX_QUERY_BYTES} bytes (64 KiB)`);
  }
  return new Parser(text).query();
}

const STAGE = 'a filter, a function call or an assignment';
/** `test(x = 5)`, `if(x = 5, then=..., else=...)`: the first argument is a condition, never `name=value`. */
const CONDITION_FIRST = /^(?:test|if)$/i;

interface Name {
  text: string;
  span: Span;
  bare: boolean;
}

class Parser {
  private readonly s: Scanner;
  private depth = 0;
  /** Tree levels above the term being parsed (MAX_QUERY_LEVELS). */
  private levels = 0;

  constructor(text: string) {
    this.s = new Scanner(text);
  }

  query(): Pipeline {
    const s = this.s;
    s.skipTrivia();
    if (s.atEnd()) {
      const span = { start: 0, end: s.text.length };
      return { stages: [{ kind: 'expr', expr: { k: 'all', span }, span }], span };
    }
    const pipeline = this.pipeline('at the start of the query', STAGE);
    if (!s.atEnd()) {
      const c = s.peek();
      if (c === ')' || c === ']' || c === '}') {
        const open = c === ')' ? '(' : c === ']' ? '[' : '{';
        s.fail({ start: s.pos, end: s.pos + 1 }, `Unexpected "${c}" without a matching "${open}"`);
      }
      this.stageEnd('"|" or the end of the query');
    }
    return pipeline;
  }

  // ---- pipelines and stages ----

  /** Stages separated by `|`; stops before the first token that does not continue it. */
  private pipeline(where: string, what: string): Pipeline {
    const s = this.s;
    const stages: Stage[] = [];
    let after = where;
    for (;;) {
      s.skipTrivia();
      stages.push(this.stage(after, what));
      s.skipTrivia();
      if (s.peek() !== '|') break;
      s.pos++;
      after = 'after "|"';
      what = STAGE;
    }
    const first = stages[0] as Stage;
    const last = stages[stages.length - 1] as Stage;
    return { stages, span: { start: first.span.start, end: last.span.end } };
  }

  private stage(where: string, what: string): Stage {
    const s = this.s;
    const start = s.pos;
    if (s.peek() === '[') return this.listStage();
    if (!this.atFilterTerm()) this.expected(`${what} ${where}`);

    // Stages that start with a name: `x := e`, `f =~ fn()`, `f match {`, `case {`.
    let name: Name | null = null;
    const c = s.peek();
    if (c === '`') {
      const q = s.scanBackquoted();
      name = { text: q.value, span: q.span, bare: false };
    } else if (c === '"') {
      const q = s.scanString();
      name = { text: q.value, span: q.span, bare: false };
    } else if (s.atWordStart()) {
      name = { ...s.scanWord(), bare: true };
    }
    if (name !== null) {
      s.skipTrivia();
      if (name.bare && name.text.toLowerCase() === 'case' && s.peek() === '{') return this.caseStage(start);
      if (s.startsWith(':=')) return this.assignStage(name);
      if (s.startsWith('=~')) return this.fieldOpStage(name);
      if (s.startsWith('<=>')) return this.linkStage(name);
      if (s.peekWord().toLowerCase() === 'match') {
        const before = s.pos;
        s.scanWord();
        s.skipTrivia();
        if (s.peek() === '{') return this.matchStage(name);
        s.pos = before;
      }
    }
    s.pos = start;
    const expr = this.filterSeq(where);
    return { kind: 'expr', expr, span: expr.span };
  }

  private assignStage(target: Name): Stage {
    const s = this.s;
    s.pos += 2;
    s.skipTrivia();
    const value = this.expr('after ":="');
    return { kind: 'assign', target: target.text, value, span: { start: target.span.start, end: value.span.end } };
  }

  private fieldOpStage(field: Name): Stage {
    const s = this.s;
    s.pos += 2;
    s.skipTrivia();
    // `f =~ !in(values=[...])` / `f =~ not in(...)`: the call negated as a filter.
    let negate = false;
    if (s.peek() === '!' && s.peek(1) !== '=') {
      negate = true;
      s.pos++;
      s.skipTrivia();
    } else if (s.peekWord().toLowerCase() === 'not') {
      negate = true;
      s.scanWord();
      s.skipTrivia();
    }
    const call = this.requireCall('after "=~"');
    const stage: Stage = { kind: 'fieldOp', field: field.text, call, span: { start: field.span.start, end: call.span.end } };
    if (negate) stage.negate = true;
    return stage;
  }

  /** `field <=> query.field` (a link of correlate()'s named subqueries), at the `<=>`. */
  private linkStage(field: Name): Stage {
    const s = this.s;
    s.pos += 3;
    s.skipTrivia();
    const start = s.pos;
    let query: string | null = null;
    let other: Name | null = null;
    if (s.atWordStart()) {
      const w = s.scanWord();
      const dot = w.text.indexOf('.');
      if (dot > 0 && dot < w.text.length - 1) {
        query = w.text.slice(0, dot);
        other = { text: w.text.slice(dot + 1), span: { start: w.span.start + dot + 1, end: w.span.end }, bare: true };
      } else if (dot === w.text.length - 1 && s.peek() === '`') {
        query = w.text.slice(0, dot);
        const q = s.scanBackquoted();
        other = { text: q.value, span: q.span, bare: false };
      }
    }
    if (query === null || other === null || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(query)) {
      s.pos = start;
      return this.expected('a field of another subquery, written query.field, after "<=>"');
    }
    return { kind: 'link', field: field.text, query, other: other.text, span: { start: field.span.start, end: other.span.end } };
  }

  /** `case { p1 ; p2 ; * | p3 }`, at the `{`. */
  private caseStage(start: number): Stage {
    const s = this.s;
    const open = s.pos;
    this.enter(open);
    s.pos++;
    const branches: Pipeline[] = [];
    for (;;) {
      s.skipTrivia();
      branches.push(this.pipeline(branches.length === 0 ? 'after "{"' : 'after ";"', 'a case branch (a filter, a function call or an assignment)'));
      if (this.endOfBranch(`"|", ";" or "}" to close the case opened at ${this.at(open)}`)) break;
    }
    this.leave();
    return { kind: 'case', branches, span: { start, end: s.pos } };
  }

  /** `field match { "v" => p ; /re/ => p ; * => p }`, at the word `match`. */
  private matchStage(field: Name): Stage {
    const s = this.s;
    s.scanWord();
    s.skipTrivia();
    const open = s.pos;
    this.enter(open);
    s.pos++;
    const arms: MatchArm[] = [];
    for (;;) {
      s.skipTrivia();
      arms.push(this.matchArm(arms.length === 0 ? 'after "{"' : 'after ";"'));
      if (this.endOfBranch(`"|", ";" or "}" to close the match opened at ${this.at(open)}`)) break;
    }
    this.leave();
    return { kind: 'match', field: field.text, arms, span: { start: field.span.start, end: s.pos } };
  }

  /** After a case branch or match arm: `;` continues (a `;` before `}` is allowed), `}` ends (consumed). */
  private endOfBranch(expected: string): boolean {
    const s = this.s;
    s.skipTrivia();
    if (s.peek() === ';') {
      s.pos++;
      s.skipTrivia();
      if (s.peek() !== '}') return false;
    }
    if (s.peek() !== '}') this.stageEnd(expected);
    s.pos++;
    return true;
  }

  private matchArm(where: string): MatchArm {
    const s = this.s;
    const start = s.pos;
    let pattern: MatchArm['pattern'];
    const c = s.peek();
    if (c === '"') {
      pattern = { k: 'str', v: s.scanString().value, quoted: true };
    } else if (c === '/') {
      const r = s.scanRegex();
      pattern = { k: 'regex', source: r.source, flags: r.flags };
    } else if (c === '?') {
      const p = s.scanParam();
      pattern = { k: 'param', name: p.name, default: p.default, span: p.span };
    } else if (s.atWordStart()) {
      const w = s.scanWord();
      s.skipTrivia();
      if (s.peek() === '(' && isFunctionName(w.text)) {
        // A filter function guard (`in(values=[1, 2])`) that receives the field.
        pattern = { k: 'call', call: this.callArgs(w.text, start) };
      } else {
        pattern = w.text === '*' || w.text.toLowerCase() === 'true' ? { k: 'any' } : { k: 'str', v: w.text, quoted: false };
      }
    } else {
      return this.expected(`a match pattern (a string, a regex or *) ${where}`);
    }
    s.skipTrivia();
    if (!s.startsWith('=>')) this.expected('"=>" after the match pattern');
    s.pos += 2;
    s.skipTrivia();
    const body = this.pipeline('after "=>"', 'a pipeline');
    return { pattern, body, span: { start, end: body.span.end } };
  }

  /** `[f1(), f2()]` as a stage. */
  private listStage(): Stage {
    const s = this.s;
    const open = s.pos;
    this.enter(open);
    s.pos++;
    const calls: Call[] = [];
    for (;;) {
      s.skipTrivia();
      calls.push(this.requireCall(calls.length === 0 ? 'after "["' : 'after ","'));
      s.skipTrivia();
      if (s.peek() === ',') {
        s.pos++;
        continue;
      }
      if (s.peek() === ']') break;
      this.expected(s.atEnd() ? `"]" to close the list opened at ${this.at(open)}` : `"," or "]" in the list opened at ${this.at(open)}`);
    }
    s.pos++;
    this.leave();
    return { kind: 'list', calls, span: { start: open, end: s.pos } };
  }

  /** The error for a token that cannot follow a stage. */
  private stageEnd(expected: string): never {
    const s = this.s;
    const span = { start: s.pos, end: s.pos + 2 };
    if (s.startsWith(':=')) s.fail(span, 'An assignment ":=" must start a pipeline stage; put "|" before its field name');
    if (s.startsWith('=~')) s.fail(span, 'The field operator "=~" must start a pipeline stage; put "|" before its field name');
    return this.expected(expected);
  }

  // ---- filters ----

  private atFilterTerm(): boolean {
    const s = this.s;
    const c = s.peek();
    if (c === '(' || c === '"' || c === '`' || c === '/' || c === '?') return true;
    if (c === '!') return s.peek(1) !== '=';
    return s.atWordStart();
  }

  /**
   * Terms joined by `and`, `or` or juxtaposition; `or` binds tighter than `and` (foldAndOr):
   * `a and not b or c` is and(a, or(not b, c)), `a or b c` is and(or(a, b), c).
   */
  private filterSeq(where: string): Filter {
    const s = this.s;
    const terms: Filter[] = [this.filterTerm(where)];
    const ops: ('and' | 'or')[] = [];
    for (;;) {
      s.skipTrivia();
      if (s.atWordStart()) {
        const before = s.pos;
        const w = s.scanWord();
        const op = w.text.toLowerCase();
        if (op === 'and' || op === 'or') {
          s.skipTrivia();
          this.deeper(before);
          ops.push(op);
          terms.push(this.filterTerm(`after "${w.text}"`));
          continue;
        }
        s.pos = before;
      }
      if (!this.atFilterTerm()) break;
      this.deeper(s.pos);
      ops.push('and');
      terms.push(this.filterTerm('here'));
    }
    this.levels -= ops.length;
    return foldAndOr(terms, ops);
  }

  private filterTerm(where: string): Filter {
    const s = this.s;
    const start = s.pos;
    const c = s.peek();
    if (c === '!' && s.peek(1) !== '=') {
      s.pos++;
      return this.notFilter(start, '!');
    }
    if (c === '(') return this.parenFilter();
    if (c === '"') {
      const q = s.scanString();
      return this.comparison(q.value, q.span) ?? { k: 'text', value: q.value, quoted: true, span: q.span };
    }
    if (c === '`') {
      const q = s.scanBackquoted();
      return this.comparison(q.value, q.span) ?? this.expected(`a comparison operator (=, !=, <, <=, >, >= or like) after the field name \`${q.value}\``);
    }
    if (c === '/') {
      const r = s.scanRegex();
      return { k: 'regex', source: r.source, flags: r.flags, span: r.span };
    }
    if (c === '?') {
      const p = s.scanParam();
      return { k: 'param', name: p.name, default: p.default, span: p.span };
    }
    if (c === '$' && s.peek(1) === '"') {
      const call = this.savedQueryCall();
      return { k: 'call', call, span: call.span };
    }
    if (!s.atWordStart()) return this.expected(`a filter ${where}`);

    const w = s.scanWord();
    const lower = w.text.toLowerCase();
    if (lower === 'not') return this.notFilter(start, w.text);
    if (lower === 'and' || lower === 'or') {
      s.pos = start;
      return this.expected(`a filter ${where}`);
    }
    if (w.text === '*') return { k: 'all', span: w.span };
    const end = s.pos;
    s.skipTrivia();
    if (s.peek() === '(' && (isFunctionName(w.text) || (w.text.startsWith('$') && isFunctionName(w.text.slice(1))))) {
      const call = this.callArgs(w.text, start);
      return { k: 'call', call, span: call.span };
    }
    if (lower === 'case' && s.peek() === '{') s.fail(w.span, '"case" must start a pipeline stage; put "|" before it');
    const cmp = this.comparison(w.text, w.span);
    if (cmp !== null) return cmp;
    s.pos = end;
    return { k: 'text', value: w.text, quoted: false, span: w.span };
  }

  /** After `not`/`!` (consumed): the negated term. */
  private notFilter(start: number, keyword: string): Filter {
    const s = this.s;
    this.enter(start);
    s.skipTrivia();
    const expr = this.filterTerm(`after "${keyword}"`);
    this.leave();
    return { k: 'not', expr, span: { start, end: expr.span.end } };
  }

  private parenFilter(): Filter {
    return this.parenthesized(() => this.filterSeq('after "("'));
  }

  /** `( inner )`: the inner node, its span widened to the parentheses. */
  private parenthesized<T extends { span: Span }>(inner: () => T): T {
    const s = this.s;
    const open = s.pos;
    this.enter(open);
    s.pos++;
    s.skipTrivia();
    const node = inner();
    s.skipTrivia();
    if (s.peek() !== ')') this.expected(`")" to close the "(" opened at ${this.at(open)}`);
    s.pos++;
    this.leave();
    return { ...node, span: { start: open, end: s.pos } };
  }

  /** `field op value` when a comparison operator follows the name; null (nothing consumed) otherwise. */
  private comparison(field: string, fieldSpan: Span): Filter | null {
    const s = this.s;
    const before = s.pos;
    s.skipTrivia();
    const op = this.compareOp();
    if (op === null) {
      s.pos = before;
      return null;
    }
    s.pos += op.text.length;
    s.skipTrivia();
    const value = this.compareValue(`after "${op.text}"`);
    return { k: 'compare', field, op: op.op, value, span: { start: fieldSpan.start, end: value.span.end } };
  }

  private compareOp(): { op: CompareOp; text: string } | null {
    const s = this.s;
    const c = s.peek();
    const n = s.peek(1);
    if (c === '!' && n === '=') return { op: '!=', text: '!=' };
    if (c === '<' && n === '=' && s.peek(2) === '>') {
      s.fail({ start: s.pos, end: s.pos + 3 }, 'The link "<=>" is a step of its own: write "| field <=> query.field" inside a named subquery of correlate()');
    }
    if (c === '<') return n === '=' ? { op: '<=', text: '<=' } : { op: '<', text: '<' };
    if (c === '>') return n === '=' ? { op: '>=', text: '>=' } : { op: '>', text: '>' };
    if (c === '=') {
      if (n === '=') return { op: '=', text: '==' };
      return n === '~' || n === '>' ? null : { op: '=', text: '=' };
    }
    if (c === 'l' || c === 'L') {
      const w = s.peekWord();
      if (w.toLowerCase() === 'like') return { op: 'like', text: w };
    }
    return null;
  }

  private compareValue(where: string): Value {
    const s = this.s;
    const c = s.peek();
    if (c === '"') {
      const q = s.scanString();
      return { k: 'str', v: q.value, quoted: true, span: q.span };
    }
    if (c === '/') {
      const r = s.scanRegex();
      return { k: 'regex', source: r.source, flags: r.flags, span: r.span };
    }
    if (c === '?') {
      const p = s.scanParam();
      return { k: 'param', name: p.name, default: p.default, span: p.span };
    }
    if (s.atWordStart()) {
      const w = s.scanWord();
      return { k: 'str', v: w.text, quoted: false, span: w.span };
    }
    return this.expected(`a value ${where}`);
  }

  // ---- calls ----

  /** A call where nothing else is allowed (`=~`, `[ ]` lists). */
  private requireCall(where: string): Call {
    const s = this.s;
    const start = s.pos;
    if (s.peek() === '$') return this.savedQueryCall();
    if (s.atIdentStart()) {
      const id = s.scanIdent();
      s.skipTrivia();
      if (s.peek() === '(' && isFunctionName(id.text)) return this.callArgs(id.text, start);
    }
    s.pos = start;
    return this.expected(`a function call ${where}`);
  }

  /** `$name(...)` or `$"Saved query"(...)`: the call is named `$` + the saved query's name. */
  private savedQueryCall(): Call {
    const s = this.s;
    const start = s.pos;
    s.pos++;
    let name: string;
    if (s.peek() === '"') name = s.scanString().value;
    else if (s.atIdentStart()) name = s.scanIdent().text;
    else return this.expected('a saved query name after "$"');
    s.skipTrivia();
    if (s.peek() !== '(') this.expected(`"(" after the saved query name $${name}`);
    return this.callArgs('$' + name, start);
  }

  /** At the `(` of a call of `name` that started at `start`. */
  private callArgs(name: string, start: number): Call {
    const s = this.s;
    this.enter(s.pos);
    s.pos++;
    const args: Arg[] = [];
    s.skipTrivia();
    if (s.peek() !== ')') {
      const conditionFirst = CONDITION_FIRST.test(name);
      for (;;) {
        const arg = this.arg(args.length === 0 ? `as an argument of ${name}` : 'after ","', args.length === 0 && conditionFirst);
        if (arg.name === null && args.length > 0) s.fail(arg.span, `Only the first argument of ${name} can be unnamed; write this one as name=value`);
        args.push(arg);
        s.skipTrivia();
        if (s.peek() === ',') {
          s.pos++;
          s.skipTrivia();
          continue;
        }
        if (s.peek() === ')') break;
        this.expected(s.atEnd() ? `")" to close the call of ${name}` : `"," or ")" after an argument of ${name}`);
      }
    }
    s.pos++;
    this.leave();
    return { name, args, span: { start, end: s.pos } };
  }

  private arg(where: string, conditionOnly: boolean): Arg {
    const start = this.s.pos;
    const sub = conditionOnly ? null : this.subqueryArg();
    if (sub !== null) return sub;
    const name = conditionOnly ? null : this.argName();
    if (name !== null) {
      this.s.skipTrivia();
      const value = this.expr(`after "${name}="`);
      return { name, value, span: { start, end: value.span.end } };
    }
    const value = this.expr(where);
    return { name: null, value, span: value.span };
  }

  /**
   * `name: { pipeline } include: [fields]` (correlate()'s named subqueries, query-functions.md §2.12)
   * at pos; else null with nothing consumed. `include:` is optional.
   */
  private subqueryArg(): Arg | null {
    const s = this.s;
    const start = s.pos;
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.text.slice(start, start + 256));
    if (m === null) return null;
    s.pos = start + m[0].length;
    s.skipTrivia();
    if (s.peek() !== ':' || s.peek(1) === '=') {
      s.pos = start;
      return null;
    }
    s.pos++;
    s.skipTrivia();
    if (s.peek() !== '{') {
      s.pos = start;
      return null;
    }
    const value = this.blockExpr();
    let end = value.span.end;
    const arg: Arg = { name: m[0], value, span: { start, end }, subquery: { include: null } };
    const after = s.pos;
    s.skipTrivia();
    if (/^include\s*:(?!=)/i.test(s.text.slice(s.pos, s.pos + 64))) {
      s.pos = s.text.indexOf(':', s.pos) + 1;
      s.skipTrivia();
      const include = this.expr('after "include:"');
      end = include.span.end;
      arg.subquery = { include };
      arg.span = { start, end };
    } else s.pos = after;
    return arg;
  }

  /** `name =` (not `==`, `=~`, `=>`) at pos: consumes through `=` and returns the name; else null, nothing consumed. */
  private argName(): string | null {
    const s = this.s;
    const start = s.pos;
    let i = start;
    const text = s.text;
    if (!/[A-Za-z_]/.test(text.charAt(i))) return null;
    while (/[A-Za-z0-9_]/.test(text.charAt(i))) i++;
    s.pos = i;
    s.skipTrivia();
    const n = s.peek(1);
    if (s.peek() === '=' && n !== '=' && n !== '~' && n !== '>') {
      s.pos++;
      return text.slice(start, i);
    }
    s.pos = start;
    return null;
  }

  // ---- expressions ----

  private expr(where: string): Expr {
    return this.exprOr(where);
  }

  private exprOr(where: string): Expr {
    let left = this.exprAnd(where);
    const base = this.levels;
    for (let kw = this.keywordAfter('or'); kw !== null; kw = this.keywordAfter('or')) {
      this.deeper(left.span.start);
      left = binary('or', left, this.exprAnd(`after "${kw}"`));
    }
    this.levels = base;
    return left;
  }

  private exprAnd(where: string): Expr {
    let left = this.exprCompare(where);
    const base = this.levels;
    for (let kw = this.keywordAfter('and'); kw !== null; kw = this.keywordAfter('and')) {
      this.deeper(left.span.start);
      left = binary('and', left, this.exprCompare(`after "${kw}"`));
    }
    this.levels = base;
    return left;
  }

  /** Skips trivia; when the keyword (any case) is next, consumes it and the trivia after it and returns it as written. */
  private keywordAfter(keyword: string): string | null {
    const s = this.s;
    s.skipTrivia();
    if (!s.atIdentStart()) return null;
    const before = s.pos;
    const id = s.scanIdent();
    if (id.text.toLowerCase() !== keyword) {
      s.pos = before;
      return null;
    }
    s.skipTrivia();
    return id.text;
  }

  private exprCompare(where: string): Expr {
    const s = this.s;
    let left = this.exprAdd(where);
    const base = this.levels;
    for (;;) {
      s.skipTrivia();
      const c = s.peek();
      const n = s.peek(1);
      let op: BinaryOp | null = null;
      if (c === '=') op = n === '=' ? '==' : n === '~' || n === '>' ? null : '=='; // `=` compares in expressions
      else if (c === '!' && n === '=') op = '!=';
      else if (c === '<') op = n === '=' ? '<=' : '<';
      else if (c === '>') op = n === '=' ? '>=' : '>';
      const len = (c === '=' || c === '!' || c === '<' || c === '>') && n === '=' ? 2 : 1;
      if (op === null) {
        this.levels = base;
        return left;
      }
      this.deeper(s.pos);
      const written = s.text.slice(s.pos, s.pos + len);
      s.pos += len;
      s.skipTrivia();
      left = binary(op, left, this.exprAdd(`after "${written}"`));
    }
  }

  private exprAdd(where: string): Expr {
    return this.exprLevel(where, '+-', (w) => this.exprMul(w));
  }

  private exprMul(where: string): Expr {
    // skipTrivia consumes `//` and `/*` comments, so a `/` left here divides
    return this.exprLevel(where, '*/%', (w) => this.exprUnary(w));
  }

  /** One left-associative level of one-character operators `ops` over operands parsed by `next`. */
  private exprLevel(where: string, ops: string, next: (where: string) => Expr): Expr {
    const s = this.s;
    let left = next(where);
    const base = this.levels;
    for (;;) {
      s.skipTrivia();
      const c = s.peek();
      if (c === '' || !ops.includes(c)) {
        this.levels = base;
        return left;
      }
      this.deeper(s.pos);
      s.pos++;
      s.skipTrivia();
      left = binary(c as BinaryOp, left, next(`after "${c}"`));
    }
  }

  private exprUnary(where: string): Expr {
    const s = this.s;
    const start = s.pos;
    const c = s.peek();
    let op: '-' | '!' | 'not' | null = null;
    if (c === '-' || (c === '!' && s.peek(1) !== '=')) {
      op = c;
      s.pos++;
    } else if (s.atIdentStart()) {
      const id = s.scanIdent();
      if (id.text.toLowerCase() === 'not') op = 'not';
      else s.pos = start;
    }
    if (op === null) return this.primary(where);
    const written = s.text.slice(start, s.pos);
    this.enter(start);
    s.skipTrivia();
    const expr = this.exprUnary(`after "${written}"`);
    this.leave();
    return { k: 'unary', op, expr, span: { start, end: expr.span.end } };
  }

  private primary(where: string): Expr {
    const s = this.s;
    const start = s.pos;
    switch (s.peek()) {
      case '"': {
        const q = s.scanString();
        return { k: 'str', v: q.value, span: q.span };
      }
      case '`': {
        const q = s.scanBackquoted();
        return { k: 'ident', name: q.value, span: q.span };
      }
      case '/': {
        const r = s.scanRegex();
        return { k: 'regex', source: r.source, flags: r.flags, span: r.span };
      }
      case '?': {
        const p = s.scanParam();
        return { k: 'param', name: p.name, default: p.default, span: p.span };
      }
      case '(':
        return this.parenExpr();
      case '[':
        return this.arrayExpr();
      case '{':
        return this.blockExpr();
      case '$': {
        const call = this.savedQueryCall();
        return { k: 'call', call, span: call.span };
      }
      case '*': {
        // A wildcard pattern such as `values=[*foo*]`: only where it cannot be a multiplication.
        const glob = this.globTail(start);
        if (glob !== null) return glob;
        return this.expected(`an expression ${where}`);
      }
    }
    const code = s.code();
    if (code >= 48 && code <= 57) {
      const t = s.scanNumberOrWord();
      const glob = this.globTail(start);
      if (glob !== null) return glob;
      return t.k === 'num' ? t : { k: 'ident', name: t.text, span: t.span };
    }
    if (s.atIdentStart()) {
      const id = s.scanIdent();
      const end = s.pos;
      s.skipTrivia();
      if (s.peek() === '(') {
        if (!isFunctionName(id.text)) s.fail(id.span, `"${id.text}" is not a valid function name`);
        const call = this.callArgs(id.text, start);
        return { k: 'call', call, span: call.span };
      }
      s.pos = end;
      return this.globTail(start) ?? { k: 'ident', name: id.text, span: id.span };
    }
    return this.expected(`an expression ${where}`);
  }

  /**
   * `foo*`, `3*`, `*` or `*foo*` as an array item or argument: stars directly after a word (or a
   * word made of stars and name characters, at an operand) followed by `,`, `)`, `]` or an end are
   * a wildcard pattern, an `ident` whose name is the pattern. Anything else is left for `*` to multiply.
   */
  private globTail(start: number): Expr | null {
    const s = this.s;
    const text = s.text;
    let i = s.pos;
    if (text.charAt(i) !== '*') return null;
    if (i === start) {
      while (/[*A-Za-z0-9_.@#:-]/.test(text.charAt(i))) i++;
    } else {
      while (text.charAt(i) === '*') i++;
    }
    let j = i;
    while (/\s/.test(text.charAt(j))) j++;
    if (j < text.length && !',)]}|;'.includes(text.charAt(j))) return null;
    s.pos = i;
    return { k: 'ident', name: text.slice(start, i), span: { start, end: i } };
  }

  private parenExpr(): Expr {
    return this.parenthesized(() => this.expr('after "("'));
  }

  private arrayExpr(): Expr {
    const s = this.s;
    const open = s.pos;
    this.enter(open);
    s.pos++;
    s.skipTrivia();
    const items: Expr[] = [];
    if (s.peek() !== ']') {
      for (;;) {
        items.push(this.expr(items.length === 0 ? 'after "["' : 'after ","'));
        s.skipTrivia();
        if (s.peek() === ',') {
          s.pos++;
          s.skipTrivia();
          continue;
        }
        if (s.peek() === ']') break;
        this.expected(s.atEnd() ? `"]" to close the array opened at ${this.at(open)}` : `"," or "]" in the array opened at ${this.at(open)}`);
      }
    }
    s.pos++;
    this.leave();
    return { k: 'array', items, span: { start: open, end: s.pos } };
  }

  private blockExpr(): Expr {
    const s = this.s;
    const open = s.pos;
    this.enter(open);
    s.pos++;
    s.skipTrivia();
    const pipeline = this.pipeline('after "{"', STAGE);
    s.skipTrivia();
    if (s.peek() !== '}') this.stageEnd(`"|" or "}" to close the block opened at ${this.at(open)}`);
    s.pos++;
    this.leave();
    return { k: 'block', pipeline, span: { start: open, end: s.pos } };
  }

  // ---- helpers ----

  private enter(at: number): void {
    if (++this.depth > MAX_QUERY_DEPTH) {
      this.s.fail({ start: at, end: at + 1 }, `The query nests more than ${MAX_QUERY_DEPTH} levels`);
    }
    this.deeper(at);
  }

  private leave(): void {
    this.depth--;
    this.levels--;
  }

  /** One more tree level (an operator of a chain, or a nesting level). */
  private deeper(at: number): void {
    if (++this.levels > MAX_QUERY_LEVELS) {
      this.s.fail({ start: at, end: at + 1 }, `The query has more than ${MAX_QUERY_LEVELS} levels of operators and nesting (each and/or/comparison/arithmetic operator of a chain counts as one); use in(), a lookup file with match(), or fewer terms`);
    }
  }

  private at(offset: number): string {
    const lc = lineColumn(this.s.text, offset);
    return `line ${lc.line}, column ${lc.column}`;
  }

  /** Fails with "Expected <what>, found <token at pos>" (or "Unexpected character" for a stray one). */
  private expected(what: string): never {
    const d = this.s.describe();
    if (d.unknown) this.s.fail(d.span, `Unexpected character ${d.found}`);
    const hint = d.found.startsWith(`"'`) ? ' (strings are written in double quotes)' : '';
    return this.s.fail(d.span, `Expected ${what}, found ${d.found}${hint}`);
  }
}

/**
 * Terms joined by `and`/`or` (juxtaposition is `and`) into a tree where `or` binds tighter than
 * `and` (query-functions.md §2.6): `a and not b or c` is and(a, or(not b, c)); `a or b and c` is
 * and(or(a, b), c). Runs of `or` become right-nested or-nodes; the runs are and-ed, right-nested.
 * A loop, no recursion.
 */
export function foldAndOr(terms: readonly Filter[], ops: readonly ('and' | 'or')[]): Filter {
  const groups: Filter[] = [];
  let i = terms.length - 1;
  while (i >= 0) {
    let right = terms[i] as Filter;
    while (i > 0 && ops[i - 1] === 'or') {
      const left = terms[i - 1] as Filter;
      right = { k: 'or', left, right, span: { start: left.span.start, end: right.span.end } };
      i--;
    }
    groups.push(right);
    i--;
  }
  let acc = groups[0] as Filter;
  for (let g = 1; g < groups.length; g++) {
    const left = groups[g] as Filter;
    acc = { k: 'and', left, right: acc, span: { start: left.span.start, end: acc.span.end } };
  }
  return acc;
}

function binary(op: BinaryOp, left: Expr, right: Expr): Expr {
  return { k: 'binary', op, left, right, span: { start: left.span.start, end: right.span.end } };
}
