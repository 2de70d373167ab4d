// Text <-> token ids, matching llama.cpp (b10573) token for token.
//
// A Tokenizer is built once from a GGUF file or a Hugging Face tokenizer.json and is immutable
// afterwards: every method is const and safe to call from many threads at once. Copies share
// the same vocabulary.
//
//   HEARTH_ASSIGN_OR_RETURN(auto tok, Tokenizer::from_gguf(file));
//   std::vector<TokenId> ids = tok.tokenize("Hello", /*add_special=*/true,
//   /*parse_special=*/false); std::string text = tok.detokenize(ids);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gguf/file.h"

namespace hearth::tokenizer {

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

enum class VocabType {
  kSpm,  // tokenizer.ggml.model "llama": SentencePiece BPE with scores and byte fallback
  kBpe,  // "gpt2" (and "gemma4"): byte-level BPE with merges and a regex pre-tokenizer
  kWpm,  // "bert": WordPiece
  kUgm,  // "t5": SentencePiece unigram (Viterbi over token scores, precompiled normalizer)
};

// Token attributes (bit flags, numbered as llama_token_attr).
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1u << 0,
  kAttrUnused = 1u << 1,
  kAttrNormal = 1u << 2,
  kAttrControl = 1u << 3,
  kAttrUserDefined = 1u << 4,
  kAttrByte = 1u << 5,
  kAttrNormalized = 1u << 6,
  kAttrLstrip = 1u << 7,
  kAttrRstrip = 1u << 8,
  kAttrSingleWord = 1u << 9,
};

struct TokenizerJsonOptions {
  // tokenizer.ggml.pre value to use; empty: guessed from the pre_tokenizer regex of
  // tokenizer.json (llama-bpe, qwen2, qwen35, gpt-2, tekken, deepseek-v3, smollm/starcoder).
  std::string pre;
  // Vocabulary size (config.json "vocab_size"); ids past the last token are filled with
  // "[PAD<i>]" UNUSED tokens as llama.cpp's converter does. 0: as many as tokenizer.json has,
  // or config.json's vocab_size when `config_json_path` is given.
  int32_t n_vocab = 0;
  // Optional model config.json: vocab_size and <type>_token_id entries not set by
  // tokenizer_config.json (as gguf-py's SpecialVocab reads them).
  std::string config_json_path;
};

struct Vocab;
struct TokenizerImpl;

class Tokenizer {
 public:
  static Result<Tokenizer> from_gguf(const gguf::File& file);
  // Byte-level BPE tokenizer.json files (plus tokenizer_config.json for add_bos_token,
  // add_eos_token, bos_token, eos_token, ...), converted as llama.cpp's convert_hf_to_gguf.py.
  static Result<Tokenizer> from_tokenizer_json(const std::string& tokenizer_json_path,
                                               const std::string& tokenizer_config_path = "");
  static Result<Tokenizer> from_tokenizer_json(const std::string& tokenizer_json_path,
                                               const std::string& tokenizer_config_path,
                                               const TokenizerJsonOptions& options);

  // llama_tokenize: `add_special` adds BOS/EOS (SEP for WPM) as the vocabulary asks;
  // `parse_special` turns the text of CONTROL/UNKNOWN tokens into those tokens (USER_DEFINED
  // token texts are always recognised).
  std::vector<TokenId> tokenize(std::string_view text, bool add_special, bool parse_special) const;

  // llama_token_to_piece. `special`: render CONTROL/UNKNOWN tokens as their text (else empty);
  // `lstrip`: drop up to that many leading spaces. Unknown ids give an empty piece.
  std::string token_to_piece(TokenId id, bool special = true, int lstrip = 0) const;

  // llama_detokenize: the pieces concatenated, the first piece's leading space removed for
  // vocabularies with add_space_prefix, BOS/EOS dropped with `remove_special`, control tokens
  // rendered with `unparse_special`, then the clean-up passes of BPE vocabularies. Ids outside
  // the vocabulary render as nothing.
  std::string detokenize(std::span<const TokenId> ids, bool remove_special = false,
                         bool unparse_special = false) const;

  int32_t n_vocab() const;
  VocabType type() const;
  std::string_view model() const;  // tokenizer.ggml.model
  std::string_view pre() const;    // pre-tokenizer in use (BPE), "default" otherwise

  // Special ids; kNoToken (-1) when the vocabulary has none.
  TokenId bos() const;
  TokenId eos() const;
  TokenId eot() const;
  TokenId eom() const;
  TokenId unk() const;
  TokenId sep() const;
  TokenId pad() const;
  TokenId mask() const;
  TokenId nl() const;
  TokenId fim_pre() const;
  TokenId fim_suf() const;
  TokenId fim_mid() const;
  TokenId fim_pad() const;
  TokenId fim_rep() const;
  TokenId fim_sep() const;

  // End-of-generation set: EOS, EOT, EOM, FIM pad/rep/sep and tokens named like them.
  bool is_eog(TokenId id) const;
  std::vector<TokenId> eog_ids() const;

  bool add_bos() const;
  bool add_eos() const;
  bool add_sep() const;
  bool add_space_prefix() const;
  bool clean_spaces() const;

  // Token table; out-of-range ids give "" / 0 / kAttrUndefined / false.
  std::string_view token_text(TokenId id) const;
  float token_score(TokenId id) const;
  uint32_t token_attr(TokenId id) const;
  bool is_control(TokenId id) const;
  bool is_user_defined(TokenId id) const;
  bool is_byte(TokenId id) const;
  bool is_unused(TokenId id) const;
  // The id of a token by its exact text, or kNoToken.
  TokenId find_token(std::string_view text) const;

 private:
  friend class StreamDetokenizer;
  explicit Tokenizer(std::shared_ptr<const TokenizerImpl> impl) : impl_(std::move(impl)) {}
  static Result<Tokenizer> from_vocab(Vocab vocab);

  std::shared_ptr<const TokenizerImpl> impl_;
};

// Incremental detokenize(): feed ids one at a time and get the text that is final so far. A
// character split across tokens is held back until complete, so the concatenation of every
// feed() and finish() equals detokenize() of all the ids with the same options. Keeps the
// vocabulary alive on its own; one instance per stream (not thread-safe itself).
class StreamDetokenizer {
 public:
  explicit StreamDetokenizer(const Tokenizer& tokenizer, bool remove_special = false,
                             bool unparse_special = false);
  ~StreamDetokenizer();
  StreamDetokenizer(StreamDetokenizer&&) noexcept;
  StreamDetokenizer& operator=(StreamDetokenizer&&) noexcept;

  std::string feed(TokenId id);
  // Everything still held back (possibly an incomplete character); the stream then restarts.
  std::string finish();

 private:
  struct State;
  std::shared_ptr<const TokenizerImpl> impl_;
  std::unique_ptr<State> state_;
};

// Whether `piece` is well-formed UTF-8 (llama-server returns such pieces as strings and the
// others as byte arrays).
bool is_valid_utf8(std::string_view piece);
// Length of the longest prefix of `text` that does not end inside a multi-byte character.
size_t complete_utf8_prefix(std::string_view text);

}  // namespace hearth::tokenizer
