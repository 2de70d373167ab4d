#include "tokenizer/unicode.h"

#include <array>

namespace hearth::tokenizer::unicode {
namespace {

bool is_continuation(uint8_t b) {
  return (b & 0xC0) == 0x80;
}

// Decodes one character at `offset`; returns false (consuming nothing) when malformed.
bool decode_one(std::string_view s, size_t& offset, uint32_t& cpt) {
  const auto at = [&](size_t i) { return static_cast<uint8_t>(s[offset + i]); };
  const uint8_t b0 = at(0);
  const size_t left = s.size() - offset;
  if ((b0 & 0x80) == 0) {
    cpt = b0;
    offset += 1;
    return true;
  }
  if ((b0 & 0x40) == 0) return false;  // a continuation byte cannot start a character
  if ((b0 & 0x20) == 0) {
    if (left < 2 || !is_continuation(at(1))) return false;
    cpt = ((b0 & 0x1Fu) << 6) | (at(1) & 0x3Fu);
    offset += 2;
    return true;
  }
  if ((b0 & 0x10) == 0) {
    if (left < 3 || !is_continuation(at(1)) || !is_continuation(at(2))) return false;
    cpt = ((b0 & 0x0Fu) << 12) | ((at(1) & 0x3Fu) << 6) | (at(2) & 0x3Fu);
    offset += 3;
    return true;
  }
  if ((b0 & 0x08) == 0) {
    if (left < 4 || !is_continuation(at(1)) || !is_continuation(at(2)) || !is_continuation(at(3))) {
      return false;
    }
    cpt = ((b0 & 0x07u) << 18) | ((at(1) & 0x3Fu) << 12) | ((at(2) & 0x3Fu) << 6) | (at(3) & 0x3Fu);
    offset += 4;
    return true;
  }
  return false;
}

struct Gpt2Tables {
  std::array<std::string, 256> byte_to_text;
  std::array<int16_t, 0x144> cpt_to_byte{};
};

const Gpt2Tables& gpt2_tables() {
  static const Gpt2Tables tables = [] {
    Gpt2Tables t;
    t.cpt_to_byte.fill(-1);
    const auto keeps_value = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cpt = keeps_value(b) ? static_cast<uint32_t>(b) : next++;
      t.byte_to_text[b] = to_utf8(cpt);
      t.cpt_to_byte[cpt] = static_cast<int16_t>(b);
    }
    return t;
  }();
  return tables;
}

}  // namespace

std::vector<uint32_t> decode_lossy(std::string_view text) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  size_t offset = 0;
  while (offset < text.size()) {
    uint32_t cpt = 0;
    if (decode_one(text, offset, cpt)) {
      out.push_back(cpt);
    } else {
      out.push_back(kReplacement);
      ++offset;
    }
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cpt) {
  if (cpt <= 0x7F) {
    out.push_back(static_cast<char>(cpt));
  } else if (cpt <= 0x7FF) {
    out.push_back(static_cast<char>(0xC0 | (cpt >> 6)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else if (cpt <= 0xFFFF) {
    out.push_back(static_cast<char>(0xE0 | (cpt >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else if (cpt <= 0x10FFFF) {
    out.push_back(static_cast<char>(0xF0 | (cpt >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else {
    append_utf8(out, kReplacement);
  }
}

std::string to_utf8(uint32_t cpt) {
  std::string s;
  append_utf8(s, cpt);
  return s;
}

bool is_whitespace(uint32_t cpt) {
  if (cpt <= 0x20) return cpt == 0x20 || (cpt >= 0x09 && cpt <= 0x0D);
  switch (cpt) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cpt >= 0x2000 && cpt <= 0x200A;
  }
}

const std::string& byte_to_gpt2(uint8_t byte) {
  return gpt2_tables().byte_to_text[byte];
}

int gpt2_to_byte(uint32_t cpt) {
  if (cpt >= 0x144) return -1;
  return gpt2_tables().cpt_to_byte[cpt];
}

bool is_valid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<uint8_t>(text[i]);
    size_t n = 0;
    if (b <= 0x7F) {
      n = 1;
    } else if ((b & 0xE0) == 0xC0) {
      n = 2;
    } else if ((b & 0xF0) == 0xE0) {
      n = 3;
    } else if ((b & 0xF8) == 0xF0) {
      n = 4;
    } else {
      return false;
    }
    if (text.size() - i < n) return false;
    for (size_t k = 1; k < n; ++k) {
      if (!is_continuation(static_cast<uint8_t>(text[i + k]))) return false;
    }
    i += n;
  }
  return true;
}

size_t complete_prefix_length(std::string_view text) {
  const size_t len = text.size();
  for (size_t i = 1; i <= 4 && i <= len; ++i) {
    const auto c = static_cast<uint8_t>(text[len - i]);
    if ((c & 0xE0) == 0xC0) {
      if (i < 2) return len - i;
    } else if ((c & 0xF0) == 0xE0) {
      if (i < 3) return len - i;
    } else if ((c & 0xF8) == 0xF0) {
      if (i < 4) return len - i;
    }
  }
  return len;
}

}  // namespace hearth::tokenizer::unicode
