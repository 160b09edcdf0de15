/**
 * Loading the optional native modules that `npm run build` compiles into dist/native/
 * (native/build.mjs): the module, or null and the reason it is missing. `LOGSVC_NATIVE=off` in the
 * environment leaves them all unloaded (A/B runs, and the JavaScript paths' tests). Each module has
 * one importer that wraps it: src/digest/native-block.ts, src/ingest/native-structured.ts.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface LoadedNative<T> {
  module: T | null;
  /** Why `module` is null. */
  why: string | null;
}

/** Where `npm run build` puts a module (the same path from src/ and dist/). */
export function nativeModulePath(file: string): string {
  return fileURLToPath(new URL(`../../dist/native/${file}`, import.meta.url));
}

export function loadNative<T>(file: string): LoadedNative<T> {
  if (process.env.LOGSVC_NATIVE === 'off') return { module: null, why: 'LOGSVC_NATIVE=off' };
  const path = nativeModulePath(file);
  if (!existsSync(path)) return { module: null, why: `${path} was not built (npm run build compiles it; see its output)` };
  try {
    return { module: createRequire(import.meta.url)(path) as T, why: null };
  } catch (err) {
    return { module: null, why: `${path} does not load: ${(err as Error).message}` };
  }
}
