// The digest's block builder in C++: the same block body, bloom filter and gram filter as
// src/digest/block-parts.ts + src/segments/{block,columns,bloom,grams}.ts build in JavaScript,
// byte for byte (test/unit/digest/native-block.test.ts holds the two side by side), from the
// record sections of version 3 (src/events/record.ts) without making a JavaScript string.
//
// It takes the common case only and declines the rest (returns null; the JavaScript builder then
// builds the block): every section must be version 3 with valid UTF-8 text in which no string
// boundary splits a surrogate pair, the block must have at most 4096 field columns, and the field
// names must need no JSON escapes. Anything it cannot read the JavaScript builder reads, and
// reports as corrupt where it is.
//
// JavaScript measures strings in UTF-16 units; here values are UTF-8 bytes with their length in
// units alongside. Searching, comparing and hashing bytes gives what JavaScript gets from units
// (valid UTF-8 matches only at character boundaries, in the same order); token and gram filters
// walk the text unit by unit, lower-casing non-ASCII units with JavaScript's own mapping, which
// the loader hands over once (setLower).
//
// Entry points: build(parts) with parts = [{events: Uint8Array, offset, base, skip, at}], giving
// {body, bloom, grams, count, minTs, maxTs, firstOffset, firstIndex, lastOffset, lastIndex} or null
// (the caller compresses the body and writes the header: src/segments/block.ts assembleBlock);
// setLower(table), see below.
#include <node_api.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

using Str = std::string_view;

// A value of a column: a view into a section's text, or absent.
struct Val {
  const char* p = nullptr;
  uint32_t n = 0;  // bytes
  uint32_t u = 0;  // UTF-16 units (JavaScript's length)
  bool present() const { return p != nullptr; }
  Str view() const { return Str(p, n); }
};

// FNV-1a over 8 bytes at a time, finished with a murmur3 mix: the values are short (most under 32
// bytes), and std::hash's allocation-backed tables cost more than the rest of a column's encoding.
inline uint32_t hashStr(Str s) {
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  // The last 1-7 bytes in one word (two overlapping 4-byte reads, or three single bytes), with
  // their count: a byte at a time this tail was a tenth of a JSON block's interning.
  const size_t r = s.size() - i;
  if (r > 0) {
    const char* q = s.data() + i;
    uint64_t w;
    if (r >= 4) {
      uint32_t lo, hi;
      std::memcpy(&lo, q, 4);
      std::memcpy(&hi, q + r - 4, 4);
      w = lo | (static_cast<uint64_t>(hi) << 32);
    } else {
      w = static_cast<uint8_t>(q[0]) | (static_cast<uint64_t>(static_cast<uint8_t>(q[r >> 1])) << 8) | (static_cast<uint64_t>(static_cast<uint8_t>(q[r - 1])) << 16);
    }
    h = (h ^ w ^ (static_cast<uint64_t>(r) << 59)) * 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return static_cast<uint32_t>(h);
}

// The distinct strings seen, in order of first appearance, with an open-addressing index.
class StrTable {
 public:
  explicit StrTable(size_t expected = 16) {
    size_t cap = 16;
    while (cap < expected * 2) cap *= 2;
    slots_.assign(cap, kEmpty);
  }
  // The index of `s`, adding it if new (then `added` is set).
  uint32_t intern(Str s, bool& added) {
    if ((values_.size() + 1) * 2 > slots_.size()) grow();
    uint32_t h = hashStr(s);
    size_t mask = slots_.size() - 1;
    size_t probes = 0;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      // The hash is not keyed: values that collide can be made offline, and would make every
      // lookup walk them all. Past this many probes (honest data at half load needs a handful)
      // the build declines and JavaScript, whose hashes V8 seeds per process, builds the block.
      if (++probes > kMaxProbes) throw std::runtime_error("hash probes");
      uint32_t at = slots_[i];
      if (at == kEmpty) {
        slots_[i] = static_cast<uint32_t>(values_.size());
        values_.push_back(s);
        hashes_.push_back(h);
        added = true;
        return slots_[i];
      }
      if (hashes_[at] == h && values_[at] == s) {
        added = false;
        return at;
      }
    }
  }
  bool add(Str s) {
    bool added;
    intern(s, added);
    return added;
  }
  size_t size() const { return values_.size(); }
  const std::vector<Str>& values() const { return values_; }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;
  static constexpr size_t kMaxProbes = 512;
  void grow() {
    slots_.assign(slots_.size() * 2, kEmpty);
    size_t mask = slots_.size() - 1;
    for (uint32_t v = 0; v < values_.size(); v++) {
      size_t i = hashes_[v] & mask;
      while (slots_[i] != kEmpty) i = (i + 1) & mask;
      slots_[i] = v;
    }
  }
  std::vector<uint32_t> slots_;
  std::vector<Str> values_;
  std::vector<uint32_t> hashes_;
};

// ---- bloom.ts ----

constexpr int kBloomK = 4;
constexpr uint32_t kBloomMinBits = 1024;
constexpr uint32_t kBloomMaxBits = 1u << 21;
constexpr int kMaxToken = 64;
constexpr uint32_t kSeed1 = 0x811c9dc5u;
constexpr uint32_t kSeed2 = 0x9747b28cu;
constexpr uint32_t kFnvPrime = 0x01000193u;

inline uint32_t lowerAscii(uint32_t c) { return c >= 65 && c <= 90 ? c + 32 : c; }
inline bool isWord(uint32_t c) { return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c >= 0x80; }

// JavaScript's lower-casing of one UTF-16 unit (bloom.ts `lower`), from the loader; written once
// per process (worker threads share the module), read only after gLowerSet says it is complete.
uint16_t gLower[65536];
std::atomic<bool> gLowerSet{false};
std::once_flag gLowerOnce;

inline uint32_t lowerUnit(uint32_t c) { return c < 0x80 ? lowerAscii(c) : gLower[c]; }

// Calls f(unit) for each UTF-16 unit of valid UTF-8 text.
template <class F>
inline void forUnits(Str s, F f) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
  const uint8_t* end = p + s.size();
  while (p < end) {
    uint32_t b = *p;
    if (b < 0x80) {
      f(b);
      p++;
    } else if (b < 0xe0) {
      f(((b & 0x1f) << 6) | (p[1] & 0x3f));
      p += 2;
    } else if (b < 0xf0) {
      f(((b & 0x0f) << 12) | ((p[1] & 0x3f) << 6) | (p[2] & 0x3f));
      p += 3;
    } else {
      uint32_t cp = ((b & 0x07) << 18) | ((p[1] & 0x3f) << 12) | ((p[2] & 0x3f) << 6) | (p[3] & 0x3f);
      cp -= 0x10000;
      f(0xd800 + (cp >> 10));
      f(0xdc00 + (cp & 0x3ff));
      p += 4;
    }
  }
}

// UTF-16 units of valid UTF-8 bytes: one per character, two for a 4-byte one.
inline uint32_t unitsOf(const char* p, size_t n) {
  uint32_t u = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t b = static_cast<uint8_t>(p[i]);
    if ((b & 0xc0) != 0x80) u += b >= 0xf0 ? 2 : 1;
  }
  return u;
}

inline uint32_t fmix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

class Bloom {
 public:
  Bloom() : h1_(1024, 0), h2_(1024, 0) {}

  // The tokens of a text, a unit at a time: step() takes a unit's lower-cased form `l` and whether
  // it is a word unit; a token ends at a non-word unit or at end(); only its first kMaxToken units
  // count.
  struct Tokens {
    int run = -1;  // units into the current token, or -1 outside one
    uint32_t a = kSeed1, b = kSeed2;
    inline void step(Bloom& bloom, bool word, uint32_t l) {
      if (word) {
        if (run < 0) {
          run = 0;
          a = kSeed1;
          b = kSeed2;
        }
        if (run < kMaxToken) {
          a = (a ^ l) * kFnvPrime;
          b = (b ^ l) * kFnvPrime;
          run++;
        }
      } else if (run >= 0) {
        bloom.insert(fmix(a), fmix(b) | 1);
        run = -1;
      }
    }
    inline void end(Bloom& bloom) { step(bloom, false, 32); }
  };

  // The whole value's hash (what a field's exact match asks).
  void insertWhole(uint32_t a, uint32_t b) { insert(fmix(a), fmix(b) | 1); }

  std::vector<uint8_t> build() const {
    uint32_t bits = kBloomMinBits;
    while (bits < static_cast<uint64_t>(size_) * 10 && bits < kBloomMaxBits) bits *= 2;
    std::vector<uint8_t> out(bits / 8, 0);
    for (size_t s = 0; s < h1_.size(); s++) {
      uint32_t h2 = h2_[s];
      if (h2 == 0) continue;
      uint32_t h1 = h1_[s];
      for (uint32_t i = 0; i < kBloomK; i++) {
        uint32_t bit = (h1 + i * h2) & (bits - 1);
        out[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
      }
    }
    return out;
  }

 private:
  void insert(uint32_t a, uint32_t b) {
    if ((size_ + 1) * 2 > h1_.size()) grow();
    size_t mask = h1_.size() - 1;
    size_t i = a & mask;
    for (;;) {
      uint32_t cur = h2_[i];
      if (cur == 0) {
        h1_[i] = a;
        h2_[i] = b;
        size_++;
        return;
      }
      if (cur == b && h1_[i] == a) return;
      i = (i + 1) & mask;
    }
  }
  void grow() {
    std::vector<uint32_t> o1, o2;
    o1.swap(h1_);
    o2.swap(h2_);
    h1_.assign(o1.size() * 2, 0);
    h2_.assign(o2.size() * 2, 0);
    size_ = 0;
    for (size_t i = 0; i < o1.size(); i++)
      if (o2[i] != 0) insert(o1[i], o2[i]);
  }
  std::vector<uint32_t> h1_, h2_;
  uint32_t size_ = 0;
};

// ---- grams.ts ----

constexpr int kGram = 4;
constexpr uint32_t kGramMinBits = 1024;
constexpr uint32_t kGramMaxBits = 1u << 20;

inline uint32_t mix1(uint32_t key) {
  uint32_t h = key ^ (key >> 16);
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

inline uint32_t wideProbe1(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  uint32_t h = (0x811c9dc5u ^ a) * kFnvPrime;
  h = (h ^ b) * kFnvPrime;
  h = (h ^ c) * kFnvPrime;
  return mix1((h ^ d) * kFnvPrime);
}

inline uint32_t probe2(uint32_t h1) {
  uint32_t h = (h1 ^ (h1 >> 15)) * 0x2c1b3c6du;
  h ^= h >> 12;
  h *= 0x297a2d39u;
  return h ^ (h >> 15);
}

// Bits set in `bytes` (a multiple of 8), eight bytes at a time without needing a POPCNT instruction.
uint32_t popcount(const uint8_t* p, size_t bytes) {
  uint64_t n = 0;
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    v -= (v >> 1) & 0x5555555555555555ull;
    v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
    n += (((v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full) * 0x0101010101010101ull) >> 56;
  }
  return static_cast<uint32_t>(n);
}

class Grams {
 public:
  Grams() : bits_(kGramMaxBits / 8, 0) {}

  // Grams of Latin-1 units are keyed by the four packed bytes; a window holding a wider unit by
  // FNV-1a over the four units (grams.ts probe1). One unit: its lower-cased `d`, whether it is a
  // word unit (a gram is four word units in a row).
  struct Window {
    uint32_t a = 0, b = 0, c = 0;
    uint32_t packed = 0;
    uint32_t wide = 0;
    int run = 0;
    inline void step(Grams& grams, bool word, uint32_t d) {
      if (!word) {
        run = 0;
        return;
      }
      packed = (packed << 8) | (d & 0xff);
      wide = ((wide << 1) | (d >= 0x100 ? 1u : 0u)) & 0xf;
      if (run < kGram) run++;
      if (run >= kGram) grams.set(wide == 0 ? mix1(packed) : wideProbe1(a, b, c, d));
      a = b;
      b = c;
      c = d;
    }
  };

  inline void set(uint32_t h1) {
    const uint32_t mask = kGramMaxBits - 1;
    uint32_t x = h1 & mask;
    uint32_t y = probe2(h1) & mask;
    bits_[x >> 3] |= static_cast<uint8_t>(1u << (x & 7));
    bits_[y >> 3] |= static_cast<uint8_t>(1u << (y & 7));
    used_ = true;
  }

  std::vector<uint8_t> build() {
    if (!used_) return std::vector<uint8_t>(kGramMinBits / 8, 0);
    size_t bytes = kGramMaxBits / 8;
    double fill = static_cast<double>(popcount(bits_.data(), bytes)) / kGramMaxBits;
    while (bytes * 8 > kGramMinBits && 1 - (1 - fill) * (1 - fill) <= 0.5) {
      size_t half = bytes >> 1;
      // Eight bytes at a time (a byte at a time the folds cost a twentieth of a JSON block's build).
      for (size_t i = 0; i < half; i += 8) {
        uint64_t lo, hi;
        std::memcpy(&lo, bits_.data() + i, 8);
        std::memcpy(&hi, bits_.data() + i + half, 8);
        lo |= hi;
        std::memcpy(bits_.data() + i, &lo, 8);
      }
      bytes = half;
      fill = static_cast<double>(popcount(bits_.data(), bytes)) / static_cast<double>(bytes * 8);
    }
    return std::vector<uint8_t>(bits_.begin(), bits_.begin() + static_cast<long>(bytes));
  }

 private:
  std::vector<uint8_t> bits_;
  bool used_ = false;
};

bool isAscii(const char* p, size_t n);

// ASCII bytes' classes for indexAscii: the lower-cased byte in the low 7 bits, 0x80 for a word unit.
struct AsciiClasses {
  uint8_t of[128];
  AsciiClasses() {
    for (uint32_t c = 0; c < 128; c++) of[c] = static_cast<uint8_t>(lowerAscii(c) | (isWord(c) ? 0x80 : 0));
  }
};
const AsciiClasses kAscii;

// indexText for ASCII text: a byte is a unit, its class one table lookup, and a gram's key is
// always its four packed bytes (no wider unit to track). The same tokens, grams and whole hash.
template <bool kWhole>
void indexAscii(Bloom& bloom, Grams& grams, const uint8_t* p, size_t n) {
  Bloom::Tokens tokens;
  uint32_t a = kSeed1, b = kSeed2;
  uint32_t packed = 0;
  int run = 0;  // word units in a row, up to kGram
  for (size_t i = 0; i < n; i++) {
    const uint32_t k = kAscii.of[p[i]];
    const uint32_t l = k & 0x7f;
    const bool word = k >= 0x80;
    if (kWhole) {
      a = (a ^ l) * kFnvPrime;
      b = (b ^ l) * kFnvPrime;
    }
    tokens.step(bloom, word, l);
    if (!word) {
      run = 0;
      continue;
    }
    packed = (packed << 8) | l;
    if (run < kGram) run++;
    if (run >= kGram) grams.set(mix1(packed));
  }
  if (kWhole) bloom.insertWhole(a, b);
  tokens.end(bloom);
}

// A text's bloom tokens and grams in one pass over its units (decoded and lower-cased once), and
// with `whole`, the whole value's bloom hash too: the same filters as Bloom::addValue or addText
// followed by Grams::addText (both are sets; the order of insertion changes no bit). Measured on
// the peers JSON set: the three passes were about a quarter of a block build's time. ASCII text
// (`ascii` when the caller knows, else checked here) takes indexAscii: on the peers JSON set that
// is nearly all of it, and this was still 27 % of a native block build's instructions.
void indexText(Bloom& bloom, Grams& grams, Str t, bool whole, bool ascii = false) {
  if (ascii || isAscii(t.data(), t.size())) {
    const auto* p = reinterpret_cast<const uint8_t*>(t.data());
    if (whole) indexAscii<true>(bloom, grams, p, t.size());
    else indexAscii<false>(bloom, grams, p, t.size());
    return;
  }
  Bloom::Tokens tokens;
  Grams::Window window;
  uint32_t a = kSeed1, b = kSeed2;
  forUnits(t, [&](uint32_t c) {
    const bool word = isWord(c);
    const uint32_t l = lowerUnit(c);
    if (whole) {
      a = (a ^ l) * kFnvPrime;
      b = (b ^ l) * kFnvPrime;
    }
    tokens.step(bloom, word, l);
    window.step(grams, word, l);
  });
  if (whole) bloom.insertWhole(a, b);
  tokens.end(bloom);
}

// ---- msgpack, as msgpackr (useRecords: false) writes these values ----

class Pack {
 public:
  std::vector<uint8_t> out;

  void byte(uint8_t b) { out.push_back(b); }
  void be16(uint32_t v) {
    byte(static_cast<uint8_t>(v >> 8));
    byte(static_cast<uint8_t>(v));
  }
  void be32(uint32_t v) {
    be16(v >> 16);
    be16(v & 0xffff);
  }
  void raw(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  // msgpackr writes every object as a map16.
  void map(uint32_t n) {
    byte(0xde);
    be16(n);
  }
  void array(size_t n) {
    if (n < 0x10) byte(static_cast<uint8_t>(0x90 | n));
    else if (n < 0x10000) {
      byte(0xdc);
      be16(static_cast<uint32_t>(n));
    } else {
      byte(0xdd);
      be32(static_cast<uint32_t>(n));
    }
  }
  // The length after a str8/16/32 or bin8/16/32 code.
  void sized(size_t n, uint8_t c8, uint8_t c16, uint8_t c32) {
    if (n < 0x100) {
      byte(c8);
      byte(static_cast<uint8_t>(n));
    } else if (n < 0x10000) {
      byte(c16);
      be16(static_cast<uint32_t>(n));
    } else {
      byte(c32);
      be32(static_cast<uint32_t>(n));
    }
  }
  // msgpackr settles a string's header by its UTF-8 length, as here.
  void str(Str s) {
    if (s.size() < 0x20) byte(static_cast<uint8_t>(0xa0 | s.size()));
    else sized(s.size(), 0xd9, 0xda, 0xdb);
    raw(s.data(), s.size());
  }
  void key(const char* k) { str(Str(k)); }
  // A column object: a map of `keys` entries, the first being its encoding `e`.
  void column(uint32_t keys, const char* e) {
    map(keys);
    key("e");
    str(Str(e));
  }
  void bin(const uint8_t* p, size_t n) {
    sized(n, 0xc4, 0xc5, 0xc6);
    raw(p, n);
  }
  void bin(const std::vector<uint8_t>& v) { bin(v.data(), v.size()); }
  void num(double v) {
    if (v >= 0 && v <= 4294967295.0 && v == std::floor(v)) {
      uint32_t u = static_cast<uint32_t>(v);
      if (u < 0x80) byte(static_cast<uint8_t>(u));
      else if (u < 0x100) {
        byte(0xcc);
        byte(static_cast<uint8_t>(u));
      } else if (u < 0x10000) {
        byte(0xcd);
        be16(u);
      } else {
        byte(0xce);
        be32(u);
      }
    } else if (v < 0 && v >= -2147483648.0 && v == std::floor(v)) {
      int32_t i = static_cast<int32_t>(v);
      if (i >= -0x20) byte(static_cast<uint8_t>(0x100 + i));
      else if (i >= -0x80) {
        byte(0xd0);
        byte(static_cast<uint8_t>(i + 0x100));
      } else if (i >= -0x8000) {
        byte(0xd1);
        be16(static_cast<uint16_t>(i));
      } else {
        byte(0xd2);
        be32(static_cast<uint32_t>(i));
      }
    } else {
      byte(0xcb);
      uint64_t b;
      std::memcpy(&b, &v, 8);
      be32(static_cast<uint32_t>(b >> 32));
      be32(static_cast<uint32_t>(b));
    }
  }
};

// ---- columns.ts ----

void putVarint(std::vector<uint8_t>& out, uint64_t x) {
  while (x >= 0x80) {
    out.push_back(static_cast<uint8_t>((x & 0x7f) | 0x80));
    x >>= 7;
  }
  out.push_back(static_cast<uint8_t>(x));
}

constexpr double kMaxDelta = 2251799813685248.0;  // 2^51
constexpr double kMaxSafe = 9007199254740991.0;    // 2^53 - 1

// encodeNumbers, written straight into the body.
void packNumbers(Pack& pk, const std::vector<double>& values) {
  std::vector<double> rv;
  std::vector<double> rn;
  for (double x : values) {
    if (!rv.empty() && rv.back() == x) rn.back() += 1;
    else {
      rv.push_back(x);
      rn.push_back(1);
    }
  }
  if (rv.size() * 4 <= values.size()) {
    pk.column(3, "r");
    pk.key("v");
    pk.array(rv.size());
    for (double x : rv) pk.num(x);
    pk.key("n");
    pk.array(rn.size());
    for (double x : rn) pk.num(x);
    return;
  }
  std::vector<uint8_t> out;
  out.reserve(values.size() * 3);
  double prev = 0;
  bool floats = false;
  for (double x : values) {
    if (!(std::isfinite(x) && x == std::trunc(x) && std::fabs(x) <= kMaxSafe) || std::fabs(x - prev) > kMaxDelta) {
      floats = true;
      break;
    }
    double d = x - prev;
    prev = x;
    uint64_t z = d >= 0 ? static_cast<uint64_t>(d) * 2 : static_cast<uint64_t>(-d) * 2 - 1;
    putVarint(out, z);
  }
  pk.column(2, floats ? "f" : "d");
  pk.key("b");
  if (floats) pk.bin(reinterpret_cast<const uint8_t*>(values.data()), values.size() * 8);
  else pk.bin(out);
}

constexpr int kMaxIntDigits = 15;

// canonicalInt: the integer written exactly as String(n) writes it, or NaN.
double canonicalInt(Str v) {
  bool neg = !v.empty() && v[0] == '-';
  size_t from = neg ? 1 : 0;
  size_t digits = v.size() - from;
  if (v.empty() || digits < 1 || digits > kMaxIntDigits) return NAN;
  if (v[from] == '0' && (digits > 1 || neg)) return NAN;
  double n = 0;
  for (size_t i = from; i < v.size(); i++) {
    int d = v[i] - '0';
    if (d < 0 || d > 9) return NAN;
    n = n * 10 + d;
  }
  return neg ? -n : n;
}

bool canonicalIpv4(Str v, uint8_t* out) {
  uint32_t octet = 0;
  int digits = 0;
  int k = 0;
  for (size_t i = 0; i <= v.size(); i++) {
    int c = i < v.size() ? static_cast<uint8_t>(v[i]) : 46;
    if (c == 46) {
      if (digits == 0 || k > 3) return false;
      out[k++] = static_cast<uint8_t>(octet);
      octet = 0;
      digits = 0;
      continue;
    }
    int d = c - 48;
    if (d < 0 || d > 9 || (digits == 1 && octet == 0)) return false;
    octet = octet * 10 + static_cast<uint32_t>(d);
    if (++digits > 3 || octet > 255) return false;
  }
  return k == 4;
}

// encodeStrings (and the encodings it falls back to), written straight into the body. `raw`, when
// given, allows references into the raw strings. Returns the encoding's letter; for a dictionary
// (`k`), `dictOut` (if given) receives its values.
char packStrings(Pack& pk, const std::vector<Val>& values, size_t count, const std::vector<Val>* raw, std::vector<Str>* dictOut) {
  auto at = [&](size_t i) -> Val { return i < values.size() ? values[i] : Val(); };
  {
    StrTable dict(std::min<size_t>(count / 4 + 1, 1024));
    std::vector<uint16_t> codes(count);
    bool fits = true;
    for (size_t i = 0; i < count; i++) {
      Val v = at(i);
      if (!v.present()) {
        codes[i] = 65535;
        continue;
      }
      bool added;
      uint32_t k = dict.intern(v.view(), added);
      if (added && (dict.size() > 65534 || dict.size() * 4 > count)) {
        fits = false;
        break;
      }
      codes[i] = static_cast<uint16_t>(k);
    }
    const std::vector<Str>& order = dict.values();
    if (fits) {
      pk.column(4, "k");
      pk.key("d");
      pk.array(order.size());
      for (Str s : order) pk.str(s);
      pk.key("i");
      if (order.size() >= 255) {
        std::vector<uint8_t> b(count * 2);
        for (size_t i = 0; i < count; i++) {
          b[2 * i] = static_cast<uint8_t>(codes[i]);
          b[2 * i + 1] = static_cast<uint8_t>(codes[i] >> 8);
        }
        pk.bin(b);
        pk.key("w");
        pk.num(2);
      } else {
        std::vector<uint8_t> b(count);
        for (size_t i = 0; i < count; i++) b[i] = codes[i] == 65535 ? 255 : static_cast<uint8_t>(codes[i]);
        pk.bin(b);
        pk.key("w");
        pk.num(1);
      }
      if (dictOut != nullptr) *dictOut = order;
      return 'k';
    }
  }
  // encodeTyped
  Val first = at(0);
  if (count > 0 && first.present()) {
    if (!std::isnan(canonicalInt(first.view()))) {
      std::vector<double> nums(count);
      bool ok = true;
      for (size_t i = 0; i < count && ok; i++) {
        Val v = at(i);
        double n = v.present() ? canonicalInt(v.view()) : NAN;
        if (std::isnan(n)) ok = false;
        else nums[i] = n;
      }
      if (ok) {
        pk.column(2, "i");
        pk.key("v");
        packNumbers(pk, nums);
        return 'i';
      }
    } else {
      std::vector<uint8_t> b(count * 4);
      bool ok = canonicalIpv4(first.view(), b.data());
      for (size_t i = 1; i < count && ok; i++) {
        Val v = at(i);
        ok = v.present() && canonicalIpv4(v.view(), b.data() + i * 4);
      }
      if (ok) {
        pk.column(2, "4");
        pk.key("b");
        pk.bin(b);
        return '4';
      }
    }
  }
  // encodeReferences
  if (raw != nullptr) {
    std::vector<uint8_t> p;
    std::vector<Str> literals;
    bool ok = true;
    for (size_t i = 0; i < count; i++) {
      Val v = at(i);
      if (!v.present()) {
        p.push_back(0);
        continue;
      }
      size_t pos = v.n == 0 ? Str::npos : (*raw)[i].view().find(v.view());
      if (pos == Str::npos) {
        p.push_back(1);
        literals.push_back(v.view());
        if (literals.size() * 4 > count) {
          ok = false;
          break;
        }
        continue;
      }
      putVarint(p, unitsOf((*raw)[i].p, pos) + 2);
      putVarint(p, v.u);
    }
    if (ok) {
      pk.column(3, "x");
      pk.key("p");
      pk.bin(p);
      pk.key("v");
      pk.array(literals.size());
      for (Str s : literals) pk.str(s);
      return 'x';
    }
  }
  // encodeText
  std::vector<uint8_t> lengths;
  std::vector<uint8_t> text;
  for (size_t i = 0; i < count; i++) {
    Val v = at(i);
    if (!v.present()) {
      lengths.push_back(0);
      continue;
    }
    text.insert(text.end(), v.p, v.p + v.n);
    putVarint(lengths, static_cast<uint64_t>(v.u) + 1);
  }
  pk.column(3, "u");
  pk.key("b");
  pk.bin(text);
  pk.key("l");
  pk.bin(lengths);
  return 'u';
}

// ---- the block ----

struct Columns {
  std::vector<uint8_t> bytes;  // the sections, copied; every Val points into them
  size_t count = 0;
  bool ascii = true;  // every section's text is ASCII (then units = bytes)
  std::vector<double> ts, it, off, idx;
  std::vector<Val> tz, raw;
  std::vector<std::string> names;
  std::unordered_map<std::string, size_t> index;
  std::vector<std::vector<Val>> fields;
};

constexpr int kMinTemplateValue = 2;
constexpr double kMinTemplateCover = 0.25;
/** Per event, at most this many field values are placed (MAX_TEMPLATE_FIELDS). */
constexpr size_t kMaxTemplateFields = 64;
// Blocks with more field columns are left to the JavaScript builder (which gives up templates
// from 0xffff columns on; this bound keeps the per-event set keys small).
constexpr size_t kMaxColumns = 4096;
// Field columns times events, every column padded to the block's length: 8 Mi values (128 MiB of
// views) at most, 37 times what a kv block of 50 columns takes; beyond, the JavaScript builder.
constexpr uint64_t kMaxSlots = 1ull << 23;

// A word byte of UTF-8 text (isWord of its unit: a byte of a non-ASCII character is one), by table.
inline bool wordByte(uint8_t b) { return b >= 0x80 || kAscii.of[b] >= 0x80; }

inline bool cutsRun(Str s, size_t at) {
  return at > 0 && at < s.size() && wordByte(static_cast<uint8_t>(s[at - 1])) && wordByte(static_cast<uint8_t>(s[at]));
}

struct Template {
  std::vector<std::vector<uint32_t>> layouts;
  std::vector<double> layoutIds;
  std::vector<std::vector<Val>> gaps;
  std::vector<uint8_t> clean;
  StrTable pieceGaps;
  std::vector<bool> pieceColumns;
};

// encodeTemplate; false when the values cover too little of the raw text.
bool encodeTemplate(const Columns& c, Template& t) {
  const size_t count = c.count;
  const auto& fields = c.fields;
  const size_t columns = fields.size();
  const size_t width = std::min(columns, kMaxTemplateFields);
  auto value = [&](size_t j, size_t i) -> Val { return i < fields[j].size() ? fields[j][i] : Val(); };
  std::unordered_map<std::string, uint32_t> layouts;
  // The set of an event's placeable columns: any exact key of it will do (JavaScript uses a
  // number up to 30 columns and a string beyond); a 64-bit mask here up to 64 columns, a bit
  // string beyond.
  const bool small = columns <= 64;
  std::unordered_map<uint64_t, uint32_t> bySmallSet;
  std::unordered_map<std::string, uint32_t> byWideSet;
  uint64_t mask = 0;
  std::string set(small ? 0 : (columns + 7) / 8, '\0');
  std::vector<uint8_t> cleanLayouts;
  // Per layout, its last clean event (kNoEvent: none yet).
  constexpr size_t kNoEvent = ~static_cast<size_t>(0);
  std::vector<size_t> lastClean;
  t.layoutIds.assign(count, 0);
  t.clean.assign(count, 0);
  t.pieceColumns.assign(columns, false);
  double covered = 0;
  double total = 0;
  std::vector<uint32_t> cCol(width), cAt(width), cLen(width);
  std::vector<uint32_t> pCol(width), pAt(width), pLen(width);
  size_t nc = 0;
  auto insert = [&](uint32_t j, uint32_t at, uint32_t len, size_t from) {
    size_t k = nc++;
    while (k > from && (cAt[k - 1] > at || (cAt[k - 1] == at && cLen[k - 1] < len))) {
      cCol[k] = cCol[k - 1];
      cAt[k] = cAt[k - 1];
      cLen[k] = cLen[k - 1];
      k--;
    }
    cCol[k] = j;
    cAt[k] = at;
    cLen[k] = len;
  };
  auto piece = [&](const char* p, size_t n) { return Val{p, static_cast<uint32_t>(n), c.ascii ? static_cast<uint32_t>(n) : unitsOf(p, n)}; };
  auto gapAt = [&](size_t p) -> std::vector<Val>& {
    while (t.gaps.size() <= p) t.gaps.emplace_back(count);
    return t.gaps[p];
  };
  for (size_t i = 0; i < count; i++) {
    Str r = c.raw[i].view();
    total += c.raw[i].u;
    mask = 0;
    std::fill(set.begin(), set.end(), '\0');
    for (size_t j = 0; j < columns; j++) {
      Val v = value(j, i);
      if (!v.present() || v.u < kMinTemplateValue) continue;
      if (small) mask |= 1ull << j;
      else set[j >> 3] = static_cast<char>(set[j >> 3] | (1 << (j & 7)));
    }
    int64_t id = -1;
    if (small) {
      auto known = bySmallSet.find(mask);
      if (known != bySmallSet.end()) id = known->second;
    } else {
      auto known = byWideSet.find(set);
      if (known != byWideSet.end()) id = known->second;
    }
    bool same = false;
    size_t placed = 0;
    if (id >= 0) {
      // placeLike
      const auto& cols = t.layouts[static_cast<size_t>(id)];
      size_t pos = 0;
      same = true;
      for (size_t k = 0; k < cols.size(); k++) {
        uint32_t j = cols[k];
        Val v = value(j, i);
        size_t at = r.find(v.view(), pos);
        if (at == Str::npos) {
          same = false;
          break;
        }
        pCol[k] = j;
        pAt[k] = static_cast<uint32_t>(at);
        pLen[k] = v.n;
        pos = at + v.n;
      }
      if (same) placed = cols.size();
    }
    if (!same) {
      // placeAll
      nc = 0;
      for (size_t j = 0; j < columns && nc < width; j++) {
        Val v = value(j, i);
        if (!v.present() || v.u < kMinTemplateValue) continue;
        size_t at = r.find(v.view());
        if (at == Str::npos) continue;
        insert(static_cast<uint32_t>(j), static_cast<uint32_t>(at), v.n, 0);
      }
      size_t pos = 0;
      for (size_t k = 0; k < nc; k++) {
        uint32_t j = cCol[k];
        uint32_t len = cLen[k];
        uint32_t at = cAt[k];
        if (at < pos) {
          size_t again = r.find(value(j, i).view(), pos);
          if (again != Str::npos) {
            size_t rest = nc;
            for (size_t q = k + 1; q < rest; q++) {
              cCol[q - 1] = cCol[q];
              cAt[q - 1] = cAt[q];
              cLen[q - 1] = cLen[q];
            }
            nc = rest - 1;
            insert(j, static_cast<uint32_t>(again), len, k);
            k--;
          }
          continue;
        }
        pCol[placed] = j;
        pAt[placed] = at;
        pLen[placed] = len;
        placed++;
        pos = at + len;
      }
    }
    size_t pos = 0;
    std::string key;
    bool clean = true;
    for (size_t p = 0; p < placed; p++) {
      size_t at = pAt[p];
      gapAt(p)[i] = piece(r.data() + pos, at - pos);
      if (!same) {
        key.push_back(static_cast<char>(pCol[p] & 0xff));
        key.push_back(static_cast<char>(pCol[p] >> 8));
      }
      pos = at + pLen[p];
      covered += value(pCol[p], i).u;
      if (clean && (cutsRun(r, at) || cutsRun(r, pos))) clean = false;
    }
    gapAt(placed)[i] = piece(r.data() + pos, r.size() - pos);
    if (!same) {
      auto found = layouts.find(key);
      if (found == layouts.end()) {
        id = static_cast<int64_t>(layouts.size());
        layouts.emplace(key, static_cast<uint32_t>(id));
        t.layouts.emplace_back(pCol.begin(), pCol.begin() + static_cast<long>(placed));
      } else id = found->second;
      if (small) bySmallSet[mask] = static_cast<uint32_t>(id);
      else byWideSet[set] = static_cast<uint32_t>(id);
    }
    t.layoutIds[i] = static_cast<double>(id);
    if (clean) {
      t.clean[i] = 1;
      // Gaps mostly repeat those of the last clean event of the same layout (every gap of which
      // is in the set already): compare before hashing. Comparing with the event just before
      // missed where layouts interleave (JSON events of a few shapes): the set is the same, and
      // on the peers JSON set this took a fifth of the hashing of a block build.
      if (cleanLayouts.size() <= static_cast<size_t>(id)) {
        cleanLayouts.resize(static_cast<size_t>(id) + 1, 0);
        lastClean.resize(static_cast<size_t>(id) + 1, kNoEvent);
      }
      const size_t prev = lastClean[static_cast<size_t>(id)];
      for (size_t q = 0; q <= placed; q++) {
        Val g = t.gaps[q][i];
        if (prev != kNoEvent && t.gaps[q][prev].view() == g.view()) continue;
        t.pieceGaps.add(g.view());
      }
      lastClean[static_cast<size_t>(id)] = i;
      if (cleanLayouts[static_cast<size_t>(id)] != 1) {
        cleanLayouts[static_cast<size_t>(id)] = 1;
        for (size_t q = 0; q < placed; q++) t.pieceColumns[pCol[q]] = true;
      }
    }
  }
  return covered >= total * kMinTemplateCover;
}

// ---- reading the sections ----

// The field names of a section: a JSON array of strings without escapes; false if it is not that.
bool readNames(Str json, std::vector<Str>& out) {
  size_t i = 0;
  auto ws = [&] {
    while (i < json.size() && (json[i] == ' ' || json[i] == '\n' || json[i] == '\t' || json[i] == '\r')) i++;
  };
  ws();
  if (i >= json.size() || json[i++] != '[') return false;
  ws();
  if (i < json.size() && json[i] == ']') return ++i, ws(), i == json.size();
  for (;;) {
    ws();
    if (i >= json.size() || json[i++] != '"') return false;
    size_t start = i;
    while (i < json.size() && json[i] != '"') {
      if (json[i] == '\\' || static_cast<uint8_t>(json[i]) < 0x20) return false;
      i++;
    }
    if (i >= json.size()) return false;
    out.emplace_back(json.data() + start, i - start);
    i++;
    ws();
    if (i >= json.size()) return false;
    if (json[i] == ',') {
      i++;
      continue;
    }
    if (json[i] != ']') return false;
    i++;
    ws();
    return i == json.size();
  }
}

bool isAscii(const char* p, size_t n) {
  uint64_t high = 0;
  size_t q = 0;
  for (; q + 8 <= n; q += 8) {
    uint64_t w;
    std::memcpy(&w, p + q, 8);
    high |= w;
  }
  for (; q < n; q++) high |= static_cast<uint8_t>(p[q]);
  return (high & 0x8080808080808080ull) == 0;
}

// Well-formed UTF-8 (no overlong forms, no encoded surrogates, nothing past U+10FFFF).
bool validUtf8(const uint8_t* p, size_t n) {
  size_t i = 0;
  auto cont = [&](size_t at) { return at < n && (p[at] & 0xc0) == 0x80; };
  while (i < n) {
    uint8_t b = p[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    size_t width;
    uint8_t lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (b >= 0xc2 && b <= 0xdf) width = 2;
    else if (b == 0xe0) width = 3, lo = 0xa0;
    else if ((b >= 0xe1 && b <= 0xec) || b == 0xee || b == 0xef) width = 3;
    else if (b == 0xed) width = 3, hi = 0x9f;
    else if (b == 0xf0) width = 4, lo = 0x90;
    else if (b >= 0xf1 && b <= 0xf3) width = 4;
    else if (b == 0xf4) width = 4, hi = 0x8f;
    else return false;
    if (i + 1 >= n || p[i + 1] < lo || p[i + 1] > hi) return false;
    for (size_t k = 2; k < width; k++)
      if (!cont(i + k)) return false;
    i += width;
  }
  return true;
}

inline uint32_t le32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24); }

// Appends a section's events from `skip` on (appendColumns); false to decline.
bool appendSection(Columns& c, const uint8_t* b, size_t len, size_t skip, double at, double offset, double base) {
  if (len < 9 || b[0] != 3) return false;
  uint64_t n = le32(b + 1);
  uint64_t namesEnd = 9ull + le32(b + 5);
  if (namesEnd > len) return false;
  std::vector<Str> names;
  if (!readNames(Str(reinterpret_cast<const char*>(b + 9), namesEnd - 9), names)) return false;
  // Sizes checked by division, so that no product can wrap.
  if (n > (len - namesEnd) / 8) return false;
  const uint64_t lengthsAt = namesEnd + n * 8;
  const uint64_t perEvent = 2 + names.size();
  if (n > 0 && perEvent > (len - lengthsAt) / 4 / n) return false;
  const uint64_t strings = n * perEvent;
  const uint64_t textAt = lengthsAt + strings * 4;
  // The JavaScript encoder writes each name once; a repeated one is damage (the JavaScript reader
  // refuses it too).
  {
    std::unordered_set<Str> distinct(names.begin(), names.end());
    if (distinct.size() != names.size()) return false;
  }
  // A NaN timestamp is never written; JavaScript would also quiet a signalling one on reading.
  for (uint64_t i = 0; i < n; i++) {
    double ts;
    std::memcpy(&ts, b + namesEnd + i * 8, 8);
    if (std::isnan(ts)) return false;
  }
  const char* text = reinterpret_cast<const char*>(b + textAt);
  const size_t textLen = len - textAt;
  // Where the text is not ASCII it must be valid UTF-8 (what JavaScript wrote; anything else the
  // JavaScript builder decodes, replacing what it must), and the lower-casing table is needed.
  const bool ascii = isAscii(text, textLen);
  if (!ascii && (!gLowerSet.load(std::memory_order_acquire) || !validUtf8(reinterpret_cast<const uint8_t*>(text), textLen))) return false;
  if (!validUtf8(b + 9, namesEnd - 9)) return false;
  c.ascii = c.ascii && ascii;
  size_t pos = 0;
  size_t k = 0;
  auto next = [&](Val& v) -> bool {
    uint32_t l = le32(b + lengthsAt + 4 * k++);
    if (l == 0) {
      v = Val();
      return true;
    }
    const uint32_t units = l - 1;
    if (ascii) {
      if (pos + units > textLen) return false;
      v = Val{text + pos, units, units};
      pos += units;
      return true;
    }
    // Advance `units` UTF-16 units; a boundary inside a 4-byte character would split a
    // surrogate pair into two lone halves, which only the JavaScript builder can hold.
    size_t end = pos;
    uint32_t left = units;
    while (left > 0) {
      if (end >= textLen) return false;
      uint8_t lead = static_cast<uint8_t>(text[end]);
      size_t width = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
      uint32_t take = width == 4 ? 2 : 1;
      if (take > left) return false;
      left -= take;
      end += width;
    }
    v = Val{text + pos, static_cast<uint32_t>(end - pos), units};
    pos = end;
    return true;
  };
  // Decoded a column at a time into one scratch vector, each appended to the block in one copy
  // (a vector per column and a push_back per value were an eighth of a JSON block's build). A
  // false return leaves `c` half-appended: the caller then declines the whole block.
  std::vector<Val> vals(n);
  const size_t start = c.count;
  auto column = [&](std::vector<Val>& dst) -> bool {
    for (size_t i = 0; i < n; i++)
      if (!next(vals[i]) || !vals[i].present()) return false;
    dst.insert(dst.end(), vals.begin() + static_cast<long>(skip), vals.end());
    return true;
  };
  if (!column(c.tz) || !column(c.raw)) return false;
  for (size_t i = skip; i < n; i++) {
    double ts;
    std::memcpy(&ts, b + namesEnd + i * 8, 8);
    c.ts.push_back(ts);
    c.it.push_back(at);
    c.off.push_back(offset);
    c.idx.push_back(base + static_cast<double>(i));
  }
  for (size_t j = 0; j < names.size(); j++) {
    for (size_t i = 0; i < n; i++)
      if (!next(vals[i])) return false;
    size_t first = skip;
    while (first < n && !vals[first].present()) first++;
    if (first >= n) continue;
    std::string name(names[j]);
    auto found = c.index.find(name);
    size_t col;
    if (found == c.index.end()) {
      col = c.fields.size();
      if (col >= kMaxColumns) return false;
      c.index.emplace(name, col);
      c.names.push_back(name);
      c.fields.emplace_back();
    } else col = found->second;
    auto& dst = c.fields[col];
    // Columns are padded to the block's length: bound what that may take.
    if (static_cast<uint64_t>(c.fields.size()) * (start + n) > kMaxSlots) return false;
    dst.resize(start);
    dst.insert(dst.end(), vals.begin() + static_cast<long>(skip), vals.end());
  }
  if (pos != textLen) return false;
  if (n > skip) c.count += n - skip;
  return true;
}

struct Built {
  std::vector<uint8_t> body, bloom, grams;
  double minTs, maxTs;
};

// encodeBlock without the LZ4 and the header.
void encodeBody(const Columns& c, Built& out) {
  Bloom bloom;
  Grams grams;
  Template t;
  bool templated = encodeTemplate(c, t);
  double minTs = INFINITY, maxTs = -INFINITY;
  for (size_t i = 0; i < c.count; i++) {
    double ts = c.ts[i];
    if (ts < minTs) minTs = ts;
    if (ts > maxTs) maxTs = ts;
    if (templated && t.clean[i] == 1) continue;
    indexText(bloom, grams, c.raw[i].view(), false, c.raw[i].u == c.raw[i].n);
  }
  if (templated) {
    for (Str g : t.pieceGaps.values()) {
      indexText(bloom, grams, g, false, c.ascii);
    }
  }
  // The field columns are written after the rest of the body, but encoded first (as in
  // JavaScript) so their dictionaries feed the bloom filter.
  Pack fieldsPack;
  fieldsPack.array(c.fields.size());
  for (size_t j = 0; j < c.fields.size(); j++) {
    fieldsPack.array(2);
    fieldsPack.str(c.names[j]);
    std::vector<Str> dict;
    bool isDict = packStrings(fieldsPack, c.fields[j], c.count, templated ? nullptr : &c.raw, &dict) == 'k';
    // Format 4: every field value's grams (free text searches the stored fields).
    if (isDict) {
      for (Str v : dict) {
        indexText(bloom, grams, v, true, c.ascii);
      }
      continue;
    }
    const auto& col = c.fields[j];
    StrTable seen(col.size());
    for (const Val& v : col) {
      if (!v.present()) continue;
      if (!seen.add(v.view())) continue;
      indexText(bloom, grams, v.view(), true, v.u == v.n);
    }
  }
  Pack pk;
  pk.out.reserve(c.count * 64);
  pk.map(8);
  pk.key("n");
  pk.num(static_cast<double>(c.count));
  pk.key("ts");
  packNumbers(pk, c.ts);
  pk.key("tz");
  packStrings(pk, c.tz, c.count, nullptr, nullptr);
  pk.key("raw");
  if (templated) {
    pk.column(4, "t");
    pk.key("t");
    pk.array(t.layouts.size());
    for (const auto& l : t.layouts) {
      pk.array(l.size());
      for (uint32_t j : l) pk.num(j);
    }
    pk.key("li");
    packNumbers(pk, t.layoutIds);
    pk.key("g");
    pk.array(t.gaps.size());
    for (const auto& g : t.gaps) packStrings(pk, g, c.count, nullptr, nullptr);
  } else {
    std::vector<uint8_t> b;
    std::vector<double> lengths(c.count);
    for (size_t i = 0; i < c.count; i++) {
      b.insert(b.end(), c.raw[i].p, c.raw[i].p + c.raw[i].n);
      lengths[i] = c.raw[i].n;
    }
    pk.column(3, "j");
    pk.key("b");
    pk.bin(b);
    pk.key("l");
    packNumbers(pk, lengths);
  }
  pk.key("it");
  packNumbers(pk, c.it);
  pk.key("off");
  packNumbers(pk, c.off);
  pk.key("idx");
  packNumbers(pk, c.idx);
  pk.key("fields");
  pk.raw(fieldsPack.out.data(), fieldsPack.out.size());
  out.body = std::move(pk.out);
  out.bloom = bloom.build();
  out.grams = grams.build();
  out.minTs = minTs;
  out.maxTs = maxTs;
}

// ---- N-API ----

#define CHECK(call)                          \
  do {                                       \
    if ((call) != napi_ok) return nullptr;   \
  } while (0)

napi_value copyBuffer(napi_env env, const std::vector<uint8_t>& v) {
  napi_value out;
  void* data;
  if (napi_create_buffer_copy(env, v.size(), v.empty() ? "" : static_cast<const void*>(v.data()), &data, &out) != napi_ok) return nullptr;
  return out;
}

bool numberProp(napi_env env, napi_value obj, const char* name, double& out) {
  napi_value v;
  if (napi_get_named_property(env, obj, name, &v) != napi_ok) return false;
  return napi_get_value_double(env, v, &out) == napi_ok;
}

bool setNumber(napi_env env, napi_value obj, const char* name, double v) {
  napi_value n;
  return napi_create_double(env, v, &n) == napi_ok && napi_set_named_property(env, obj, name, n) == napi_ok;
}

napi_value Build(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  napi_value nul;
  CHECK(napi_get_null(env, &nul));
  bool isArray = false;
  if (argc < 1 || napi_is_array(env, argv[0], &isArray) != napi_ok || !isArray) {
    napi_throw_type_error(env, nullptr, "build(parts): parts must be an array");
    return nullptr;
  }
  uint32_t parts;
  CHECK(napi_get_array_length(env, argv[0], &parts));
  // First every property (a getter could run JavaScript), then the bytes (no JavaScript runs from
  // there on). The sections are copied into one buffer the build owns, so that what was validated
  // is what is read even if a shared buffer changed meanwhile (~1 MB per block: a memcpy).
  struct Part {
    napi_value events;
    double offset, base, skip, at;
  };
  std::vector<Part> list(parts);
  for (uint32_t p = 0; p < parts; p++) {
    napi_value part;
    CHECK(napi_get_element(env, argv[0], p, &part));
    CHECK(napi_get_named_property(env, part, "events", &list[p].events));
    if (!numberProp(env, part, "offset", list[p].offset) || !numberProp(env, part, "base", list[p].base) || !numberProp(env, part, "skip", list[p].skip) ||
        !numberProp(env, part, "at", list[p].at))
      return nul;
    const double skip = list[p].skip;
    if (!(skip >= 0 && skip <= 4294967295.0) || skip != std::floor(skip)) return nul;
  }
  std::vector<std::pair<const uint8_t*, size_t>> views(parts);
  size_t total = 0;
  for (uint32_t p = 0; p < parts; p++) {
    bool typed = false;
    if (napi_is_typedarray(env, list[p].events, &typed) != napi_ok || !typed) return nul;
    napi_typedarray_type type;
    size_t length;
    void* data;
    CHECK(napi_get_typedarray_info(env, list[p].events, &type, &length, &data, nullptr, nullptr));
    if (type != napi_uint8_array || (length > 0 && data == nullptr)) return nul;
    views[p] = {static_cast<const uint8_t*>(data), length};
    total += length;
  }
  Columns c;
  Built built;
  try {
    c.bytes.resize(total);
    size_t at = 0;
    for (uint32_t p = 0; p < parts; p++) {
      if (views[p].second > 0) std::memcpy(c.bytes.data() + at, views[p].first, views[p].second);
      if (!appendSection(c, c.bytes.data() + at, views[p].second, static_cast<size_t>(list[p].skip), list[p].at, list[p].offset, list[p].base)) return nul;
      at += views[p].second;
    }
    if (c.count == 0) return nul;
    encodeBody(c, built);
  } catch (const std::exception&) {
    // Out of memory on a block that asks for too much: the JavaScript builder decides.
    return nul;
  }
  napi_value out;
  CHECK(napi_create_object(env, &out));
  napi_value body = copyBuffer(env, built.body), bloom = copyBuffer(env, built.bloom), grams = copyBuffer(env, built.grams);
  if (body == nullptr || bloom == nullptr || grams == nullptr) return nullptr;
  CHECK(napi_set_named_property(env, out, "body", body));
  CHECK(napi_set_named_property(env, out, "bloom", bloom));
  CHECK(napi_set_named_property(env, out, "grams", grams));
  if (!setNumber(env, out, "count", static_cast<double>(c.count)) || !setNumber(env, out, "minTs", built.minTs) || !setNumber(env, out, "maxTs", built.maxTs) ||
      !setNumber(env, out, "firstOffset", c.off.front()) || !setNumber(env, out, "firstIndex", c.idx.front()) || !setNumber(env, out, "lastOffset", c.off.back()) ||
      !setNumber(env, out, "lastIndex", c.idx.back()))
    return nullptr;
  return out;
}

// setLower(table): JavaScript's lower-casing of every UTF-16 unit (a Uint16Array of 65536), once
// per process before non-ASCII text can be built. Until then such blocks are declined.
napi_value SetLower(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  bool typed = false;
  napi_typedarray_type type = napi_int8_array;
  size_t length = 0;
  void* data = nullptr;
  if (argc < 1 || napi_is_typedarray(env, argv[0], &typed) != napi_ok || !typed ||
      napi_get_typedarray_info(env, argv[0], &type, &length, &data, nullptr, nullptr) != napi_ok || type != napi_uint16_array || length != 65536) {
    napi_throw_type_error(env, nullptr, "setLower(table): table must be a Uint16Array of 65536 units");
    return nullptr;
  }
  // Every worker thread may set it; the bytes never differ, so the first one wins.
  std::call_once(gLowerOnce, [data] {
    std::memcpy(gLower, data, sizeof gLower);
    gLowerSet.store(true, std::memory_order_release);
  });
  napi_value undefined;
  CHECK(napi_get_undefined(env, &undefined));
  return undefined;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "build", NAPI_AUTO_LENGTH, Build, nullptr, &fn) != napi_ok) return nullptr;
  if (napi_set_named_property(env, exports, "build", fn) != napi_ok) return nullptr;
  if (napi_create_function(env, "setLower", NAPI_AUTO_LENGTH, SetLower, nullptr, &fn) != napi_ok) return nullptr;
  if (napi_set_named_property(env, exports, "setLower", fn) != napi_ok) return nullptr;
  return exports;
}

}  // namespace

NAPI_MODULE_INIT() { return Init(env, exports); }
