/**
 * The query editor: CodeMirror 6's one home in the UI. The query language is highlighted by a
 * small stream tokenizer (functions, strings, regexes, fields, operators, comments, tags),
 * function and field names complete, and a query error from the node is marked at its position.
 */
import { EditorState, type Extension } from '@codemirror/state';
import { EditorView, keymap, placeholder as cmPlaceholder, lineNumbers } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { HighlightStyle, StreamLanguage, syntaxHighlighting, bracketMatching, type StringStream } from '@codemirror/language';
import { autocompletion, closeBrackets, completionKeymap, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { linter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { tags as t } from '@lezer/highlight';

interface TokState {
  inComment: boolean;
}

/** Past an opening `delim`, up to and including its unescaped closing one (or the line's end). */
function skipDelimited(stream: StringStream, delim: string): void {
  stream.next();
  let escaped = false;
  for (let c = stream.next(); c !== undefined; c = stream.next()) {
    if (c === delim && !escaped) break;
    escaped = !escaped && c === '\\';
  }
}

/** The query language's tokens, for highlighting only (the node parses for real). */
const queryLanguage = StreamLanguage.define<TokState>({
  name: 'logsvc-query',
  startState: () => ({ inComment: false }),
  token(stream: StringStream, state: TokState): string | null {
    if (state.inComment) {
      if (stream.skipTo('*/')) {
        stream.pos += 2;
        state.inComment = false;
      } else stream.skipToEnd();
      return 'comment';
    }
    if (stream.eatSpace()) return null;
    if (stream.match('//')) {
      stream.skipToEnd();
      return 'comment';
    }
    if (stream.match('/*')) {
      state.inComment = true;
      return 'comment';
    }
    const ch = stream.peek();
    if (ch === '"') {
      skipDelimited(stream, '"');
      return 'string';
    }
    if (ch === '/') {
      // A regex literal: /.../flags
      skipDelimited(stream, '/');
      stream.match(/^[a-zA-Z]*/);
      return 'regexp';
    }
    if (stream.match(/^#[\w.@-]+/)) return 'tagName';
    if (stream.match(/^[|]/)) return 'separator';
    if (stream.match(/^(:=|!=|<=|>=|==|=~|=|<|>|!|\*)/)) return 'operator';
    if (stream.match(/^[([\]){},]/)) return 'bracket';
    if (stream.match(/^-?\d+(\.\d+)?\b/)) return 'number';
    if (stream.match(/^(and|or|not|AND|OR|NOT)\b/)) return 'keyword';
    if (stream.match(/^[A-Za-z_][\w]*(:[A-Za-z_]\w*)?(?=\s*\()/)) return 'function';
    if (stream.match(/^@?[\w.[\]-]+(?=\s*(=|!=|<|>|:=|=~))/)) return 'propertyName';
    if (stream.match(/^@?[\w.-]+/)) return 'variableName';
    stream.next();
    return null;
  },
  tokenTable: { function: t.function(t.variableName), separator: t.separator, tagName: t.tagName },
});

const highlight = HighlightStyle.define([
  { tag: t.function(t.variableName), color: '#1d4ed8', fontWeight: '600' },
  { tag: t.string, color: '#047857' },
  { tag: t.regexp, color: '#b45309' },
  { tag: t.comment, color: '#6b7280', fontStyle: 'italic' },
  { tag: t.number, color: '#7c3aed' },
  { tag: t.keyword, color: '#be185d', fontWeight: '600' },
  { tag: t.operator, color: '#be185d' },
  { tag: t.separator, color: '#be185d', fontWeight: '700' },
  { tag: t.propertyName, color: '#0e7490' },
  { tag: t.tagName, color: '#9333ea' },
]);

export interface CompletionSource {
  functions: () => { name: string; params: string[] }[];
  fields: () => string[];
}

function complete(src: CompletionSource) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const word = ctx.matchBefore(/[@#]?[\w.:]*/);
    if (word === null || (word.from === word.to && !ctx.explicit)) return null;
    const before = ctx.state.sliceDoc(Math.max(0, word.from - 40), word.from);
    // After "|" or at the start: functions first; elsewhere fields and functions.
    const atStage = /(^|\|)\s*$/.test(before);
    const fns = src.functions().map((f) => ({ label: f.name, type: 'function', detail: `(${f.params.slice(0, 4).join(', ')}${f.params.length > 4 ? ', …' : ''})`, apply: `${f.name}(`, boost: atStage ? 2 : 0 }));
    const fields = src.fields().map((f) => ({ label: f, type: 'property', boost: atStage ? 0 : 1 }));
    return { from: word.from, options: [...fns, ...fields], validFor: /^[@#]?[\w.:]*$/ };
  };
}

export interface QueryEditor {
  readonly view: EditorView;
  text(): string;
  setText(text: string): void;
  /** Marks a query error (1-based line and column, `length` characters); null clears. */
  markError(e: { line: number; column: number; length: number; message: string } | null): void;
  destroy(): void;
}

export function createQueryEditor(parent: HTMLElement, opts: { doc: string; onRun: () => void; onChange?: (text: string) => void; completion: CompletionSource; placeholder?: string; minLines?: number }): QueryEditor {
  const extensions: Extension[] = [
    history(),
    closeBrackets(),
    bracketMatching(),
    queryLanguage,
    syntaxHighlighting(highlight),
    autocompletion({ override: [complete(opts.completion)], activateOnTyping: true }),
    linter(null),
    keymap.of([
      { key: 'Mod-Enter', run: () => (opts.onRun(), true) },
      { key: 'Shift-Enter', run: () => (opts.onRun(), true) },
      ...completionKeymap,
      ...historyKeymap,
      ...defaultKeymap,
    ]),
    EditorView.lineWrapping,
    EditorView.updateListener.of((u) => {
      if (u.docChanged) opts.onChange?.(u.state.doc.toString());
    }),
    EditorView.theme({
      '&': { fontSize: '13px', border: '1px solid var(--border)', borderRadius: '4px', background: 'var(--input-bg)' },
      '.cm-content': { fontFamily: 'var(--mono)', minHeight: `${(opts.minLines ?? 2) * 18}px` },
      '&.cm-focused': { outline: '2px solid var(--accent-soft)' },
    }),
  ];
  if (opts.placeholder !== undefined) extensions.push(cmPlaceholder(opts.placeholder));
  if ((opts.minLines ?? 2) > 3) extensions.push(lineNumbers());
  const view = new EditorView({ state: EditorState.create({ doc: opts.doc, extensions }), parent });
  return {
    view,
    text: () => view.state.doc.toString(),
    setText(text) {
      if (text === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    markError(e) {
      if (e === null) {
        view.dispatch(setDiagnostics(view.state, []));
        return;
      }
      const doc = view.state.doc;
      const line = doc.line(Math.min(Math.max(e.line, 1), doc.lines));
      const from = Math.min(line.from + Math.max(e.column - 1, 0), doc.length);
      const to = Math.min(Math.max(from + e.length, from + 1), doc.length);
      const d: Diagnostic = { from, to: Math.max(to, from), severity: 'error', message: e.message };
      view.dispatch(setDiagnostics(view.state, [d]));
    },
    destroy: () => view.destroy(),
  };
}

/** "... at line L, column C" and the caret block of a node query error: the position to mark. */
export function queryErrorPosition(message: string): { line: number; column: number; length: number; message: string } | null {
  const m = /at line (\d+), column (\d+)/.exec(message);
  if (m === null) return null;
  const carets = /\n\s*(\^+)\s*\n```/.exec(message);
  return { line: Number(m[1]), column: Number(m[2]), length: carets?.[1]?.length ?? 1, message: message.split('\n')[0] ?? message };
}
