// Substring search in stored UTF-8 bytes for text search (importer: src/query/native-text.ts, used by
// src/query/byte-search.ts): the first position at or after `from` where `needle` occurs in
// `buf`, exactly or with ASCII letters folded (the needle then comes lower-cased; a byte of the text
// matches a needle byte when it equals it or is its upper-case letter). Bytes of 0x80 and over are
// compared exactly, so a folded search of UTF-8 text finds what JavaScript's folding of the decoded
// text finds, the Kelvin sign aside, which the caller checks for (byte-search.ts `hasKelvin`).
//
// Candidates are found 16 bytes at a time (SSE2, where the compiler targets it) by comparing the
// needle's first and last bytes at once, then checked byte by byte; elsewhere byte by byte only.
// Measured against the JavaScript fallback (a case-insensitive RegExp over the bytes read as
// Latin-1) in docs/benchmarks.md, "Text search, 2026-11-28".
//
// Entry point: find(buf: Uint8Array, from: number, needle: Uint8Array, folded: boolean) -> number
// (-1: none). Arguments of the wrong kind throw a TypeError; a `from` outside the buffer finds none.
//
// byteSet(buf: Uint8Array, out: Uint8Array) sets bit (c & 7) of out[c >> 3] for every byte value c
// in buf (out: 32 bytes, not cleared first): which bytes a text column holds, kept per block so a
// later search for a needle with a byte the column lacks does not read it (src/query/seen-bytes.ts).
#include <node_api.h>

#include "typed_arrays.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace {

inline uint8_t fold(uint8_t c) { return (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c + 32) : c; }

inline bool isLower(uint8_t c) { return c >= 'a' && c <= 'z'; }

// The needle (folded already when `folded`) at p.
inline bool matchesAt(const uint8_t* p, const uint8_t* needle, size_t m, bool folded) {
  if (!folded) return std::memcmp(p, needle, m) == 0;
  for (size_t k = 0; k < m; k++)
    if (fold(p[k]) != needle[k]) return false;
  return true;
}

// One byte of the text against one (folded) needle byte.
inline bool same(uint8_t c, uint8_t n, bool folded) { return folded ? fold(c) == n : c == n; }

long find(const uint8_t* buf, size_t len, size_t from, const uint8_t* needle, size_t m, bool folded) {
  if (m == 0) return from <= len ? static_cast<long>(from) : -1;
  if (from > len || len - from < m) return -1;
  const size_t last = len - m;  // the last position a match may start at
  size_t i = from;
#if defined(__SSE2__)
  const uint8_t f = needle[0];
  const uint8_t l = needle[m - 1];
  // A letter is compared with 0x20 set in the text's byte: its two cases then compare equal (other
  // bytes that turn into it so are only candidates, checked below).
  const __m128i firstBit = _mm_set1_epi8(static_cast<char>(folded && isLower(f) ? 0x20 : 0));
  const __m128i lastBit = _mm_set1_epi8(static_cast<char>(folded && isLower(l) ? 0x20 : 0));
  const __m128i first = _mm_set1_epi8(static_cast<char>(f));
  const __m128i lastB = _mm_set1_epi8(static_cast<char>(l));
  while (i + 16 <= last + 1) {
    const __m128i a = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + i)), firstBit);
    const __m128i b = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(buf + i + m - 1)), lastBit);
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, lastB))));
    while (mask != 0) {
      const unsigned bit = static_cast<unsigned>(__builtin_ctz(mask));
      if (matchesAt(buf + i + bit, needle, m, folded)) return static_cast<long>(i + bit);
      mask &= mask - 1;
    }
    i += 16;
  }
#endif
  for (; i <= last; i++)
    if (same(buf[i], needle[0], folded) && matchesAt(buf + i, needle, m, folded)) return static_cast<long>(i);
  return -1;
}

bool bytesOf(napi_env env, napi_value v, const uint8_t** data, size_t* len) { return typedArrayOf(env, v, napi_uint8_array, data, len); }

napi_value Find(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 4) {
    napi_throw_type_error(env, nullptr, "find(buf, from, needle, folded): four arguments");
    return nullptr;
  }
  const uint8_t* buf = nullptr;
  const uint8_t* needle = nullptr;
  size_t len = 0;
  size_t m = 0;
  double from = 0;
  bool folded = false;
  if (!bytesOf(env, argv[0], &buf, &len) || napi_get_value_double(env, argv[1], &from) != napi_ok || !bytesOf(env, argv[2], &needle, &m) ||
      napi_get_value_bool(env, argv[3], &folded) != napi_ok) {
    napi_throw_type_error(env, nullptr, "find(buf: Uint8Array, from: number, needle: Uint8Array, folded: boolean)");
    return nullptr;
  }
  long at = -1;
  if (from >= 0 && from <= static_cast<double>(len)) at = find(buf, len, static_cast<size_t>(from), needle, m, folded);
  napi_value out;
  napi_create_int64(env, at, &out);
  return out;
}

napi_value ByteSet(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  const uint8_t* buf = nullptr;
  const uint8_t* out = nullptr;
  size_t len = 0;
  size_t outLen = 0;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 2 || !bytesOf(env, argv[0], &buf, &len) ||
      !bytesOf(env, argv[1], &out, &outLen) || outLen != 32) {
    napi_throw_type_error(env, nullptr, "byteSet(buf: Uint8Array, out: Uint8Array of 32 bytes)");
    return nullptr;
  }
  // Seen bytes first as one flag per value (no read-modify-write of one bit per byte), then packed.
  uint8_t seen[256] = {0};
  for (size_t i = 0; i < len; i++) seen[buf[i]] = 1;
  uint8_t* o = const_cast<uint8_t*>(out);
  for (int c = 0; c < 256; c++)
    if (seen[c]) o[c >> 3] = static_cast<uint8_t>(o[c >> 3] | (1u << (c & 7)));
  return nullptr;
}

}  // namespace

NAPI_MODULE_INIT() {
  napi_value f;
  if (napi_create_function(env, "find", NAPI_AUTO_LENGTH, Find, nullptr, &f) != napi_ok) return nullptr;
  if (napi_set_named_property(env, exports, "find", f) != napi_ok) return nullptr;
  if (napi_create_function(env, "byteSet", NAPI_AUTO_LENGTH, ByteSet, nullptr, &f) != napi_ok) return nullptr;
  if (napi_set_named_property(env, exports, "byteSet", f) != napi_ok) return nullptr;
  return exports;
}
