/**
 * A function of a stored field's value asked once per dictionary entry of a block instead of once
 * per row (issue 21): a dictionary entry is one value, so its answer holds for every row that
 * holds it. Asked on the first row that holds the entry, in the rows' order, so what the function
 * throws (a value bound) comes at the same row as it would row by row. For replace() over a
 * dictionary-encoded field, any pattern and replacement.
 */
import { ColumnEvent, type BlockView } from './block-view.js';
import type { Ev } from './runtime.js';

type Dictionary = NonNullable<ReturnType<BlockView['dict']>>;

/** State a stage keeps per block of the unchanged rows it sees, made anew at each new block. */
export abstract class PerBlock {
  private view: BlockView | null = null;

  /** The block of `e` when it is an unchanged row of one (entered when it is a new one); else null. */
  protected blockOf(e: Ev): BlockView | null {
    if (!(e instanceof ColumnEvent)) return null;
    const view = e.storedView();
    if (view !== null && view !== this.view) {
      this.view = view;
      this.enter(view);
    }
    return view;
  }

  protected abstract enter(view: BlockView): void;
}

export class PerEntry extends PerBlock {
  private dict: Dictionary | null = null;
  private answers: (string | undefined)[] = [];

  private constructor(
    private readonly field: string,
    private readonly fn: (v: string) => string,
  ) {
    super();
  }

  /** For a stored field (built-ins and tags are not dictionary columns): null for others. */
  static of(field: string, fn: (v: string) => string): PerEntry | null {
    const c = field.charCodeAt(0);
    return c === 64 /* @ */ || c === 35 /* # */ ? null : new PerEntry(field, fn);
  }

  protected override enter(view: BlockView): void {
    this.dict = view.dict(this.field);
    this.answers = this.dict === null ? [] : new Array<string | undefined>(this.dict.d.length);
  }

  /** `fn` of row `e`'s value: a string, null (the row has none), or undefined (not an unchanged row of a dictionary column: the caller asks). */
  rowValue(e: Ev): string | null | undefined {
    const dict = this.blockOf(e) === null ? null : this.dict;
    if (dict === null) return undefined;
    const code = dict.codes[(e as ColumnEvent).rowIndex]!;
    if (code === dict.absent) return null;
    return (this.answers[code] ??= this.fn(dict.d[code]!));
  }
}
