/**
 * The syntax tree of the query language (api-facts §4.1): what the parser produces and the compiler
 * consumes. It records syntax only — which words are field names, which function parameters exist,
 * what a value means — is decided by the compiler. Every node carries its source span, so errors
 * can point at the text.
 */

/** A source span: UTF-16 offsets into the query text, `end` exclusive. */
export interface Span {
  start: number;
  end: number;
}

/** `a | b | c`. */
export interface Pipeline {
  stages: Stage[];
  span: Span;
}

export type Stage =
  /** A filter expression, or a single function call such as `groupBy(x)` or `regex("...")`. */
  | { kind: 'expr'; expr: Filter; span: Span }
  /** `x := expr`; with a call on the right (`x := min(y)`) the call gets `as=x`. */
  | { kind: 'assign'; target: string; value: Expr; span: Span }
  /** `field =~ fn(...)`: the call gets `field=field`. */
  | { kind: 'fieldOp'; field: string; call: Call; span: Span; negate?: boolean }
  /** `case { p1 ; p2 ; * | p3 }`: the first branch that emits the event wins. */
  | { kind: 'case'; branches: Pipeline[]; span: Span }
  /** `field match { "v" => p ; /re/ => p ; * => p }`. */
  | { kind: 'match'; field: string; arms: MatchArm[]; span: Span }
  /** `field <=> query.other`: inside a named subquery of correlate(), links its events to `query`'s by equal values. */
  | { kind: 'link'; field: string; query: string; other: string; span: Span }
  /** `[f1(), f2()]`: shorthand for `stats([f1(), f2()])`. */
  | { kind: 'list'; calls: Call[]; span: Span };

export interface MatchArm {
  /** `*` matches anything; a string is an exact (or `*`-wildcard) match; a regex a regex match. */
  pattern:
    | { k: 'any' }
    | { k: 'str'; v: string; quoted: boolean }
    | { k: 'regex'; source: string; flags: string }
    /** `?param` (substituted into a `str` before compiling). */
    | { k: 'param'; name: string; default: string | null; span: Span }
    /** A filter function guard, called with `field=` the matched field. */
    | { k: 'call'; call: Call };
  body: Pipeline;
  span: Span;
}

/**
 * Filter expressions. Precedence (query-functions.md §2.6): `not`/`!` binds tightest, then `or`,
 * then `and` (juxtaposition is an implicit `and`): `foo or not bar and baz` is
 * `and(or(foo, not(bar)), baz)`.
 */
export type Filter =
  | { k: 'and' | 'or'; left: Filter; right: Filter; span: Span }
  | { k: 'not'; expr: Filter; span: Span }
  /** `*` alone: every event. */
  | { k: 'all'; span: Span }
  /** Free text: a bare word or a quoted string, matched unanchored (case-insensitively) against @rawstring and the stored fields; `*` is a wildcard, quoted or not. */
  | { k: 'text'; value: string; quoted: boolean; span: Span }
  /** Free-text regex `/re/flags` against @rawstring. */
  | { k: 'regex'; source: string; flags: string; span: Span }
  /** `field op value`. `field` is the text left of the operator (quoted or backquoted names allowed); tags keep their `#`. */
  | { k: 'compare'; field: string; op: CompareOp; value: Value; span: Span }
  /** A function call used as a filter or as a stage (`in(...)`, `groupBy(...)`, `!cidr(...)`). */
  | { k: 'call'; call: Call; span: Span }
  /** `?param` or `?{param=default}` standing alone (its value is parsed as free text). */
  | { k: 'param'; name: string; default: string | null; span: Span };

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=' | 'like';

/** The right-hand side of a field comparison. */
export type Value =
  /** Bare word or quoted string; `*` in it is a wildcard; `*` alone means "field present". */
  | { k: 'str'; v: string; quoted: boolean; span: Span }
  | { k: 'regex'; source: string; flags: string; span: Span }
  | { k: 'param'; name: string; default: string | null; span: Span };

/** Expressions: function arguments, `:=` right-hand sides, `test(...)`, `if(...)`. */
export type Expr =
  /** A quoted string literal. */
  | { k: 'str'; v: string; span: Span }
  | { k: 'num'; v: number; text: string; span: Span }
  /**
   * A bare name (`status`, `@timestamp`, `#type`, `a.b[0]`) or a backquoted one. In a value
   * position it reads the field; where a parameter takes a name, the compiler uses the text.
   */
  | { k: 'ident'; name: string; span: Span }
  | { k: 'regex'; source: string; flags: string; span: Span }
  | { k: 'binary'; op: BinaryOp; left: Expr; right: Expr; span: Span }
  | { k: 'unary'; op: '-' | '!' | 'not'; expr: Expr; span: Span }
  | { k: 'call'; call: Call; span: Span }
  /** `[a, b, c]`: array arguments such as `groupBy([a, b])` or `percentiles=[50, 99]`. */
  | { k: 'array'; items: Expr[]; span: Span }
  /** `{ pipeline }`: a subquery argument, e.g. `function={ count() | ... }`. */
  | { k: 'block'; pipeline: Pipeline; span: Span }
  | { k: 'param'; name: string; default: string | null; span: Span };

/**
 * Operators in expressions, loosest first: `or`; `and`; `==`/`!=`/`<`/`<=`/`>`/`>=` (also `=` as a
 * comparison); `+`/`-`; `*`/`/`/`%`; then unary `-`/`!`/`not`. Left-associative.
 */
export type BinaryOp = 'or' | 'and' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%';

export interface Call {
  /** The function name as written (matching is case-insensitive in the compiler). */
  name: string;
  args: Arg[];
  /** `!fn(...)` / `not fn(...)` is a `not` filter around the call; this is only the call. */
  span: Span;
}

export interface Arg {
  /** null for the unnamed (first) argument. */
  name: string | null;
  value: Expr;
  span: Span;
  /** `name: { ... } include: [...]`: a named subquery (correlate()); `value` is the block. */
  subquery?: { include: Expr | null };
}
