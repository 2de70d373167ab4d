// Byte-level BPE pre-tokenization: the regex list of each `tokenizer.ggml.pre` value and a
// PCRE2-based splitter that cuts text into words the way llama.cpp's unicode_regex_split does.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace hearth::tokenizer {

// What a `tokenizer.ggml.pre` value selects for a BPE vocabulary (tokenizers.md §5.4).
struct PreTokenizerConfig {
  std::string name;                  // canonical pre value ("default" when missing)
  std::vector<std::string> regexes;  // applied in order, each to every chunk
  bool byte_encode = true;           // GPT-2 byte alphabet (false: raw UTF-8 with <0xXX> bytes)
  bool clean_spaces = true;
  bool ignore_merges = false;
  bool add_bos = false;
  bool add_sep = false;
  bool escape_whitespaces = false;  // spaces become U+2581 before splitting (gemma4)
  bool bos_unset = false;           // the pre type clears the default BOS id
};

// kUnsupported for values llama.cpp rejects or that need custom code not implemented here.
Result<PreTokenizerConfig> pre_tokenizer_config(std::string_view pre);

// Every pre value pre_tokenizer_config() accepts.
std::vector<std::string_view> supported_pre_tokenizers();

// Guesses the pre value from a Hugging Face `Split` regex; empty when unknown.
std::string pre_from_hf_regex(std::string_view pattern);

// Splits text into words with a list of regexes (tokenizers.md §5.5). Compiled once, then
// safe to use from many threads at the same time.
class RegexSplitter {
 public:
  static Result<RegexSplitter> create(const std::vector<std::string>& patterns);

  // Words of `text` (decoded leniently, invalid bytes become U+FFFD), each re-encoded as UTF-8
  // and, with `byte_encode`, mapped through the GPT-2 byte alphabet.
  std::vector<std::string> split(std::string_view text, bool byte_encode) const;

  struct Compiled;

 private:
  std::vector<std::shared_ptr<const Compiled>> compiled_;
};

// The PCRE2 pattern actually compiled for a llama.cpp pattern (exposed for tests).
Result<std::string> translate_pattern(std::string_view pattern);

}  // namespace hearth::tokenizer
