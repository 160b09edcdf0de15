/**
 * A cursor over one log line, for the hand-written accesslog and syslog scanners. Each method
 * consumes what it matched or nothing and never moves backwards; a caller may rewind to a position
 * it saved, a fixed number of times per line. That is what keeps those parsers linear where an
 * equivalent regex could backtrack.
 *
 * The line ends before any trailing whitespace (its newline).
 */
import { isWhitespace } from './chars.js';

export class LineCursor {
  pos: number;
  readonly end: number;

  constructor(readonly text: string) {
    let end = text.length;
    while (end > 0 && isWhitespace(text.charCodeAt(end - 1))) end--;
    this.end = end;
    this.pos = 0;
  }

  atEnd(): boolean {
    return this.pos >= this.end;
  }

  peek(): number {
    return this.pos < this.end ? this.text.charCodeAt(this.pos) : -1;
  }

  /** Consumes `c` if it is next. */
  eat(c: number): boolean {
    if (this.peek() !== c) return false;
    this.pos++;
    return true;
  }

  /** Consumes a run of spaces and tabs; false when there was none. */
  spaces(): boolean {
    const start = this.pos;
    while (this.pos < this.end) {
      const c = this.text.charCodeAt(this.pos);
      if (c !== 32 && c !== 9) break;
      this.pos++;
    }
    return this.pos > start;
  }

  /** Consumes a non-empty run of non-whitespace characters; null when there is none. */
  token(): string | null {
    const start = this.pos;
    while (this.pos < this.end && !isWhitespace(this.text.charCodeAt(this.pos))) this.pos++;
    return this.pos > start ? this.text.slice(start, this.pos) : null;
  }

  /**
   * Consumes `"…"` where a backslash escapes the next character, returning the content as written
   * (escapes not undone); null, consuming nothing, when there is no complete quoted string here.
   */
  quoted(): string | null {
    if (this.peek() !== 34 /* " */) return null;
    for (let i = this.pos + 1; i < this.end; i++) {
      const c = this.text.charCodeAt(i);
      if (c === 92 /* \ */) i++;
      else if (c === 34) {
        const content = this.text.slice(this.pos + 1, i);
        this.pos = i + 1;
        return content;
      }
    }
    return null;
  }

  /** The rest of the line from the cursor, consumed. */
  rest(): string {
    const s = this.text.slice(this.pos, this.end);
    this.pos = this.end;
    return s;
  }
}
