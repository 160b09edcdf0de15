/**
 * Errors about a query's text (E_QUERY): a human message, the line and column of the offending
 * text, and a fenced block that shows the source line with carets under the span. The HTTP layer
 * sends `message` as the text/plain body of a 400, so the format is part of the interface:
 *
 *     Unknown function "cuont" at line 1, column 3
 *     ```
 *     | cuont()
 *       ^^^^^
 *     ```
 */

import { LogsvcError } from '../lib/errors.js';
import type { Span } from './ast.js';

/** A 1-based position in the query text; `column` counts UTF-16 code units, like `Span`. */
export interface LineColumn {
  line: number;
  column: number;
}

/** A LogsvcError about a query's text, carrying where it points for editors and the GraphQL API. */
export class QueryError extends LogsvcError {
  readonly span: Span;
  readonly line: number;
  readonly column: number;

  constructor(message: string, span: Span, at: LineColumn) {
    super('E_QUERY', message);
    this.span = span;
    this.line = at.line;
    this.column = at.column;
  }
}

/** The 1-based line and column of a UTF-16 offset (clamped into the text). */
export function lineColumn(text: string, offset: number): LineColumn {
  const at = clamp(offset, 0, text.length);
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: at - lineStart + 1 };
}

/** `<message> at line L, column C`, a newline, and the caret block pointing at `span`. */
export function queryError(text: string, span: Span, message: string): QueryError {
  const start = clamp(span.start, 0, text.length);
  const end = clamp(span.end, start, text.length);
  const at = lineColumn(text, start);
  return new QueryError(`${message} at line ${at.line}, column ${at.column}\n${caretBlock(text, start, end)}`, { start, end }, at);
}

/** Lines longer than this are shown as a window around the span, so a 64 KiB one-line query does not echo back whole. */
const MAX_SHOWN_LINE = 160;
/** How much of a long line to show before the span starts. */
const SHOWN_BEFORE = 60;

function caretBlock(text: string, start: number, end: number): string {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  let lineEnd = text.indexOf('\n', start);
  if (lineEnd === -1) lineEnd = text.length;
  if (lineEnd > lineStart && text.charCodeAt(lineEnd - 1) === 13) lineEnd--; // CRLF: drop the \r
  const caretEnd = Math.max(Math.min(end, lineEnd), start);

  let from = lineStart;
  let to = lineEnd;
  let head = '';
  let tail = '';
  if (lineEnd - lineStart > MAX_SHOWN_LINE) {
    from = Math.max(lineStart, start - SHOWN_BEFORE);
    to = Math.min(lineEnd, from + MAX_SHOWN_LINE);
    if (from > lineStart) head = '...';
    if (to < lineEnd) tail = '...';
  }
  const shown = head + text.slice(from, to) + tail;
  // Pad with the line's own tabs so the carets line up however the client renders tabs; count code
  // points, not UTF-16 units, so a character outside the BMP takes one column.
  let pad = ' '.repeat(head.length);
  for (const ch of text.slice(from, start)) pad += ch === '\t' ? '\t' : ' ';
  const carets = Math.max(1, [...text.slice(start, Math.min(caretEnd, to))].length);
  return '```\n' + shown + '\n' + pad + '^'.repeat(carets) + '\n```';
}

function clamp(n: number, lo: number, hi: number): number {
  return n < lo ? lo : n > hi ? hi : n;
}
