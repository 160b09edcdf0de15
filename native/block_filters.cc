// The bloom and gram filter check of many blocks in one call (importer: src/query/filter-packs.ts):
// a query thread keeps a segment's block filters packed in one buffer, and a query's needles,
// hashed once, are tested against every block of a unit here, where the JavaScript check
// (src/query/scan.ts blockMayMatch) cost ~2.3 us a block on the node, most of it cold code and
// the cache misses of one object and two Map lookups per block (docs/benchmarks.md, rare20).
//
// The answer is the JavaScript check's, block for block (test/unit/query/filter-packs.test.ts
// holds the two side by side): a block may match when some alternative has every token's four
// bloom bits set (bit (h1 + i*h2) mod 2^32 masked by the filter's bits, i < 4) and, when its gram
// filter holds field values' grams, every gram probe's bit set (probe masked by the filter's
// bits); an empty filter rules nothing out.
//
// Entry point: survivors(data: Uint8Array, slots: Int32Array, which: Int32Array, probes: Uint32Array,
// out: Uint8Array) -> number (blocks that may match). For each block i of which's length:
// which[i] < 0: out[i] = 2 (not decided here); else slot s = which[i] >> 1, fieldGrams = which[i] & 1,
// its bloom filter at data[slots[3s], +slots[3s+1]) and its gram filter right after it
// (slots[3s+2] bytes); out[i] = 1 when it may match, 0 when ruled out. A slot outside data is
// not decided (2). probes: [alternatives, then per alternative: tokens, (h1, h2) per token,
// gram probes, each probe]. Arguments of the wrong kind throw a TypeError.
#include <node_api.h>

#include "typed_arrays.h"

#include <cstddef>
#include <cstdint>

namespace {

constexpr int kProbes = 4;

inline bool bloomHas(const uint8_t* bloom, size_t len, uint32_t h1, uint32_t h2) {
  if (len == 0) return true;
  const uint32_t mask = static_cast<uint32_t>(len * 8 - 1);
  for (uint32_t i = 0; i < kProbes; i++) {
    const uint32_t bit = (h1 + i * h2) & mask;
    if ((bloom[bit >> 3] & (1u << (bit & 7))) == 0) return false;
  }
  return true;
}

inline bool gramsHave(const uint8_t* grams, size_t len, const uint32_t* probes, uint32_t n) {
  if (len == 0) return true;
  const uint32_t mask = static_cast<uint32_t>(len * 8 - 1);
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t x = probes[i] & mask;
    if ((grams[x >> 3] & (1u << (x & 7))) == 0) return false;
  }
  return true;
}

// True when the probes' encoding is whole: every count fits in what follows it.
bool probesWellFormed(const uint32_t* p, size_t n) {
  if (n == 0) return false;
  size_t k = 1;
  for (uint32_t a = 0; a < p[0]; a++) {
    if (k >= n) return false;
    const size_t tokens = p[k++];
    if (tokens > (n - k) / 2) return false;
    k += tokens * 2;
    if (k >= n) return false;
    const size_t grams = p[k++];
    if (grams > n - k) return false;
    k += grams;
  }
  return true;
}

bool mayMatch(const uint8_t* bloom, size_t bloomLen, const uint8_t* grams, size_t gramLen, bool fieldGrams, const uint32_t* p) {
  const uint32_t alternatives = p[0];
  size_t k = 1;
  for (uint32_t a = 0; a < alternatives; a++) {
    const uint32_t tokens = p[k++];
    bool ok = true;
    for (uint32_t t = 0; t < tokens && ok; t++) ok = bloomHas(bloom, bloomLen, p[k + 2 * t], p[k + 2 * t + 1]);
    k += 2 * static_cast<size_t>(tokens);
    const uint32_t n = p[k++];
    if (ok && fieldGrams) ok = gramsHave(grams, gramLen, p + k, n);
    k += n;
    if (ok) return true;
  }
  return false;
}

napi_value Survivors(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  const uint8_t* data = nullptr;
  const int32_t* slots = nullptr;
  const int32_t* which = nullptr;
  const uint32_t* probes = nullptr;
  uint8_t* out = nullptr;
  size_t dataLen = 0, slotsLen = 0, n = 0, probesLen = 0, outLen = 0;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 5 || !typedArrayOf(env, argv[0], napi_uint8_array, &data, &dataLen) ||
      !typedArrayOf(env, argv[1], napi_int32_array, &slots, &slotsLen) || !typedArrayOf(env, argv[2], napi_int32_array, &which, &n) ||
      !typedArrayOf(env, argv[3], napi_uint32_array, &probes, &probesLen) || !typedArrayOf(env, argv[4], napi_uint8_array, &out, &outLen) || outLen < n ||
      !probesWellFormed(probes, probesLen)) {
    napi_throw_type_error(env, nullptr, "survivors(data: Uint8Array, slots: Int32Array, which: Int32Array, probes: Uint32Array (well formed), out: Uint8Array of which's length)");
    return nullptr;
  }
  const size_t nSlots = slotsLen / 3;
  int64_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    const int32_t w = which[i];
    const size_t s = static_cast<size_t>(w >> 1);
    if (w < 0 || s >= nSlots) {
      out[i] = 2;
      continue;
    }
    const int64_t at = slots[3 * s], bloomLen = slots[3 * s + 1], gramLen = slots[3 * s + 2];
    if (at < 0 || bloomLen < 0 || gramLen < 0 || static_cast<uint64_t>(at + bloomLen + gramLen) > dataLen) {
      out[i] = 2;
      continue;
    }
    const uint8_t* bloom = data + at;
    const bool may = mayMatch(bloom, static_cast<size_t>(bloomLen), bloom + bloomLen, static_cast<size_t>(gramLen), (w & 1) != 0, probes);
    out[i] = may ? 1 : 0;
    kept += may ? 1 : 0;
  }
  napi_value result;
  napi_create_int64(env, kept, &result);
  return result;
}

}  // namespace

NAPI_MODULE_INIT() {
  napi_value f;
  if (napi_create_function(env, "survivors", NAPI_AUTO_LENGTH, Survivors, nullptr, &f) != napi_ok) return nullptr;
  if (napi_set_named_property(env, exports, "survivors", f) != napi_ok) return nullptr;
  return exports;
}
