// Typed array arguments of the native modules' entry points: the array's data and length in
// elements when `v` is a typed array of kind `want`; false otherwise (the caller throws its
// TypeError naming the call). Shared by text_search.cc and block_filters.cc.
#pragma once

#include <node_api.h>

#include <cstddef>

template <typename T>
inline bool typedArrayOf(napi_env env, napi_value v, napi_typedarray_type want, T** data, size_t* len) {
  bool is = false;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return false;
  napi_typedarray_type type;
  void* p = nullptr;
  napi_value ab;
  size_t offset = 0;
  if (napi_get_typedarray_info(env, v, &type, len, &p, &ab, &offset) != napi_ok || type != want) return false;
  *data = static_cast<T*>(p);
  return true;
}
