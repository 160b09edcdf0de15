/**
 * Expressions (`x := a * 2 + 1`, `test(a > b)`, `if(...)`) compiled into per-event value functions.
 * Values are untyped strings read in context (api-facts §4.1): arithmetic parses numbers and prints
 * the result as the product does; comparisons are numeric when both sides are numbers, textual
 * `<`, `<=`, `>`, `>=` are numeric only (a non-number is null), `==`/`!=` compare numbers as numbers
 * and anything else as text; they give "true"/"false". A missing field or a non-number gives no
 * value (undefined); an assignment with no value assigns nothing and keeps the event
 * (query-functions.md §2.4, §2.5).
 */
import type { BinaryOp, Call, Expr, Span } from './ast.js';
import type { Ev } from './runtime.js';
import { formatNumber, parseNumber, truthy } from './values.js';

export type ValueFn = (e: Ev) => string | undefined;

export interface ExprHooks {
  fail(span: Span, message: string): never;
  /** A function call inside an expression. */
  call(call: Call): ValueFn;
}

function arith(op: BinaryOp, a: number, b: number): number | undefined {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0 ? undefined : a / b;
    case '%':
      return b === 0 ? undefined : a % b;
    default:
      return undefined;
  }
}

/** -1, 0, 1: numeric when both are numbers, else by UTF-16 code units. */
function compareValues(a: string, b: string): number {
  const x = parseNumber(a);
  const y = parseNumber(b);
  if (x !== undefined && y !== undefined) return x < y ? -1 : x > y ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

const TRUE = 'true';
const FALSE = 'false';

export function compileExpr(e: Expr, hooks: ExprHooks): ValueFn {
  switch (e.k) {
    case 'str': {
      const v = e.v;
      return () => v;
    }
    case 'num': {
      const v = e.text;
      return () => v;
    }
    case 'ident': {
      const name = e.name;
      if (name === 'true' || name === 'false') return () => name;
      return (ev) => ev.get(name);
    }
    case 'regex':
      return hooks.fail(e.span, 'a regex cannot be used as a value here');
    case 'array':
      return hooks.fail(e.span, 'an array cannot be used as a value here');
    case 'block':
      return hooks.fail(e.span, 'a subquery cannot be used as a value here');
    case 'param':
      return hooks.fail(e.span, `query parameter ${e.name} was not substituted`);
    case 'call':
      return hooks.call(e.call);
    case 'unary': {
      const inner = compileExpr(e.expr, hooks);
      if (e.op === '-') {
        return (ev) => {
          const n = parseNumber(inner(ev));
          return n === undefined ? undefined : formatNumber(-n);
        };
      }
      // `!` negates booleans and numbers (`!0` is true); no value stays no value.
      return (ev) => {
        const v = inner(ev);
        if (v === undefined) return undefined;
        return truthy(v) ? FALSE : TRUE;
      };
    }
    case 'binary': {
      const l = compileExpr(e.left, hooks);
      const r = compileExpr(e.right, hooks);
      const op = e.op;
      switch (op) {
        case 'and':
          return (ev) => (truthy(l(ev)) && truthy(r(ev)) ? TRUE : FALSE);
        case 'or':
          return (ev) => (truthy(l(ev)) || truthy(r(ev)) ? TRUE : FALSE);
        case '==':
        case '!=': {
          const want = op === '==';
          return (ev) => {
            const a = l(ev);
            const b = r(ev);
            // A missing side is no value (null): test() drops the event, := assigns nothing.
            if (a === undefined || b === undefined) return undefined;
            return (compareValues(a, b) === 0) === want ? TRUE : FALSE;
          };
        }
        case '<':
        case '<=':
        case '>':
        case '>=':
          // Orderings are numeric only; a non-number or a missing side is null (query-functions.md §2.4).
          return (ev) => {
            const x = parseNumber(l(ev));
            if (x === undefined) return undefined;
            const y = parseNumber(r(ev));
            if (y === undefined) return undefined;
            const ok = op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
            return ok ? TRUE : FALSE;
          };
        default:
          return (ev) => {
            const a = parseNumber(l(ev));
            if (a === undefined) return undefined;
            const b = parseNumber(r(ev));
            if (b === undefined) return undefined;
            const n = arith(op, a, b);
            return n === undefined || !Number.isFinite(n) ? undefined : formatNumber(n);
          };
      }
    }
  }
}
