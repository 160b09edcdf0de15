/**
 * The native block builder (native/block_builder.cc): the one importer of that module, and the
 * reason it may be missing. `npm run build` compiles it to dist/native/block_builder.node with the
 * machine's C++ compiler and Node's own headers (native/build.mjs); where that failed, or with
 * LOGSVC_NATIVE=off in the environment, `nativeBlockBuilder` is null and blocks are built in
 * JavaScript (src/digest/block-parts.ts), which is also the builder of every block the native one
 * declines (see the top of block_builder.cc). Both make the same bytes
 * (test/unit/digest/native-block.test.ts).
 */
import { loadNative } from '../lib/native-module.js';
import type { BlockContent } from '../segments/block.js';
import { lowerTable } from '../segments/bloom.js';
import type { BlockPart } from './block-parts.js';

/** The module's own interface. */
interface NativeModule {
  build(parts: readonly BlockPart[]): BlockContent | null;
  /** JavaScript's lower-casing of every UTF-16 unit (bloom.ts `lowerTable`); until given, non-ASCII text is declined. */
  setLower(table: Uint16Array): void;
}

export interface NativeBlockBuilder {
  /** The block's body and filters, or null when the native builder declines these parts. */
  build(parts: readonly BlockPart[]): BlockContent | null;
}

/**
 * The module with its lower-casing table handed over lazily: the table takes ~40 ms to make, so a
 * thread that only ever sees ASCII never makes it. The first declined block makes it and is tried
 * once more (it may have been declined for non-ASCII text).
 */
function withLowerCasing(m: NativeModule): NativeBlockBuilder {
  let lowerGiven = false;
  return {
    build(parts) {
      const content = m.build(parts);
      if (content !== null || lowerGiven) return content;
      m.setLower(lowerTable());
      lowerGiven = true;
      return m.build(parts);
    },
  };
}

const loaded = loadNative<NativeModule>('block_builder.node');

/** The native builder, or null (then `nativeBlockUnavailable` says why). */
export const nativeBlockBuilder: NativeBlockBuilder | null = loaded.module === null ? null : withLowerCasing(loaded.module);
export const nativeBlockUnavailable: string | null = loaded.why;
