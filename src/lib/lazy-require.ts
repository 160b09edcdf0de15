/**
 * A dependency loaded at first use instead of at start (an idle node does not hold code it has
 * not run): the returned function requires `id` the first time it is called and returns the same
 * exports after. For dependencies that ship a CommonJS build and are needed synchronously.
 */
export function lazyRequire<T>(req: NodeRequire, id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= req(id) as T);
}
