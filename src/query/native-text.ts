/**
 * The native substring search of stored bytes (native/text_search.cc): the one importer of that
 * module. `npm run build` compiles it to dist/native/text_search.node (native/build.mjs); where
 * that failed, or with LOGSVC_NATIVE=off, `nativeFind` is null and byte-search.ts searches with
 * `Buffer.indexOf` and a case-insensitive RegExp over the bytes read as Latin-1, which find the
 * same positions (test/unit/query/native-text.test.ts holds the two side by side).
 */
import { loadNative } from '../lib/native-module.js';

interface NativeModule {
  /** The first position at or after `from` where `needle` (lower-case ASCII when `folded`) occurs in `buf`; -1: none. */
  find(buf: Uint8Array, from: number, needle: Uint8Array, folded: boolean): number;
  /** Sets bit (c & 7) of out[c >> 3] for each byte value c in `buf` (`out`: 32 bytes). */
  byteSet(buf: Uint8Array, out: Uint8Array): void;
}

const loaded = loadNative<NativeModule>('text_search.node');

export const nativeFind: NativeModule['find'] | null = loaded.module === null ? null : loaded.module.find;
export const nativeByteSet: NativeModule['byteSet'] | null = loaded.module === null ? null : loaded.module.byteSet;
export const nativeFindUnavailable: string | null = loaded.why;
