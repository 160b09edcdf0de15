// Structured ingest in C++: a request body of `[{"tags": {...}, "events": [{timestamp, attributes,
// rawstring}, ...]}, ...]` parsed straight into the queue record's version-3 sections
// (src/events/record.ts), without making a JavaScript value per event. The JavaScript path
// (src/ingest/structured.ts: JSON.parse, flattenInto, buildEvent, then the record's toColumns and
// encodeSection) makes the same bytes; test/unit/ingest/native-structured.test.ts holds the two
// side by side, and the JavaScript path stays the oracle and the fallback.
//
// It takes the common case only and declines the rest (returns null; JavaScript then does the whole
// request, so every error message and every rare rule stays in one place). It declines when:
//   - the body is not valid JSON, nests deeper than the limit, or holds invalid UTF-8 or a lone
//     surrogate in a string it keeps;
//   - an item or event is not an object, `events` is missing or not an array, or a key it reads
//     ("tags", "events", "timestamp", "timezone", "attributes", "rawstring") repeats;
//   - an event's timestamp is neither a number within ±8.64e15 nor an ISO 8601 date-time with a
//     zone (timestamps.ts parseIsoTimestamp), it has a numeric timestamp and a timezone other than
//     null, no string rawstring (JavaScript would make one with JSON.stringify), or attributes
//     that are neither an object nor null;
//   - an attribute key is an array index (V8 enumerates those first), repeats within its object
//     (JSON.parse keeps the last value at the first one's place), or holds a quote, backslash or
//     control character (the section's names are JSON, and those would need escapes);
//   - an event has more fields than the limit, or its field names alone or the whole event are
//     larger than the event size limit (the JavaScript path marks it with @error);
//   - the request has more events or items than the event limit, an item's events x field names
//     pass a section's bound (16 Mi, record.ts MAX_SECTION_STRINGS), or its names pass 64 MiB;
//   - two items have the same tags (the TypeScript side declines: JavaScript merges them);
//   - a number does not convert (out of double range, or to zero from a non-zero literal).
// Tags are not read here: the byte range of each item's tags value is returned, and JavaScript
// validates them (src/ingest/tags.ts) and names the datasource.
//
// Speed: the body is copied once (a shared buffer may change under the parse) and strings are
// decoded in place in that copy, eight bytes at a time up to a quote, backslash, control or
// non-ASCII byte; values stay where they are until the section is written. On the bench datasets
// this is 1.1 (accesslog) to 4.6 (json) µs per event, against 1.8 to 5.1 for JSON.parse alone.
// Keys and names are hashed with SipHash-1-3 under a random key (see KeyedHash).
//
// Field names and values are flattened as src/ingest/flatten.ts does: `a.b` for members (a member
// of a nameless parent is just its key), `a[0]` for elements, null skipped, a primitive without a
// name or with a name of more than 4,096 UTF-16 units skipped, numbers as JavaScript's
// String(number), booleans as "true"/"false".
//
// A second entry point, parseDoor, reads Splunk HEC event bodies and Elasticsearch bulk bodies
// into the same sections (see DoorParser below and native/README.md).
//
// Entry point: parse(body, maxEvents, maxEventBytes, maxFields, maxDepth) giving
// [{tagsStart, tagsEnd, n, b, section}] per item (tagsEnd 0 when the item has no tags; no section
// when it has no events) or null.
#include <node_api.h>

#include <charconv>
#include <random>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

using Str = std::string_view;

// Thrown anywhere to decline; caught at the module boundary.
struct Decline {};

[[noreturn]] void decline() { throw Decline{}; }

// The largest JavaScript date, and the timestamp bound of structured.ts.
constexpr double kMaxTimestamp = 8.64e15;
// Section layout (record.ts).
constexpr uint8_t kSectionVersion = 3;
constexpr size_t kSectionHead = 9;
// Up to this many keys an object's keys are compared one by one; past it, hashed.
constexpr size_t kLinearKeys = 16;
// Lengths in one section at most (see encodeSection).
constexpr uint64_t kMaxStrings = 1ull << 24;
// Longest field name JavaScript stores (src/ingest/limits.ts MAX_FIELD_NAME_CHARS).
constexpr size_t kMaxNameChars = 4096;
// Bytes of field names in one item at most (each is kept twice: in its column and in the index).
constexpr uint64_t kMaxNameBytes = 64ull << 20;

struct Limits {
  double maxEvents;
  double maxEventBytes;
  double maxFields;
  double maxDepth;
};

// SipHash-1-3 (Aumasson and Bernstein's keyed hash, 1 compression and 3 finalization rounds) with
// a random key per process: keys and field names come from the sender, and with an unkeyed hash
// (std::hash) colliding names can be made offline, which turned a 6 MB body of 40,000 colliding
// keys into seconds of quadratic work.
class KeyedHash {
 public:
  size_t operator()(Str s) const { return static_cast<size_t>(hash(reinterpret_cast<const uint8_t*>(s.data()), s.size())); }
  size_t operator()(const std::string& s) const { return (*this)(Str(s)); }

 private:
  struct Key {
    uint64_t k0, k1;
  };
  static const Key& key() {
    static const Key k = [] {
      std::random_device rd;
      auto word = [&rd] { return (static_cast<uint64_t>(rd()) << 32) ^ rd(); };
      return Key{word(), word()};
    }();
    return k;
  }
  static inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
  static inline void round(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  static uint64_t hash(const uint8_t* in, size_t len) {
    const Key& k = key();
    uint64_t v0 = 0x736f6d6570736575ull ^ k.k0, v1 = 0x646f72616e646f6dull ^ k.k1;
    uint64_t v2 = 0x6c7967656e657261ull ^ k.k0, v3 = 0x7465646279746573ull ^ k.k1;
    size_t whole = len & ~static_cast<size_t>(7);
    for (size_t i = 0; i < whole; i += 8) {
      uint64_t m;
      std::memcpy(&m, in + i, 8);
      v3 ^= m;
      round(v0, v1, v2, v3);
      v0 ^= m;
    }
    uint64_t last = static_cast<uint64_t>(len) << 56;
    for (size_t i = whole; i < len; i++) last |= static_cast<uint64_t>(in[i]) << (8 * (i - whole));
    v3 ^= last;
    round(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    round(v0, v1, v2, v3);
    round(v0, v1, v2, v3);
    round(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

// A string kept for the section: UTF-8 bytes, and its length in UTF-16 units. Most are in the
// parser's copy of the body (strings decoded in place, number and boolean literals as they are);
// an offset with kInArena set is into the arena (numbers that print otherwise than written).
constexpr uint32_t kInArena = 0x80000000u;
struct Span {
  uint32_t off = 0;
  uint32_t bytes = 0;
  uint32_t units = 0;
};

struct Entry {
  uint32_t event;
  Span v;
};

struct Column {
  std::string name;
  uint32_t units;  // the name's UTF-16 length
  std::vector<Entry> vals;  // by event, ascending
};

constexpr uint32_t kNoColumn = 0xffffffffu;

struct Item {
  size_t tagsStart = 0;
  size_t tagsEnd = 0;
  uint32_t n = 0;
  std::vector<double> ts;
  std::vector<Span> raw;
  std::vector<Span> tz;
  std::vector<Column> cols;
  std::unordered_map<std::string, uint32_t, KeyedHash> index;
  uint64_t nameBytes = 0;  // of all columns' names
  // Per column (index j + 1; 0 for an event's start), the column whose value came next the last
  // time: events of a few shapes, interleaved, name the same fields in the same order, so a name is
  // first compared with the one that followed the previous name (a SipHash of every name and a map
  // lookup were a fifth of the parse of a peers JSON body). `prev`: the current event's last column + 1.
  std::vector<uint32_t> next;
  uint32_t prev = 0;
};

// The keys of one object, to find a repeat.
class KeySet {
 public:
  void clear() {
    list_.clear();
    set_.clear();
  }
  // False when `k` was already there.
  bool add(Str k) {
    if (list_.size() < kLinearKeys) {
      for (Str x : list_) if (x == k) return false;
      list_.push_back(k);
      if (list_.size() == kLinearKeys) set_.insert(list_.begin(), list_.end());
      return true;
    }
    return set_.insert(k).second;
  }

 private:
  std::vector<Str> list_;
  std::unordered_set<Str, KeyedHash> set_;
};

// Whether JSON.stringify escapes something in `k` (a field name goes into the section as JSON).
bool needsEscape(Str k) {
  for (char c : k) {
    if (c == '"' || c == '\\' || static_cast<uint8_t>(c) < 0x20) return true;
  }
  return false;
}

inline bool isSpace(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
inline bool isDigit(uint8_t c) { return c >= '0' && c <= '9'; }

// A canonical array index ("0", "17", at most 4294967294): V8 enumerates such keys first.
bool isArrayIndex(Str k) {
  if (k.empty() || k.size() > 10) return false;
  if (k.size() > 1 && k[0] == '0') return false;
  uint64_t v = 0;
  for (char c : k) {
    if (!isDigit(static_cast<uint8_t>(c))) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v <= 4294967294ull;
}

// Length of a valid UTF-8 sequence starting at p (first byte >= 0x80), or 0; adds its UTF-16 units.
inline size_t utf8Sequence(const uint8_t* p, const uint8_t* end, uint32_t& units) {
  uint8_t c = p[0];
  size_t left = static_cast<size_t>(end - p);
  if (c >= 0xc2 && c <= 0xdf) {
    if (left < 2 || (p[1] & 0xc0) != 0x80) return 0;
    units += 1;
    return 2;
  }
  if (c >= 0xe0 && c <= 0xef) {
    if (left < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && p[1] < 0xa0) return 0;   // overlong
    if (c == 0xed && p[1] >= 0xa0) return 0;  // a surrogate
    units += 1;
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (left < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80) return 0;
    if (c == 0xf0 && p[1] < 0x90) return 0;   // overlong
    if (c == 0xf4 && p[1] >= 0x90) return 0;  // past U+10FFFF
    units += 2;
    return 4;
  }
  return 0;
}

// ---- ISO 8601 timestamps, as src/ingest/timestamps.ts parseIsoTimestamp(text, {requireZone: true})

// n digits at pos as a number, or -1 (also past the end).
int digitsAt(Str t, size_t pos, size_t n) {
  if (pos + n > t.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; i++) {
    if (!isDigit(static_cast<uint8_t>(t[i]))) return -1;
    v = v * 10 + (t[i] - '0');
  }
  return v;
}

inline int charAt(Str t, size_t pos) { return pos < t.size() ? static_cast<uint8_t>(t[pos]) : -1; }

bool isLeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int daysInMonth(int y, int m) {
  if (m == 2) return isLeapYear(y) ? 29 : 28;
  return m == 4 || m == 6 || m == 9 || m == 11 ? 30 : 31;
}

// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's days_from_civil); years 0-9999.
int64_t daysFromCivil(int64_t year, int64_t month, int64_t day) {
  int64_t y = month <= 2 ? year - 1 : year;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// timestamps.ts matchIsoTimestampAt: `yyyy-MM-dd(T|t| )HH:mm[:ss[(.|,)f{1,9}]][Z|z|±hh[[:]mm]]`
// starting exactly at `pos`, without looking past its end: ms UTC, the zone ("Z", or the offset as
// "±hh:mm"; hasZone false when none is written) and `end`, just past the match; false when the text
// there is not one (impossible dates and a bad offset included).
bool isoTimestampAt(Str t, size_t pos, double& ms, std::string& zone, bool& hasZone, size_t& end) {
  int year = digitsAt(t, pos, 4);
  if (year < 0 || charAt(t, pos + 4) != '-') return false;
  int month = digitsAt(t, pos + 5, 2);
  if (month < 0 || charAt(t, pos + 7) != '-') return false;
  int day = digitsAt(t, pos + 8, 2);
  if (day < 0) return false;
  int sep = charAt(t, pos + 10);
  if (sep != 'T' && sep != 't' && sep != ' ') return false;
  int hour = digitsAt(t, pos + 11, 2);
  if (hour < 0 || charAt(t, pos + 13) != ':') return false;
  int minute = digitsAt(t, pos + 14, 2);
  if (minute < 0) return false;
  size_t p = pos + 16;
  int second = 0, millis = 0;
  if (charAt(t, p) == ':') {
    second = digitsAt(t, p + 1, 2);
    if (second < 0) return false;
    p += 3;
    int dot = charAt(t, p);
    if (dot == '.' || dot == ',') {
      size_t q = p + 1;
      while (q < t.size() && isDigit(static_cast<uint8_t>(t[q]))) q++;
      size_t n = q - (p + 1);
      if (n < 1 || n > 9) return false;
      for (size_t i = 0; i < 3; i++) millis = millis * 10 + (i < n ? t[p + 1 + i] - '0' : 0);  // truncated
      p = q;
    }
  }
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  double local = static_cast<double>(daysFromCivil(year, month, day) * 86400000 + ((hour * 60 + minute) * 60 + second) * 1000 + millis);
  int z = charAt(t, p);
  if (z == 'Z' || z == 'z') {
    ms = local;
    zone = "Z";
    hasZone = true;
    end = p + 1;
    return true;
  }
  if (z != '+' && z != '-') {
    ms = local;
    hasZone = false;
    end = p;
    return true;
  }
  int hours = digitsAt(t, p + 1, 2);
  if (hours < 0 || hours > 18) return false;
  int minutes = 0;
  size_t e = p + 3;
  if (charAt(t, e) == ':') {
    minutes = digitsAt(t, e + 1, 2);
    if (minutes < 0) return false;
    e += 3;
  } else {
    int m = digitsAt(t, e, 2);
    if (m >= 0) {
      minutes = m;
      e += 2;
    }
  }
  if (minutes > 59 || (hours == 18 && minutes > 0)) return false;
  double total = hours * 60 + minutes;
  double signedMinutes = z == '-' ? -total : total;  // -0 as in JavaScript
  ms = local - signedMinutes * 60000;
  char text[7] = {static_cast<char>(z), static_cast<char>('0' + hours / 10), static_cast<char>('0' + hours % 10), ':',
                  static_cast<char>('0' + minutes / 10), static_cast<char>('0' + minutes % 10), 0};
  zone.assign(text, 6);
  hasZone = true;
  end = e;
  return true;
}

// parseIsoTimestamp(text, {requireZone: true}): the whole text, with a zone.
bool isoTimestamp(Str t, double& ms, std::string& zone) {
  bool hasZone = false;
  size_t end = 0;
  return isoTimestampAt(t, 0, ms, zone, hasZone, end) && hasZone && end == t.size();
}

// ---- The built-in kv parser (src/ingest/parsers/kv.ts, kv-pairs.ts), on UTF-8 bytes: every
// character it looks for (digits, "=", quotes, backslash, whitespace, key characters) is ASCII, and
// no UTF-8 byte of another character is ASCII, so scanning bytes finds what scanning UTF-16 units
// finds, and every cut falls between characters. Only the timestamp window (128 UTF-16 units) is
// counted in units.

// Bytes of the UTF-8 sequence a lead byte starts (the text is valid UTF-8: decoded by string()).
inline size_t utf8Length(uint8_t lead) { return lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4; }

// kv.ts findLeadingTimestamp: the first ISO 8601 date-time with a zone that starts within the first
// 128 UTF-16 units, not glued to digits on either side.
bool leadingTimestamp(Str t, double& ms, std::string& zone) {
  constexpr uint32_t kWindowUnits = 128;
  uint32_t units = 0;
  for (size_t i = 0; i < t.size() && units < kWindowUnits;) {
    uint8_t c = static_cast<uint8_t>(t[i]);
    if (isDigit(c) && (i == 0 || !isDigit(static_cast<uint8_t>(t[i - 1])))) {
      bool hasZone = false;
      size_t end = 0;
      if (isoTimestampAt(t, i, ms, zone, hasZone, end) && hasZone && !(end < t.size() && isDigit(static_cast<uint8_t>(t[end])))) return true;
    }
    size_t len = utf8Length(c);
    units += len == 4 ? 2 : 1;
    i += len;
  }
  return false;
}

// kv-pairs.ts CHAR_CLASS: key characters [A-Za-z0-9_.@-], of which [A-Za-z_@] may start a key.
constexpr uint8_t kKeyChar = 1, kKeyStart = 2;
inline uint8_t keyClass(uint8_t c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '@') return kKeyChar | kKeyStart;
  if ((c >= '0' && c <= '9') || c == '.' || c == '-') return kKeyChar;
  return 0;
}
// chars.ts isWhitespace: space, tab, newline, vertical tab, form feed, carriage return.
inline bool isKvSpace(uint8_t c) { return c == ' ' || (c >= 9 && c <= 13); }

// The parser a door's message goes through, when no custom parser is in play (parsers/index.ts
// builtInParser: unknown names are kv).
enum class BuiltIn { kNone, kKv, kOther };
BuiltIn builtInParser(Str name) {
  if (name == "none") return BuiltIn::kNone;
  if (name == "json" || name == "accesslog" || name == "syslog") return BuiltIn::kOther;
  return BuiltIn::kKv;
}

// The UTF-16 length of valid UTF-8.
uint32_t utf16Length(Str text) {
  uint32_t units = 0;
  const uint8_t* e = reinterpret_cast<const uint8_t*>(text.data()) + text.size();
  for (const uint8_t* q = reinterpret_cast<const uint8_t*>(text.data()); q < e;) {
    if (*q < 0x80) {
      units++;
      q++;
    } else {
      size_t len = utf8Sequence(q, e, units);
      if (len == 0) decline();
      q += len;
    }
  }
  return units;
}

// JavaScript's Number::toString(10) of a finite double: the shortest digits that read back as the
// value (std::to_chars gives the same digits), laid out by the ECMAScript rules.
void appendJsNumber(double v, std::string& out) {
  if (v == 0) {
    out.push_back('0');  // also -0
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  if (r.ec != std::errc()) decline();
  const char* s = buf;
  const char* e = r.ptr;
  bool negative = *s == '-';
  if (negative) s++;
  char digits[32];
  int k = 0;
  const char* q = s;
  for (; q < e && *q != 'e'; q++) {
    if (*q == '.') continue;
    if (k == static_cast<int>(sizeof digits)) decline();
    digits[k++] = *q;
  }
  if (q == e) decline();
  // The exponent: a sign, then digits up to the end (to_chars writes no terminating NUL).
  q++;
  bool down = q < e && *q == '-';
  if (q < e && (*q == '-' || *q == '+')) q++;
  int exp10 = 0;
  for (; q < e; q++) exp10 = exp10 * 10 + (*q - '0');
  if (down) exp10 = -exp10;
  int n = exp10 + 1;  // value = 0.digits x 10^n
  if (negative) out.push_back('-');
  if (k <= n && n <= 21) {
    out.append(digits, static_cast<size_t>(k));
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, static_cast<size_t>(n));
    out.push_back('.');
    out.append(digits + n, static_cast<size_t>(k - n));
  } else if (-6 < n && n <= 0) {
    out.append("0.");
    out.append(static_cast<size_t>(-n), '0');
    out.append(digits, static_cast<size_t>(k));
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out.append(digits + 1, static_cast<size_t>(k - 1));
    }
    out.push_back('e');
    int x = n - 1;
    out.push_back(x < 0 ? '-' : '+');
    out.append(std::to_string(x < 0 ? -x : x));
  }
}

// `text` (valid UTF-8, no lone surrogates) as JSON.stringify writes a string: quote, backslash and
// control characters escaped (\b \f \n \r \t, else \u00xx in lower case), the rest as it is.
void appendJsonString(std::string& out, const char* text, size_t n) {
  static const char hex[] = "0123456789abcdef";
  out.push_back('"');
  size_t from = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = static_cast<uint8_t>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text + from, i - from);
    from = i + 1;
    out.push_back('\\');
    switch (c) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '\b': out.push_back('b'); break;
      case '\f': out.push_back('f'); break;
      case '\n': out.push_back('n'); break;
      case '\r': out.push_back('r'); break;
      case '\t': out.push_back('t'); break;
      default:
        out.append("u00");
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    }
  }
  out.append(text + from, n - from);
  out.push_back('"');
}

class Parser {
 public:
  // `data` is the parser's own copy of the body: strings are decoded in place (a decoded string is
  // never longer than its JSON), so it must stay alive and unchanged while the spans are read.
  Parser(uint8_t* data, size_t length, Limits limits) : base_(data), p_(data), end_(data + length), lim_(limits) {
    zoneZ_.off = kInArena;
    zoneZ_.bytes = zoneZ_.units = 1;
    arena.push_back('Z');
  }

  std::vector<Item> items;
  std::string arena;  // numbers that print otherwise than written

  const char* text(const Span& s) const {
    return (s.off & kInArena) != 0 ? arena.data() + (s.off & ~kInArena) : reinterpret_cast<const char*>(base_) + s.off;
  }

  void parseBody() {
    ws();
    array([&](uint64_t) {
      // Items without events count towards no other bound (JavaScript refuses this many).
      if (static_cast<double>(items.size()) >= lim_.maxEvents) decline();
      items.emplace_back();
      parseItem(items.back());
    });
    ws();
    if (p_ != end_) decline();
    // Offsets into the arena are 31-bit (numbers can grow: "1e20" is 21 characters).
    if (arena.size() >= kInArena) decline();
  }

 protected:
  uint8_t* base_;
  uint8_t* p_;
  uint8_t* end_;
  Limits lim_;
  int depth_ = 0;
  double events_ = 0;
  std::string name_;  // the field name being built
  std::vector<KeySet> keys_;  // one per attribute nesting level
  // The current event: its index, distinct fields, and the columns it set.
  uint32_t event_ = 0;
  uint32_t fields_ = 0;
  uint64_t eventNameBytes_ = 0;
  std::string zoneText_;
  Span zoneZ_;  // "Z", the zone of a numeric timestamp
  std::vector<uint32_t> touched_;
  // While set, the values walked are also written here as JSON.stringify writes them (a HEC
  // object event's raw string).
  std::string* json_ = nullptr;
  // While set, string values at the names a bulk document's @host and @source come from are noted
  // (see DoorParser::note).
  bool watch_ = false;
  virtual void note(Span) {}
  // While set, a raw newline inside a value declines (a bulk line's object must be one line).
  bool oneLine_ = false;

  uint8_t peek() const {
    if (p_ == end_) decline();
    return *p_;
  }
  uint8_t take() {
    if (p_ == end_) decline();
    return *p_++;
  }
  void ws() {
    while (p_ < end_ && isSpace(*p_)) {
      if (*p_ == '\n' && oneLine_) decline();
      p_++;
    }
  }
  void expect(uint8_t c) {
    if (take() != c) decline();
  }
  void enter(uint8_t open) {
    expect(open);
    if (++depth_ > lim_.maxDepth) decline();
  }
  void literal(const char* word) {
    size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) decline();
    p_ += n;
  }

  // `{...}`: for each member, `key()` reads the key and `member(key)` the value.
  template <typename Key, typename Member>
  void object(Key key, Member member) {
    enter('{');
    ws();
    if (peek() == '}') {
      p_++;
    } else {
      for (;;) {
        ws();
        auto k = key();
        ws();
        expect(':');
        ws();
        member(k);
        ws();
        uint8_t c = take();
        if (c == '}') break;
        if (c != ',') decline();
      }
    }
    depth_--;
  }

  // `[...]`: `element(i)` reads each element.
  template <typename Element>
  void array(Element element) {
    enter('[');
    ws();
    if (peek() == ']') {
      p_++;
    } else {
      for (uint64_t i = 0;; i++) {
        ws();
        element(i);
        ws();
        uint8_t c = take();
        if (c == ']') break;
        if (c != ',') decline();
      }
    }
    depth_--;
  }

  // A member name: the string decoded, as a view into the body.
  Str key() {
    Span s = string();
    return Str(text(s), s.bytes);
  }

  // The first `n` (0 to 8) bytes of `v` to `w`, in fixed-size stores: behind an escape the
  // decoded text trails what is read, and a memcpy of a variable length was a library call for
  // every run between two escapes (a JSON rawstring has an escaped quote every few bytes).
  static void copyPlain(uint8_t* w, uint64_t v, size_t n) {
    const auto* b = reinterpret_cast<const uint8_t*>(&v);
    if (n == 8) {
      std::memcpy(w, b, 8);
    } else if (n >= 4) {
      std::memcpy(w, b, 4);
      std::memcpy(w + n - 4, b + n - 4, 4);
    } else if (n > 0) {
      w[0] = b[0];
      w[n >> 1] = b[n >> 1];
      w[n - 1] = b[n - 1];
    }
  }

  // A string, decoded in place.
  Span string() {
    expect('"');
    Span s;
    s.off = static_cast<uint32_t>(p_ - base_);
    uint8_t* w = p_;  // where decoded text goes: p_ until the first escape, then behind it
    for (;;) {
      // Eight bytes at a time up to the first quote, backslash, control or non-ASCII byte.
      while (end_ - p_ >= 8) {
        uint64_t v;
        std::memcpy(&v, p_, 8);
        constexpr uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
        // (x - ones) & highs flags a zero byte of x (and bytes >= 0x81, non-ASCII in v anyway); a
        // borrow only flags bytes above a flagged one, so the lowest flag is the first special byte.
        uint64_t special = ((v - ones * 0x20) | ((v ^ (ones * '"')) - ones) | ((v ^ (ones * '\\')) - ones) | v) & highs;
        size_t plain = special == 0 ? 8 : static_cast<size_t>(__builtin_ctzll(special) >> 3);
        if (w != p_) copyPlain(w, v, plain);
        w += plain;
        p_ += plain;
        s.units += static_cast<uint32_t>(plain);
        if (plain < 8) break;
      }
      if (p_ == end_) decline();
      uint8_t c = *p_;
      if (c == '"') {
        p_++;
        break;
      }
      if (c < 0x20) decline();
      if (c < 0x80 && c != '\\') {
        *w++ = c;
        p_++;
        s.units++;
        continue;
      }
      if (c >= 0x80) {
        size_t len = utf8Sequence(p_, end_, s.units);
        if (len == 0) decline();
        if (w != p_) std::memmove(w, p_, len);
        w += len;
        p_ += len;
        continue;
      }
      p_++;
      // Written behind what is read: an escape's text is never shorter than what it decodes to.
      w += escape(w, s.units);
    }
    s.bytes = static_cast<uint32_t>(w - (base_ + s.off));
    return s;
  }

  // The escape after a backslash (p_ just past it) decoded into `out` as UTF-8: its length in bytes
  // (1-3 for 2 or 6 bytes of escape, 4 for a surrogate pair's 12); its UTF-16 units are added to
  // `units`. Lone surrogates decline.
  size_t escape(uint8_t* out, uint32_t& units) {
    uint8_t e = take();
    units++;
    switch (e) {
      case '"': *out = '"'; return 1;
      case '\\': *out = '\\'; return 1;
      case '/': *out = '/'; return 1;
      case 'b': *out = '\b'; return 1;
      case 'f': *out = '\f'; return 1;
      case 'n': *out = '\n'; return 1;
      case 'r': *out = '\r'; return 1;
      case 't': *out = '\t'; return 1;
      case 'u': {
        uint32_t cp = hex4();
        if (cp >= 0xdc00 && cp <= 0xdfff) decline();  // a lone low surrogate
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u') decline();
          p_ += 2;
          uint32_t lo = hex4();
          if (lo < 0xdc00 || lo > 0xdfff) decline();
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          units++;  // a pair
        }
        return static_cast<size_t>(putUtf8(out, cp) - out);
      }
      default: decline();
    }
  }

  uint32_t hex4() {
    if (end_ - p_ < 4) decline();
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
      uint8_t c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else decline();
    }
    return v;
  }

  static uint8_t* putUtf8(uint8_t* w, uint32_t cp) {
    if (cp < 0x80) {
      *w++ = static_cast<uint8_t>(cp);
    } else if (cp < 0x800) {
      *w++ = static_cast<uint8_t>(0xc0 | (cp >> 6));
      *w++ = static_cast<uint8_t>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      *w++ = static_cast<uint8_t>(0xe0 | (cp >> 12));
      *w++ = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3f));
      *w++ = static_cast<uint8_t>(0x80 | (cp & 0x3f));
    } else {
      *w++ = static_cast<uint8_t>(0xf0 | (cp >> 18));
      *w++ = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3f));
      *w++ = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3f));
      *w++ = static_cast<uint8_t>(0x80 | (cp & 0x3f));
    }
    return w;
  }

  // A JSON number: its token checked against the grammar, its value, and (if `text`) where its
  // String(number) is: the literal itself where that is what String() gives, else in the arena.
  double number(Span* text) {
    const uint8_t* s = p_;
    if (p_ < end_ && *p_ == '-') p_++;
    if (p_ == end_ || !isDigit(*p_)) decline();
    if (*p_ == '0') {
      p_++;
    } else {
      while (p_ < end_ && isDigit(*p_)) p_++;
    }
    bool plain = true;
    if (p_ < end_ && *p_ == '.') {
      plain = false;
      p_++;
      if (p_ == end_ || !isDigit(*p_)) decline();
      while (p_ < end_ && isDigit(*p_)) p_++;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      plain = false;
      p_++;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) p_++;
      if (p_ == end_ || !isDigit(*p_)) decline();
      while (p_ < end_ && isDigit(*p_)) p_++;
    }
    const char* a = reinterpret_cast<const char*>(s);
    const char* b = reinterpret_cast<const char*>(p_);
    size_t digits = static_cast<size_t>(b - a) - (*a == '-' ? 1 : 0);
    if (plain && digits <= 15) {
      // Exact in a double, and String() gives the digits back (but "-0" is "0").
      int64_t v = 0;
      for (const char* q = *a == '-' ? a + 1 : a; q < b; q++) v = v * 10 + (*q - '0');
      if (text != nullptr) {
        const char* from = v == 0 ? b - 1 : a;  // "-0" as "0"
        text->off = static_cast<uint32_t>(from - reinterpret_cast<const char*>(base_));
        text->bytes = text->units = static_cast<uint32_t>(b - from);
      }
      return *a == '-' ? -static_cast<double>(v) : static_cast<double>(v);
    }
    double v;
    auto r = std::from_chars(a, b, v);
    if (r.ec != std::errc() || r.ptr != b || !std::isfinite(v)) decline();
    if (text != nullptr) {
      size_t at = arena.size();
      appendJsNumber(v, arena);
      text->off = static_cast<uint32_t>(at) | kInArena;
      text->bytes = text->units = static_cast<uint32_t>(arena.size() - at);
      if (arena.size() >= kInArena) decline();
    }
    return v;
  }

  // Any JSON value, checked and passed over.
  void skipValue() {
    switch (peek()) {
      case '{': object([&] { skipString(); return 0; }, [&](int) { skipValue(); }); return;
      case '[': array([&](uint64_t) { skipValue(); }); return;
      case '"': skipString(); return;
      case 't': literal("true"); return;
      case 'f': literal("false"); return;
      case 'n': literal("null"); return;
      default: number(nullptr); return;
    }
  }

  // A string passed over: only what makes it invalid JSON is checked (JavaScript reads invalid
  // UTF-8 here as U+FFFD, and the value is not kept).
  void skipString() {
    expect('"');
    for (;;) {
      uint8_t c = take();
      if (c == '"') return;
      if (c < 0x20) decline();
      if (c == '\\') {
        uint8_t e = take();
        if (e == 'u') hex4();
        else if (!std::strchr("\"\\/bfnrt", e) || e == 0) decline();
      }
    }
  }

  // One {"tags", "events"} item.
  void parseItem(Item& item) {
    bool sawTags = false;
    bool sawEvents = false;
    object([&] { return key(); }, [&](Str key) {
      if (key == "tags") {
        if (sawTags) decline();
        sawTags = true;
        item.tagsStart = static_cast<size_t>(p_ - base_);
        skipValue();
        item.tagsEnd = static_cast<size_t>(p_ - base_);
      } else if (key == "events") {
        if (sawEvents) decline();
        sawEvents = true;
        array([&](uint64_t) { parseEvent(item); });
      } else {
        skipValue();
      }
    });
    if (!sawEvents) decline();
  }

  void parseEvent(Item& item) {
    beginEvent(item);
    bool sawTs = false, sawZone = false, sawAttrs = false, sawRaw = false;
    bool isoTs = false, zoneGiven = false;
    double ts = 0;
    Span raw;
    Span zone = zoneZ_;
    object([&] { return key(); }, [&](Str key) {
      if (key == "timestamp") {
        if (sawTs) decline();
        sawTs = true;
        uint8_t c = peek();
        if (c == '"') {
          // ISO 8601 with a zone; the event's time zone is the one written (structured.ts).
          Span text = string();
          if (!isoTimestamp(Str(this->text(text), text.bytes), ts, zoneText_)) decline();
          zone.off = static_cast<uint32_t>(arena.size()) | kInArena;
          zone.bytes = zone.units = static_cast<uint32_t>(zoneText_.size());
          arena.append(zoneText_);
          isoTs = true;
        } else {
          if (c != '-' && !isDigit(c)) decline();
          ts = number(nullptr);
        }
      } else if (key == "timezone") {
        if (sawZone) decline();
        sawZone = true;
        // Only null is taken; with an ISO timestamp JavaScript does not read it, so it may be
        // anything there, and it is passed over.
        if (peek() == 'n') literal("null");
        else zoneGiven = true;
        if (zoneGiven) skipValue();
      } else if (key == "attributes") {
        if (sawAttrs) decline();
        sawAttrs = true;
        if (peek() == 'n') {
          literal("null");
        } else {
          if (peek() != '{') decline();
          name_.clear();
          walkObject(item, 0);
        }
      } else if (key == "rawstring") {
        if (sawRaw) decline();
        sawRaw = true;
        if (peek() != '"') decline();
        raw = string();
      } else {
        skipValue();
      }
    });
    if (!sawTs || !sawRaw) decline();
    // A time zone other than null counts with a numeric timestamp (structured.ts): not taken here.
    if (zoneGiven && !isoTs) decline();
    finishEvent(item, ts, raw, zone);
  }

  void beginEvent(Item& item) {
    if (++events_ > lim_.maxEvents) decline();
    event_ = item.n;
    fields_ = 0;
    eventNameBytes_ = 0;
    touched_.clear();
    item.prev = 0;
  }

  // The event's time, raw string and zone, once its fields are set; the bounds buildEvent applies.
  void finishEvent(Item& item, double ts, Span raw, Span zone) {
    if (std::fabs(ts) > kMaxTimestamp) decline();
    // The event size bound, as buildEvent measures it: UTF-16 units first, bytes when they could matter.
    uint64_t chars = raw.units;
    for (uint32_t j : touched_) chars += item.cols[j].units + item.cols[j].vals.back().v.units;
    if (static_cast<double>(chars) * 3 > lim_.maxEventBytes) {
      uint64_t bytes = raw.bytes;
      for (uint32_t j : touched_) bytes += item.cols[j].name.size() + item.cols[j].vals.back().v.bytes;
      if (static_cast<double>(bytes) > lim_.maxEventBytes) decline();
    }
    item.ts.push_back(std::trunc(ts));
    item.raw.push_back(raw);
    item.tz.push_back(zone);
    item.n++;
  }

  // Attribute values: flattenInto's walk.
  void walkValue(Item& item, size_t level) {
    switch (peek()) {
      case '{': walkObject(item, level + 1); return;
      case '[': walkArray(item, level + 1); return;
      case '"': {
        Span s = string();
        if (json_ != nullptr) appendJsonString(*json_, text(s), s.bytes);
        if (!name_.empty()) {
          if (watch_) note(s);
          put(item, s);
        }
        return;
      }
      case 't': putLiteral(item, "true"); return;
      case 'f': putLiteral(item, "false"); return;
      case 'n':
        literal("null");
        if (json_ != nullptr) json_->append("null");
        return;
      default: {
        Span s;
        number(&s);
        if (json_ != nullptr) json_->append(text(s), s.bytes);
        if (!name_.empty()) put(item, s);
        return;
      }
    }
  }

  // true or false: the value is the literal's own text.
  void putLiteral(Item& item, const char* word) {
    Span s;
    s.off = static_cast<uint32_t>(p_ - base_);
    literal(word);
    s.bytes = s.units = static_cast<uint32_t>(p_ - base_) - s.off;
    if (json_ != nullptr) json_->append(word);
    if (!name_.empty()) put(item, s);
  }

  void walkObject(Item& item, size_t level) {
    if (keys_.size() <= level) keys_.resize(level + 1);
    keys_[level].clear();
    if (json_ != nullptr) json_->push_back('{');
    bool first = true;
    object([&] { return key(); }, [&](Str key) {
      if (isArrayIndex(key) || !keys_[level].add(key) || needsEscape(key)) decline();
      if (watch_ && key.find('.') != Str::npos && watchedPrefix(name_.empty() ? key : Str(name_))) decline();
      if (json_ != nullptr) {
        if (!first) json_->push_back(',');
        first = false;
        json_->push_back('"');
        json_->append(key);  // needs no escapes (checked above)
        json_->append("\":");
      }
      size_t saved = name_.size();
      if (saved != 0) name_.push_back('.');
      name_.append(key);
      walkValue(item, level);
      name_.resize(saved);
    });
    if (json_ != nullptr) json_->push_back('}');
  }

  // Names under which a bulk document's @host or @source may be found (DoorParser::note).
  static bool watchedPrefix(Str name) {
    return name.substr(0, 4) == "host" || name.substr(0, 4) == "beat" || name.substr(0, 3) == "log";
  }

  void walkArray(Item& item, size_t level) {
    char index[24];
    if (json_ != nullptr) json_->push_back('[');
    array([&](uint64_t i) {
      if (json_ != nullptr && i > 0) json_->push_back(',');
      size_t saved = name_.size();
      name_.push_back('[');
      auto r = std::to_chars(index, index + sizeof index, i);
      name_.append(index, static_cast<size_t>(r.ptr - index));
      name_.push_back(']');
      walkValue(item, level);
      name_.resize(saved);
    });
    if (json_ != nullptr) json_->push_back(']');
  }

  // Sets field name_ of the current event (a repeated name keeps its place and takes the new value).
  void put(Item& item, Span v) {
    // The event's distinct field names count towards its size: past the size limit the event is
    // oversize (JavaScript marks it), whatever else it holds. Checked before a name is copied.
    // Names of more than 4,096 UTF-16 units are left out, as JavaScript does (limits.ts
    // MAX_FIELD_NAME_CHARS); counted only where the bytes leave it open (at most 3 per unit).
    if (name_.size() > kMaxNameChars && (name_.size() > 3 * kMaxNameChars || utf16Length(name_) > kMaxNameChars)) return;
    if (static_cast<double>(eventNameBytes_ + name_.size()) > lim_.maxEventBytes) decline();
    if (item.next.size() <= item.cols.size()) item.next.resize(item.cols.size() + 1, kNoColumn);
    const uint32_t guess = item.next[item.prev];
    uint32_t j;
    if (guess != kNoColumn && item.cols[guess].name == name_) {
      j = guess;
    } else if (auto it = item.index.find(name_); it != item.index.end()) {
      j = it->second;
    } else {
      j = static_cast<uint32_t>(item.cols.size());
      // A section holds a length per event and column (see encodeSection): the events so far
      // already pass the bound with one more column. Names in all are bounded too.
      if (static_cast<uint64_t>(event_ + 1) * (3 + item.cols.size()) > kMaxStrings) decline();
      item.nameBytes += name_.size();
      if (item.nameBytes > kMaxNameBytes) decline();
      item.cols.push_back(Column{name_, utf16Length(name_), {}});
      item.index.emplace(name_, j);
    }
    item.next[item.prev] = j;
    item.prev = j + 1;
    Column& col = item.cols[j];
    if (!col.vals.empty() && col.vals.back().event == event_) {
      col.vals.back().v = v;
      return;
    }
    if (++fields_ > lim_.maxFields) decline();
    eventNameBytes_ += col.name.size();
    col.vals.push_back(Entry{event_, v});
    touched_.push_back(j);
  }
};

// ---- The shippers' doors (src/ingest/doors/): HEC event bodies and Elasticsearch bulk bodies, for
// the common cases: the message goes through the kv parser (the default: no token parser, no
// sourcetype / document type, or a name that is no other built-in parser; run here, see kv()) or
// through none ("none"; a HEC object event is never parsed). Everything else is declined, and
// src/ingest/doors/ takes the request and reports every error. All events go into one item: a
// request whose events would have different tag sets (HEC sourcetypes of object events) is
// declined too.

struct DoorOptions {
  double at;                 // the ingest time, for events without one
  bool hec;                  // else bulk
  bool tokenParserSet;       // the ingest token names a parser
  std::string tokenParser;   // its name
  std::string repository;    // HEC: the name an event's `index` may give
  std::string idPrefix;      // bulk: generated document ids (elastic-bulk.ts IdSource)
  std::string defaultIndex;  // bulk: `_index` of items naming none, as JSON
};

// The names a bulk document's @host and @source come from (elastic-bulk.ts addDocument).
enum Watched { kHostName, kBeatHostname, kHost, kLogFilePath, kSource, kType, kWatched };

class DoorParser : public Parser {
 public:
  DoorParser(uint8_t* data, size_t length, Limits limits, const DoorOptions& o) : Parser(data, length, limits), o_(o) {
    items.emplace_back();
    items.back().tagsEnd = 0;
  }

  std::string type;        // the #type tag of every event
  std::string itemsJson;   // bulk: the response's "items" array

  void parseHec() {
    Item& item = items[0];
    ws();
    if (p_ == end_) decline();  // no data
    while (p_ < end_) {
      if (*p_ != '{') decline();
      hecEvent(item);
      ws();
    }
  }

  void parseBulk() {
    Item& item = items[0];
    itemsJson.push_back('[');
    double objects = 0;
    ws();
    while (p_ < end_) {
      // Action and document: two objects, each on one line (elastic-bulk.ts entriesFast).
      objects += 2;
      if (objects > 2 * lim_.maxEvents + 2 || static_cast<double>(item.n) >= lim_.maxEvents) decline();
      if (*p_ != '{') decline();
      oneLine_ = true;
      bulkAction(item.n);
      oneLine_ = false;
      ws();
      if (p_ == end_ || *p_ != '{') decline();
      oneLine_ = true;
      bulkDocument(item);
      oneLine_ = false;
      ws();
    }
    if (item.n == 0) decline();
    itemsJson.push_back(']');
  }

 private:
  const DoorOptions& o_;
  KeySet top_;
  KeySet inner_;
  std::string json_text_;
  Span watched_[kWatched];
  bool seen_[kWatched];
  uint64_t ids_ = 0;
  std::string kvValue_;  // a quoted kv value with escapes, unescaped
  std::string keyCopy_, typeCopy_;  // a bulk document's member name and type, decoded in the first pass

  static bool isText(Str a, const char* b) { return a == Str(b); }
  Str view(Span s) const { return Str(text(s), s.bytes); }

  // A string literal's span (or decline when the value is no string).
  Span stringValue() {
    if (peek() != '"') decline();
    return string();
  }

  // A string decoded into `out` (a copy), for the first pass over a bulk document, which must leave
  // the body as it is (string() decodes in place). The view is into the body when the string has
  // no escapes, else into `out`.
  Str stringCopy(std::string& out) {
    expect('"');
    const uint8_t* from = p_;
    for (;;) {
      uint8_t c = take();
      if (c == '"') return Str(reinterpret_cast<const char*>(from), static_cast<size_t>(p_ - 1 - from));
      if (c < 0x20) decline();
      if (c == '\\') break;
    }
    p_--;
    out.assign(reinterpret_cast<const char*>(from), static_cast<size_t>(p_ - from));
    for (;;) {
      uint8_t c = take();
      if (c == '"') return Str(out);
      if (c < 0x20) decline();
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        continue;
      }
      uint8_t buf[4];
      uint32_t units = 0;
      out.append(reinterpret_cast<const char*>(buf), escape(buf, units));
    }
  }

  // The span of bytes [a, b) of `s`, a span in the body.
  Span slice(Span s, size_t a, size_t b) const {
    Span v;
    v.off = s.off + static_cast<uint32_t>(a);
    v.bytes = static_cast<uint32_t>(b - a);
    v.units = utf16Length(Str(text(s) + a, b - a));
    return v;
  }

  // The kv parser on a message (kv.ts KvParser.parse, kv-pairs.ts extractKeyValues): its fields
  // are put before the ones the protocol carried, which then win in the parser's places, as
  // DoorSink merges them. True when it found a timestamp (`ms`, `zone`). A key named __proto__, or
  // more fields than the limit (JavaScript marks the event), declines.
  bool kv(Item& item, Span raw, double& ms, Span& zone) {
    if ((raw.off & kInArena) != 0) decline();  // a message is always in the body
    const char* s = text(raw);
    const size_t n = raw.bytes;
    bool found = leadingTimestamp(Str(s, n), ms, zoneText_);
    if (found) zone = arenaSpan(zoneText_);
    size_t floor = 0, pos = 0;
    while (pos < n) {
      const void* at = std::memchr(s + pos, '=', n - pos);
      if (at == nullptr) break;
      size_t eq = static_cast<size_t>(static_cast<const char*>(at) - s);
      size_t ks = eq;
      while (ks > floor && (keyClass(static_cast<uint8_t>(s[ks - 1])) & kKeyChar) != 0) ks--;
      // "--level=x" names "level": characters that cannot start a key are dropped from the front.
      while (ks < eq && (keyClass(static_cast<uint8_t>(s[ks])) & kKeyStart) == 0) ks++;
      if (ks == eq) {
        pos = floor = eq + 1;
        continue;
      }
      Str key(s + ks, eq - ks);
      if (key == "__proto__") decline();
      size_t vs = eq + 1;
      size_t end = n;
      Span v;
      uint8_t q = vs < n ? static_cast<uint8_t>(s[vs]) : 0;
      if (q == '"' || q == '\'') {
        // Quoted: \q and \\ unescaped, other backslashes kept; an unterminated quote takes the rest.
        size_t i = vs + 1, seg = i, close = n;
        bool escaped = false;
        kvValue_.clear();
        while (i < n) {
          uint8_t c = static_cast<uint8_t>(s[i]);
          if (c == q) {
            close = i;
            end = i + 1;
            break;
          }
          if (c == '\\' && i + 1 < n) {
            uint8_t next = static_cast<uint8_t>(s[i + 1]);
            if (next == q || next == '\\') {
              kvValue_.append(s + seg, i - seg);
              seg = i + 1;
              escaped = true;
            }
            i += 2;
            continue;
          }
          i++;
        }
        if (escaped) {
          kvValue_.append(s + seg, close - seg);
          v = arenaSpan(kvValue_);
        } else {
          v = slice(raw, vs + 1, close);
        }
      } else {
        end = vs;
        while (end < n && !isKvSpace(static_cast<uint8_t>(s[end]))) end++;
        v = slice(raw, vs, end);
      }
      putNamed(item, key, v);
      pos = floor = end;
    }
    return found;
  }

  // The current event's value of field `name`, or null.
  const Span* valueOf(Item& item, const char* name) {
    auto it = item.index.find(name);
    if (it == item.index.end()) return nullptr;
    const Column& c = item.cols[it->second];
    return !c.vals.empty() && c.vals.back().event == event_ ? &c.vals.back().v : nullptr;
  }

  // A span of literal text kept in the arena.
  Span arenaSpan(Str t) {
    Span s;
    s.off = static_cast<uint32_t>(arena.size()) | kInArena;
    s.bytes = static_cast<uint32_t>(t.size());
    arena.append(t.data(), t.size());
    s.units = utf16Length(t);
    if (arena.size() >= kInArena) decline();
    return s;
  }

  void setType(Str t) {
    if (items[0].n == 0) type.assign(t.data(), t.size());
    else if (Str(type) != t) decline();
  }

  // Sets field `name` to `v` (put's rules: a repeat keeps its place and takes the new value).
  void putNamed(Item& item, Str name, Span v) {
    name_.assign(name.data(), name.size());
    put(item, v);
    name_.clear();
  }

  // hec.ts secondsToMillis: epoch seconds (a number, or a string of `-?digits[.digits]`) to
  // Math.round(s * 1000).
  static double secondsToMillis(double s) {
    if (!std::isfinite(s) || std::fabs(s) > 8.64e12) decline();
    double x = s * 1000;
    double r = std::floor(x);
    if (x - r >= 0.5) r += 1;
    if (r == 0 && (x < 0 || std::signbit(x))) r = -0.0;  // Math.round(-0.4) is -0
    return r;
  }

  double secondsText(Str t) {
    size_t i = 0;
    if (i < t.size() && t[i] == '-') i++;
    size_t d = i;
    while (i < t.size() && isDigit(static_cast<uint8_t>(t[i]))) i++;
    if (i == d) decline();
    if (i < t.size() && t[i] == '.') {
      size_t f = ++i;
      while (i < t.size() && isDigit(static_cast<uint8_t>(t[i]))) i++;
      if (i == f) decline();
    }
    if (i != t.size()) decline();
    double v;
    auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size()) decline();
    return v;
  }

  // One HEC event object (hec.ts hecEvent). Its members are read in the body's order, the
  // `event` object and `fields` only passed over; then the fields are set in the order
  // JavaScript sets them: the event's members, @host, @source, `fields`.
  void hecEvent(Item& item) {
    beginEvent(item);
    top_.clear();
    uint8_t* eventAt = nullptr;
    uint8_t* fieldsAt = nullptr;
    bool eventString = false;
    Span raw, host, source;
    bool hasHost = false, hasSource = false, hasSourcetype = false, hasTime = false;
    Str sourcetype;
    double ts = o_.at;
    object([&] { return key(); }, [&](Str key) {
      if (!top_.add(key)) decline();
      uint8_t c = peek();
      if (isText(key, "event")) {
        if (c == '"') {
          raw = string();
          eventString = true;
        } else if (c == '{') {
          eventAt = p_;
          skipValue();
        } else {
          decline();  // null (HEC's "blank"), numbers, arrays: JavaScript's
        }
      } else if (isText(key, "fields")) {
        if (c == '{') {
          fieldsAt = p_;
          skipValue();
        } else {
          literal("null");
        }
      } else if (isText(key, "time")) {
        if (c == 'n') {
          literal("null");
        } else if (c == '"') {
          Str t = view(string());
          if (!t.empty()) {
            ts = secondsToMillis(secondsText(t));
            hasTime = true;
          }
        } else {
          ts = secondsToMillis(number(nullptr));
          hasTime = true;
        }
      } else if (isText(key, "timezone")) {
        literal("null");
      } else if (isText(key, "index")) {
        if (c == 'n') {
          literal("null");
        } else {
          Str idx = view(stringValue());
          if (!idx.empty() && idx != Str(o_.repository)) decline();
        }
      } else if (isText(key, "sourcetype") || isText(key, "host") || isText(key, "source")) {
        if (c == 'n') {
          literal("null");
          return;
        }
        Span s = stringValue();
        if (key[0] == 'h') {
          host = s;
          hasHost = true;
        } else if (key.size() == 6) {
          source = s;
          hasSource = true;
        } else {
          sourcetype = view(s);
          hasSourcetype = true;
        }
      } else {
        skipValue();
      }
    });
    if (eventAt == nullptr && !eventString) decline();
    // The parser a string event goes through (the token's, else the sourcetype's, else kv): none
    // or kv are run here, another built-in declines.
    Str typeName = o_.tokenParserSet ? Str(o_.tokenParser) : hasSourcetype ? sourcetype : Str("none");
    bool runKv = false;
    if (eventString) {
      BuiltIn parser = builtInParser(o_.tokenParserSet ? Str(o_.tokenParser) : hasSourcetype ? sourcetype : Str("kv"));
      if (parser == BuiltIn::kOther) decline();
      runKv = parser == BuiltIn::kKv;
    }
    setType(typeName);
    double kvMs = 0;
    Span kvZone;
    bool kvTime = runKv && kv(item, raw, kvMs, kvZone);
    uint8_t* after = p_;
    if (eventAt != nullptr) {
      p_ = eventAt;
      json_text_.clear();
      json_ = &json_text_;
      name_.clear();
      walkObject(item, 0);
      json_ = nullptr;
      raw = arenaSpan(json_text_);
    }
    if (hasHost) putNamed(item, "@host", host);
    if (hasSource) putNamed(item, "@source", source);
    if (fieldsAt != nullptr) {
      p_ = fieldsAt;
      hecFields(item);
    }
    p_ = after;
    // The protocol's time wins; else the parser's, with its zone (DoorSink).
    if (!hasTime && kvTime) finishEvent(item, kvMs, raw, kvZone);
    else finishEvent(item, ts, raw, zoneZ_);
  }

  // HEC `fields`: strings, numbers and booleans by name; tags (#name), arrays and objects are left
  // to JavaScript, and so are names it would treat otherwise (see needsEscape, isArrayIndex).
  void hecFields(Item& item) {
    inner_.clear();
    object([&] { return key(); }, [&](Str key) {
      if (!inner_.add(key) || isArrayIndex(key) || needsEscape(key) || key == "__proto__" || key.size() > kMaxNameChars) decline();
      if (!key.empty() && key[0] == '#') decline();
      uint8_t c = peek();
      if (c == '{' || c == '[') decline();
      if (c == 'n') {
        literal("null");
        return;
      }
      Span s;
      if (c == '"') {
        s = string();
      } else if (c == 't' || c == 'f') {
        s.off = static_cast<uint32_t>(p_ - base_);
        literal(c == 't' ? "true" : "false");
        s.bytes = s.units = static_cast<uint32_t>(p_ - base_) - s.off;
      } else {
        number(&s);
      }
      if (!key.empty()) putNamed(item, key, s);
    });
  }

  void note(Span s) override {
    const std::string& n = name_;
    int w = -1;
    if (n == "host.name") w = kHostName;
    else if (n == "beat.hostname") w = kBeatHostname;
    else if (n == "host") w = kHost;
    else if (n == "log.file.path") w = kLogFilePath;
    else if (n == "source") w = kSource;
    else if (n == "type") w = kType;
    if (w < 0) return;
    if (seen_[w]) decline();
    seen_[w] = true;
    watched_[w] = s;
  }

  // `{"index"|"create": {...}}`: the item's line of the response (elastic-bulk.ts BulkItem, and
  // the route's itemJson).
  void bulkAction(uint32_t seq) {
    bool seen = false;
    bool create = false;
    bool hasIndex = false, hasId = false;
    Span index, id;
    object([&] { return key(); }, [&](Str name) {
      if (seen) decline();
      seen = true;
      if (name == "create") create = true;
      else if (name != "index") decline();
      if (peek() != '{') {
        skipValue();
        return;
      }
      bool sawIndex = false, sawId = false;
      object([&] { return key(); }, [&](Str k) {
        if (k == "_index" || k == "_id") {
          bool& saw = k == "_index" ? sawIndex : sawId;
          if (saw) decline();
          saw = true;
          if (peek() == '"') {
            if (k == "_index") {
              index = string();
              hasIndex = true;
            } else {
              id = string();
              hasId = true;
            }
            return;
          }
        }
        skipValue();
      });
    });
    if (!seen) decline();
    if (seq > 0) itemsJson.push_back(',');
    itemsJson.append(create ? "{\"create\":{\"_index\":" : "{\"index\":{\"_index\":");
    if (hasIndex) appendJsonString(itemsJson, text(index), index.bytes);
    else itemsJson.append(o_.defaultIndex);
    itemsJson.append(",\"_id\":");
    if (hasId) {
      appendJsonString(itemsJson, text(id), id.bytes);
    } else {
      char digits[16];
      uint64_t v = ids_++;
      int k = 0;
      do {
        digits[k++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
        v /= 36;
      } while (v > 0);
      itemsJson.push_back('"');
      itemsJson.append(o_.idPrefix);
      for (int pad = k; pad < 8; pad++) itemsJson.push_back('0');
      while (k > 0) itemsJson.push_back(digits[--k]);
      itemsJson.push_back('"');
    }
    itemsJson.append(",\"_version\":1,\"result\":\"created\",\"_shards\":{\"total\":1,\"successful\":1,\"failed\":0},\"_seq_no\":");
    itemsJson.append(std::to_string(seq));
    itemsJson.append(",\"_primary_term\":1,\"status\":201}}");
  }

  // One bulk document (elastic-bulk.ts addDocument): its members flattened in order, leaving out
  // @timestamp and the string message; then @host and @source from the Beats names. The message's
  // parser (the token's, else the document's `type`, else kv) puts its fields first (DoorSink), so
  // a first pass finds the message and the type without decoding anything else (string() decodes
  // in place: only the message is, and the second pass steps over it).
  void bulkDocument(Item& item) {
    beginEvent(item);
    uint8_t* docAt = p_;
    bool hasMessage = false, hasType = false;
    Span raw;
    uint8_t* messageEnd = nullptr;
    Str typeText;
    object([&] { return stringCopy(keyCopy_); }, [&](Str key) {
      if (key == "message" && peek() == '"') {
        if (hasMessage) decline();
        raw = string();
        messageEnd = p_;
        hasMessage = true;
      } else if (key == "type" && peek() == '"') {
        if (hasType) decline();
        typeText = stringCopy(typeCopy_);
        hasType = true;
      } else {
        skipValue();
      }
    });
    if (!hasMessage) decline();  // any other message: JavaScript keeps the document's line
    Str parserName = o_.tokenParserSet ? Str(o_.tokenParser) : hasType ? typeText : Str("kv");
    BuiltIn parser = builtInParser(parserName);
    if (parser == BuiltIn::kOther) decline();
    setType(parserName);
    double kvMs = 0;
    Span kvZone;
    bool kvTime = parser == BuiltIn::kKv && kv(item, raw, kvMs, kvZone);
    // What the parser set, to tell it from what the document sets (the Beats names fill @host and
    // @source only where the document did not).
    const Span* host0 = valueOf(item, "@host");
    const Span* source0 = valueOf(item, "@source");
    uint32_t kvHost = host0 == nullptr ? 0xffffffffu : host0->off, kvSource = source0 == nullptr ? 0xffffffffu : source0->off;

    p_ = docAt;
    top_.clear();
    for (bool& s : seen_) s = false;
    bool hasTs = false;
    double ts = o_.at;
    Span zone = zoneZ_;
    watch_ = true;
    object([&] { return key(); }, [&](Str key) {
      if (!top_.add(key) || isArrayIndex(key) || needsEscape(key)) decline();
      if (key.find('.') != Str::npos && watchedPrefix(key)) decline();
      if (key == "@timestamp") {
        uint8_t c = peek();
        if (c == 'n') {
          literal("null");
        } else if (c == '"') {
          Span t = string();
          if (!isoTimestamp(view(t), ts, zoneText_)) decline();
          zone = arenaSpan(zoneText_);
          hasTs = true;
        } else {
          ts = std::trunc(number(nullptr));
          hasTs = true;
        }
      } else if (key == "message") {
        if (peek() != '"') decline();
        p_ = messageEnd;  // read in the first pass
      } else if (key.empty() || key == "@tags") {
        if (!key.empty()) decline();
        skipValue();
      } else {
        name_.assign(key.data(), key.size());
        walkValue(item, 0);
        name_.clear();
      }
    });
    watch_ = false;
    int host = seen_[kHostName] ? kHostName : seen_[kBeatHostname] ? kBeatHostname : seen_[kHost] ? kHost : -1;
    const Span* h = valueOf(item, "@host");
    if (host >= 0 && (h == nullptr || h->off == kvHost)) putNamed(item, "@host", watched_[host]);
    int source = seen_[kLogFilePath] ? kLogFilePath : seen_[kSource] ? kSource : -1;
    const Span* src = valueOf(item, "@source");
    if (source >= 0 && (src == nullptr || src->off == kvSource)) putNamed(item, "@source", watched_[source]);
    // The document's time wins; else the parser's, with its zone (DoorSink).
    if (!hasTs && kvTime) finishEvent(item, kvMs, raw, kvZone);
    else finishEvent(item, ts, raw, zone);
  }
};

inline void putU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

// The item's events as a version 3 section (record.ts encodeSection), into a new Buffer.
napi_value encodeSection(napi_env env, const Item& item, const Parser& parser, double& estimate) {
  const uint32_t n = item.n;
  std::string names = "[";
  for (size_t j = 0; j < item.cols.size(); j++) {
    if (j > 0) names.push_back(',');
    names.push_back('"');
    names.append(item.cols[j].name);
    names.push_back('"');
  }
  names.push_back(']');
  uint64_t strings = static_cast<uint64_t>(n) * (2 + item.cols.size());
  // Sparse columns are dense in a section (a length per event and column): past 16 Mi lengths
  // (64 MiB) JavaScript takes the request and refuses it (record.ts MAX_SECTION_STRINGS).
  if (strings > kMaxStrings) decline();
  uint64_t text = 0;
  estimate = 0;
  for (uint32_t i = 0; i < n; i++) {
    text += item.tz[i].bytes + item.raw[i].bytes;
    estimate += item.raw[i].units + 48.0;
  }
  for (const Column& c : item.cols) {
    for (const Entry& e : c.vals) {
      text += e.v.bytes;
      estimate += c.units + e.v.units + 8.0;
    }
  }
  uint64_t size = kSectionHead + names.size() + 8ull * n + 4 * strings + text;
  if (size > 0x7fffffffull) decline();
  void* data;
  napi_value out;
  if (napi_create_buffer(env, static_cast<size_t>(size), &data, &out) != napi_ok) decline();
  uint8_t* b = static_cast<uint8_t*>(data);
  b[0] = kSectionVersion;
  putU32(b + 1, n);
  putU32(b + 5, static_cast<uint32_t>(names.size()));
  std::memcpy(b + kSectionHead, names.data(), names.size());
  uint8_t* ts = b + kSectionHead + names.size();
  if (n > 0) std::memcpy(ts, item.ts.data(), 8ull * n);
  uint8_t* len = ts + 8ull * n;
  uint8_t* t = len + 4 * strings;
  for (const std::vector<Span>* strings : {&item.tz, &item.raw}) {
    for (uint32_t i = 0; i < n; i++, len += 4) {
      const Span& s = (*strings)[i];
      putU32(len, s.units + 1);
      std::memcpy(t, parser.text(s), s.bytes);
      t += s.bytes;
    }
  }
  for (const Column& c : item.cols) {
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++, len += 4) {
      if (k < c.vals.size() && c.vals[k].event == i) {
        const Span& s = c.vals[k++].v;
        putU32(len, s.units + 1);
        std::memcpy(t, parser.text(s), s.bytes);
        t += s.bytes;
      } else {
        putU32(len, 0);
      }
    }
  }
  return out;
}

#define CHECK(call) \
  if ((call) != napi_ok) return nullptr

napi_value setNumber(napi_env env, napi_value obj, const char* key, double v) {
  napi_value x;
  CHECK(napi_create_double(env, v, &x));
  CHECK(napi_set_named_property(env, obj, key, x));
  return obj;
}

napi_value Parse(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_value null;
  CHECK(napi_get_null(env, &null));
  CHECK(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  if (argc < 5) {
    napi_throw_type_error(env, nullptr, "parse(body, maxEvents, maxEventBytes, maxFields, maxDepth)");
    return nullptr;
  }
  bool typed = false;
  napi_typedarray_type type;
  size_t length;
  void* data;
  if (napi_is_typedarray(env, argv[0], &typed) != napi_ok || !typed ||
      napi_get_typedarray_info(env, argv[0], &type, &length, &data, nullptr, nullptr) != napi_ok || type != napi_uint8_array) {
    napi_throw_type_error(env, nullptr, "parse: body must be a Uint8Array");
    return nullptr;
  }
  double lim[4];
  for (int i = 0; i < 4; i++) {
    if (napi_get_value_double(env, argv[i + 1], &lim[i]) != napi_ok || !(lim[i] >= 0)) {
      napi_throw_type_error(env, nullptr, "parse: limits must be numbers >= 0");
      return nullptr;
    }
  }
  if (length > 0x7fffffffull) return null;
  // The body is copied first: a shared buffer may change under the parse, and strings are decoded
  // in place in the copy.
  std::string body(static_cast<const char*>(data), length);
  try {
    Parser parser(reinterpret_cast<uint8_t*>(body.data()), body.size(), Limits{lim[0], lim[1], lim[2], lim[3]});
    parser.parseBody();
    napi_value list;
    CHECK(napi_create_array_with_length(env, parser.items.size(), &list));
    for (size_t i = 0; i < parser.items.size(); i++) {
      const Item& item = parser.items[i];
      napi_value obj;
      CHECK(napi_create_object(env, &obj));
      double estimate = 0;
      if (item.n > 0) {  // an item without events has its tags checked, and nothing else
        napi_value section = encodeSection(env, item, parser, estimate);
        CHECK(napi_set_named_property(env, obj, "section", section));
      }
      if (setNumber(env, obj, "tagsStart", static_cast<double>(item.tagsStart)) == nullptr) return nullptr;
      if (setNumber(env, obj, "tagsEnd", static_cast<double>(item.tagsEnd)) == nullptr) return nullptr;
      if (setNumber(env, obj, "n", item.n) == nullptr) return nullptr;
      if (setNumber(env, obj, "b", estimate) == nullptr) return nullptr;
      CHECK(napi_set_element(env, list, static_cast<uint32_t>(i), obj));
    }
    return list;
  } catch (...) {
    // Declined, or out of memory: JavaScript takes the request.
    return null;
  }
}


bool getString(napi_env env, napi_value v, std::string& out) {
  size_t n;
  if (napi_get_value_string_utf8(env, v, nullptr, 0, &n) != napi_ok) return false;
  out.resize(n + 1);
  if (napi_get_value_string_utf8(env, v, out.data(), n + 1, &n) != napi_ok) return false;
  out.resize(n);
  return true;
}

// parseDoor(body, hec, maxEvents, maxEventBytes, maxFields, maxDepth, at, tokenParser | null,
// repository, idPrefix, defaultIndexJson): {type, n, b, section, itemsJson} or null (declined).
napi_value ParseDoor(napi_env env, napi_callback_info info) {
  size_t argc = 11;
  napi_value argv[11];
  napi_value null;
  CHECK(napi_get_null(env, &null));
  CHECK(napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr));
  bool typed = false;
  napi_typedarray_type type;
  size_t length;
  void* data;
  if (argc < 11 || napi_is_typedarray(env, argv[0], &typed) != napi_ok || !typed ||
      napi_get_typedarray_info(env, argv[0], &type, &length, &data, nullptr, nullptr) != napi_ok || type != napi_uint8_array) {
    napi_throw_type_error(env, nullptr, "parseDoor(body: Uint8Array, hec, maxEvents, maxEventBytes, maxFields, maxDepth, at, tokenParser, repository, idPrefix, defaultIndexJson)");
    return nullptr;
  }
  DoorOptions o;
  double lim[4];
  bool ok = napi_get_value_bool(env, argv[1], &o.hec) == napi_ok;
  for (int i = 0; i < 4; i++) ok = ok && napi_get_value_double(env, argv[i + 2], &lim[i]) == napi_ok && lim[i] >= 0;
  ok = ok && napi_get_value_double(env, argv[6], &o.at) == napi_ok;
  napi_valuetype parserType;
  ok = ok && napi_typeof(env, argv[7], &parserType) == napi_ok;
  o.tokenParserSet = parserType == napi_string;
  if (ok && o.tokenParserSet) ok = getString(env, argv[7], o.tokenParser);
  ok = ok && getString(env, argv[8], o.repository) && getString(env, argv[9], o.idPrefix) && getString(env, argv[10], o.defaultIndex);
  if (!ok) {
    napi_throw_type_error(env, nullptr, "parseDoor: bad arguments");
    return nullptr;
  }
  if (length > 0x7fffffffull) return null;
  std::string body(static_cast<const char*>(data), length);
  try {
    DoorParser parser(reinterpret_cast<uint8_t*>(body.data()), body.size(), Limits{lim[0], lim[1], lim[2], lim[3]}, o);
    if (o.hec) parser.parseHec();
    else parser.parseBulk();
    if (parser.arena.size() >= kInArena) decline();
    const Item& item = parser.items[0];
    napi_value obj, v;
    CHECK(napi_create_object(env, &obj));
    double estimate = 0;
    napi_value section = encodeSection(env, item, parser, estimate);
    CHECK(napi_set_named_property(env, obj, "section", section));
    CHECK(napi_create_string_utf8(env, parser.type.data(), parser.type.size(), &v));
    CHECK(napi_set_named_property(env, obj, "type", v));
    if (!o.hec) {
      CHECK(napi_create_string_utf8(env, parser.itemsJson.data(), parser.itemsJson.size(), &v));
      CHECK(napi_set_named_property(env, obj, "itemsJson", v));
    }
    if (setNumber(env, obj, "n", item.n) == nullptr) return nullptr;
    if (setNumber(env, obj, "b", estimate) == nullptr) return nullptr;
    return obj;
  } catch (...) {
    return null;
  }
}

napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  CHECK(napi_create_function(env, "parse", NAPI_AUTO_LENGTH, Parse, nullptr, &fn));
  CHECK(napi_set_named_property(env, exports, "parse", fn));
  CHECK(napi_create_function(env, "parseDoor", NAPI_AUTO_LENGTH, ParseDoor, nullptr, &fn));
  CHECK(napi_set_named_property(env, exports, "parseDoor", fn));
  return exports;
}

}  // namespace

NAPI_MODULE_INIT() { return Init(env, exports); }
