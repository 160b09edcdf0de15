// Giving freed malloc memory back to the kernel (importer: src/lib/malloc-trim.ts, called once by
// `logsvc node` after it starts serving, src/cli/run-node.ts). Not a hot path: JavaScript has no
// way to ask the C allocator for this, and it is most of what varied in an idle node's RSS.
//
// While a node starts, V8's platform threads compile and mark concurrently, each in its own glibc
// malloc arena, and the main thread parses config and builds its services in the main arena; glibc
// keeps the pages they freed (it returns only a free top of an arena, and only past a threshold).
// malloc_trim(0) releases every whole free page in every arena (madvise MADV_DONTNEED), 4–6 MB of
// an empty node's RSS (docs/benchmarks.md, "Idle RSS of an empty node, third pass"). Memory still
// in use is untouched; a later malloc simply faults pages in again.
//
// Entry point: trim() -> boolean, true when memory was released. Where the C library is not glibc
// it does nothing and returns false.
#include <node_api.h>

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

napi_value Trim(napi_env env, napi_callback_info) {
  bool released = false;
#if defined(__GLIBC__)
  released = malloc_trim(0) != 0;
#endif
  napi_value out;
  if (napi_get_boolean(env, released, &out) != napi_ok) return nullptr;
  return out;
}

}  // namespace

NAPI_MODULE_INIT() {
  napi_value f;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, nullptr, &f) != napi_ok) return nullptr;
  if (napi_set_named_property(env, exports, "trim", f) != napi_ok) return nullptr;
  return exports;
}
