// Locale-independent simple case mapping of UTF-8 strings for the text
// kernels (StringNormalizer). Covers ASCII, Latin-1 Supplement, Latin
// Extended-A, basic Greek and basic Cyrillic — the one-to-one mappings that
// towupper/towlower give in an "en_US.UTF-8" locale. Characters outside these
// blocks, multi-character mappings (German sharp s stays as it is) and
// malformed UTF-8 bytes are copied unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace loom::reference::text {

// Decodes one UTF-8 sequence at s[i]; returns its length in bytes, or 0 when
// the bytes there are not a well-formed sequence.
inline size_t utf8_decode(std::string_view s, size_t i, uint32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t c = b(0);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  size_t len;
  uint32_t v;
  if ((c & 0xE0) == 0xC0) len = 2, v = c & 0x1F;
  else if ((c & 0xF0) == 0xE0) len = 3, v = c & 0x0F;
  else if ((c & 0xF8) == 0xF0) len = 4, v = c & 0x07;
  else return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(k) & 0x3F);
  }
  // Overlong forms and surrogates are malformed.
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  cp = v;
  return len;
}

inline void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

inline uint32_t to_upper_cp(uint32_t c) {
  if (c >= 'a' && c <= 'z') return c - 0x20;
  if (c < 0x80) return c;
  if (c == 0xB5) return 0x39C;                                  // micro sign -> Greek capital mu
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 0x20;     // Latin-1 letters
  if (c == 0xFF) return 0x178;                                  // y with diaeresis
  if (c >= 0x100 && c <= 0x17F) {                               // Latin Extended-A
    if (c == 0x131) return 'I';                                 // dotless i
    if (c == 0x17F) return 'S';                                 // long s
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) return (c & 1) ? c - 1 : c;
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c : c - 1;
    return c;
  }
  if (c >= 0x3B1 && c <= 0x3CB && c != 0x3C2) return c - 0x20;  // Greek
  if (c == 0x3C2) return 0x3A3;                                 // final sigma
  if (c >= 0x3AC && c <= 0x3CE) {                               // Greek with tonos
    if (c == 0x3AC) return 0x386;
    if (c >= 0x3AD && c <= 0x3AF) return c - 0x25;
    if (c == 0x3CC) return 0x38C;
    if (c == 0x3CD || c == 0x3CE) return c - 0x3F;
  }
  if (c >= 0x430 && c <= 0x44F) return c - 0x20;                // Cyrillic
  if (c >= 0x450 && c <= 0x45F) return c - 0x50;
  return c;
}

inline uint32_t to_lower_cp(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 0x20;
  if (c < 0x80) return c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x130) return 'i';                                 // I with dot above
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) return (c & 1) ? c : c + 1;
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c + 1 : c;
    return c;
  }
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 0x20;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 0x25;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 0x3F;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  return c;
}

// Applies `map` to every well-formed code point of s.
template <class Map>
std::string map_utf8(std::string_view s, Map map) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t len = utf8_decode(s, i, cp);
    if (len == 0) {
      out += s[i++];  // malformed byte: copied as it is
      continue;
    }
    utf8_append(out, map(cp));
    i += len;
  }
  return out;
}

inline std::string to_upper(std::string_view s) { return map_utf8(s, to_upper_cp); }
inline std::string to_lower(std::string_view s) { return map_utf8(s, to_lower_cp); }

}  // namespace loom::reference::text
