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
//
// survivorsPacked(data, slots, pos: Float64Array, lens: Float64Array, refs: Float64Array, at, count,
// probes, out) -> number: the same for blocks at..at+count of packed block refs (src/query/packed-refs.ts,
// kRefElements numbers a block: pos, headerLength, bloomLength, gramLength, flags (1 field grams,
// 2 framed), compressedLength, ...), each found in the pack by its position (pos ascending, lens
// four a block: header, bloom, gram and compressed lengths), so the first round makes no object for
// a block ruled out. A block not framed is not decided (2). Returns -1 when a framed block is not
// in the pack as its ref describes it (the caller makes a new pack); out is then not whole.
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

constexpr size_t kRefElements = 11;
constexpr uint32_t kRefFieldGrams = 1;
constexpr uint32_t kRefFramed = 2;

// One block's verdict from its slot s of the pack: 0, 1, or 2 when the slot lies outside data.
inline uint8_t verdictOf(const uint8_t* data, size_t dataLen, const int32_t* slots, size_t s, bool fieldGrams, const uint32_t* probes) {
  const int64_t at = slots[3 * s], bloomLen = slots[3 * s + 1], gramLen = slots[3 * s + 2];
  if (at < 0 || bloomLen < 0 || gramLen < 0 || static_cast<uint64_t>(at + bloomLen + gramLen) > dataLen) return 2;
  const uint8_t* bloom = data + at;
  return mayMatch(bloom, static_cast<size_t>(bloomLen), bloom + bloomLen, static_cast<size_t>(gramLen), fieldGrams, probes) ? 1 : 0;
}

// A call's number result.
napi_value int64Value(napi_env env, int64_t v) {
  napi_value result;
  napi_create_int64(env, v, &result);
  return result;
}

// What both entry points take: the pack's filters and slots, the probes (well formed) and the verdicts' buffer.
struct Common {
  const uint8_t* data = nullptr;
  size_t dataLen = 0;
  const int32_t* slots = nullptr;
  size_t slotsLen = 0;
  const uint32_t* probes = nullptr;
  size_t probesLen = 0;
  uint8_t* out = nullptr;
  size_t outLen = 0;
};

bool commonOf(napi_env env, const napi_value* argv, size_t probesArg, size_t outArg, Common* c) {
  return typedArrayOf(env, argv[0], napi_uint8_array, &c->data, &c->dataLen) && typedArrayOf(env, argv[1], napi_int32_array, &c->slots, &c->slotsLen) &&
         typedArrayOf(env, argv[probesArg], napi_uint32_array, &c->probes, &c->probesLen) && typedArrayOf(env, argv[outArg], napi_uint8_array, &c->out, &c->outLen) &&
         probesWellFormed(c->probes, c->probesLen);
}

napi_value Survivors(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  Common c;
  const int32_t* which = nullptr;
  size_t n = 0;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 5 || !commonOf(env, argv, 3, 4, &c) ||
      !typedArrayOf(env, argv[2], napi_int32_array, &which, &n) || c.outLen < n) {
    napi_throw_type_error(env, nullptr, "survivors(data: Uint8Array, slots: Int32Array, which: Int32Array, probes: Uint32Array (well formed), out: Uint8Array of which's length)");
    return nullptr;
  }
  const size_t nSlots = c.slotsLen / 3;
  int64_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    const int32_t w = which[i];
    const size_t s = static_cast<size_t>(w >> 1);
    if (w < 0 || s >= nSlots) {
      c.out[i] = 2;
      continue;
    }
    c.out[i] = verdictOf(c.data, c.dataLen, c.slots, s, (w & 1) != 0, c.probes);
    kept += c.out[i] == 1 ? 1 : 0;
  }
  return int64Value(env, kept);
}

// Index of `at` in ascending pos[0..n), or n.
size_t positionOf(const double* pos, size_t n, double at) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (pos[mid] < at) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && pos[lo] == at ? lo : n;
}

napi_value SurvivorsPacked(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  Common c;
  const double* pos = nullptr;
  const double* lens = nullptr;
  const double* refs = nullptr;
  size_t posLen = 0, lensLen = 0, refsLen = 0;
  int64_t at = -1, count = -1;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 9 || !commonOf(env, argv, 7, 8, &c) ||
      !typedArrayOf(env, argv[2], napi_float64_array, &pos, &posLen) || !typedArrayOf(env, argv[3], napi_float64_array, &lens, &lensLen) ||
      !typedArrayOf(env, argv[4], napi_float64_array, &refs, &refsLen) || napi_get_value_int64(env, argv[5], &at) != napi_ok ||
      napi_get_value_int64(env, argv[6], &count) != napi_ok || at < 0 || count < 0 || static_cast<uint64_t>(count) > c.outLen ||
      static_cast<uint64_t>(at + count) > refsLen / kRefElements || lensLen < 4 * posLen || c.slotsLen < 3 * posLen) {
    napi_throw_type_error(env, nullptr,
                          "survivorsPacked(data: Uint8Array, slots: Int32Array, pos: Float64Array, lens: Float64Array, refs: Float64Array, at, count, probes: Uint32Array (well formed), out: Uint8Array of count)");
    return nullptr;
  }
  int64_t kept = 0;
  size_t j = 0;
  for (int64_t i = 0; i < count; i++) {
    const double* r = refs + static_cast<size_t>(at + i) * kRefElements;
    const uint32_t flags = static_cast<uint32_t>(r[4]);
    if ((flags & kRefFramed) == 0) {
      c.out[i] = 2;
      continue;
    }
    // Units list a segment's blocks in file order: mostly the next slot.
    if (j >= posLen || pos[j] != r[0]) j = positionOf(pos, posLen, r[0]);
    const double* l = lens + 4 * j;
    if (j >= posLen || l[0] != r[1] || l[1] != r[2] || l[2] != r[3] || l[3] != r[5]) return int64Value(env, -1);
    c.out[i] = verdictOf(c.data, c.dataLen, c.slots, j, (flags & kRefFieldGrams) != 0, c.probes);
    kept += c.out[i] == 1 ? 1 : 0;
    j++;
  }
  return int64Value(env, kept);
}

}  // namespace

NAPI_MODULE_INIT() {
  napi_value f;
  if (napi_create_function(env, "survivors", NAPI_AUTO_LENGTH, Survivors, nullptr, &f) != napi_ok) return nullptr;
  if (napi_set_named_property(env, exports, "survivors", f) != napi_ok) return nullptr;
  if (napi_create_function(env, "survivorsPacked", NAPI_AUTO_LENGTH, SurvivorsPacked, nullptr, &f) != napi_ok) return nullptr;
  if (napi_set_named_property(env, exports, "survivorsPacked", f) != napi_ok) return nullptr;
  return exports;
}
