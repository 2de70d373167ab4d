// Strict incremental UTF-8 decoding that can stop in the middle of a character and resume
// with the next token's bytes (grammar.md 2.4).
#pragma once

#include <cstdint>
#include <utility>

namespace hearth::grammar::detail {

// A character whose lead byte (and maybe some continuation bytes) has been seen. The bounds
// for the next byte encode the rules against overlong forms, surrogates and values past
// U+10FFFF, so every accepted prefix can still complete to a valid code point.
struct Utf8Partial {
  uint32_t value = 0;      // payload bits seen so far
  uint8_t remaining = 0;   // continuation bytes still expected; 0 = nothing pending
  uint8_t next_lo = 0x80;  // inclusive bounds for the next continuation byte
  uint8_t next_hi = 0xBF;

  bool pending() const { return remaining != 0; }
  bool operator==(const Utf8Partial&) const = default;

  // Inclusive range of the code points this prefix may still become.
  std::pair<uint32_t, uint32_t> possible_range() const {
    const uint32_t shift = 6u * (remaining - 1u);
    const uint32_t base = value << (6u * remaining);
    const uint32_t low = base | (uint32_t{next_lo & 0x3Fu} << shift);
    const uint32_t high = base | (uint32_t{next_hi & 0x3Fu} << shift) | ((1u << shift) - 1u);
    return {low, high};
  }
};

enum class Utf8Step { kNeedMore, kComplete, kInvalid };

// Feeds one byte. On kComplete `cp` holds the code point and `state` is reset; on kInvalid
// `state` is unspecified.
inline Utf8Step utf8_push(Utf8Partial& state, uint8_t byte, uint32_t& cp) {
  if (state.remaining == 0) {
    if (byte < 0x80) {
      cp = byte;
      return Utf8Step::kComplete;
    }
    state.next_lo = 0x80;
    state.next_hi = 0xBF;
    if (byte >= 0xC2 && byte <= 0xDF) {
      state.value = byte & 0x1Fu;
      state.remaining = 1;
    } else if (byte >= 0xE0 && byte <= 0xEF) {
      state.value = byte & 0x0Fu;
      state.remaining = 2;
      if (byte == 0xE0) state.next_lo = 0xA0;  // overlong
      if (byte == 0xED) state.next_hi = 0x9F;  // surrogates
    } else if (byte >= 0xF0 && byte <= 0xF4) {
      state.value = byte & 0x07u;
      state.remaining = 3;
      if (byte == 0xF0) state.next_lo = 0x90;  // overlong
      if (byte == 0xF4) state.next_hi = 0x8F;  // past U+10FFFF
    } else {
      return Utf8Step::kInvalid;  // stray continuation, C0/C1, F5..FF
    }
    return Utf8Step::kNeedMore;
  }
  if (byte < state.next_lo || byte > state.next_hi) return Utf8Step::kInvalid;
  state.value = (state.value << 6) | (byte & 0x3Fu);
  state.next_lo = 0x80;
  state.next_hi = 0xBF;
  if (--state.remaining > 0) return Utf8Step::kNeedMore;
  cp = state.value;
  state = Utf8Partial{};
  return Utf8Step::kComplete;
}

}  // namespace hearth::grammar::detail
