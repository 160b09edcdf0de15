/**
 * A parser's output fields with the per-event field limit applied. Every parser writes through one
 * of these so the limit is counted the same way everywhere: creating a field counts, replacing one
 * does not, and the first field refused marks the sink full.
 */
import { MAX_FIELD_NAME_CHARS } from '../limits.js';

export class FieldSink {
  readonly fields: Record<string, string> = {};
  private count = 0;
  /** True once a field was refused because the limit was reached. */
  full = false;

  constructor(private readonly max: number) {}

  /**
   * Sets a field unless that would exceed the limit; returns false when refused. A name longer than
   * MAX_FIELD_NAME_CHARS is not stored (and counts as nothing).
   */
  set(name: string, value: string): boolean {
    if (name.length > MAX_FIELD_NAME_CHARS) return true;
    if (!Object.hasOwn(this.fields, name)) {
      if (this.count >= this.max) {
        this.full = true;
        return false;
      }
      this.count++;
    }
    // A key named "__proto__" would otherwise hit the prototype setter and vanish.
    if (name === '__proto__') {
      Object.defineProperty(this.fields, name, { value, enumerable: true, writable: true, configurable: true });
    } else {
      this.fields[name] = value;
    }
    return true;
  }

  /** Like `set`, but leaves an existing field alone (returns true: nothing was refused). */
  setIfAbsent(name: string, value: string): boolean {
    return Object.hasOwn(this.fields, name) || this.set(name, value);
  }
}
