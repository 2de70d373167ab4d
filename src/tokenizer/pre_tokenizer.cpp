// The pre-tokenizer table of llama.cpp (tokenizers.md §5.4): for each `tokenizer.ggml.pre`
// value, the list of regexes and the flags it implies. Patterns are written exactly as
// llama.cpp writes them (non-ASCII characters as \x{...}); regex_split.cpp adapts them to PCRE2.
#include <array>

#include "tokenizer/pre_tokenizer.h"

namespace hearth::tokenizer {
namespace {

// Case-insensitive contractions spelled out, as llama.cpp rewrites (?i:'s|'t|...).
const std::string kContr = R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))";
const std::string kGpt2Rx =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
const std::string kLlama3Rx =
    kContr +
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kQwen2Rx =
    kContr +
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kQwen35Rx =
    kContr +
    R"(|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kTekkenRx = R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+)"
                              R"(|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*)"
                              R"(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kGpt4oRx =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+)" + kContr +
    R"(?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*)" + kContr +
    R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kGraniteEmbMultiRx =
    R"([^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+)" + kContr +
    R"(?|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*)" + kContr +
    R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kTinyAyaRx =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)" + kContr +
    R"(?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*)" + kContr +
    R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kDeepseek3Rx =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+)"
    R"(| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kJais2Rx =
    kContr + R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+)"
             R"(|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S))"
             R"(|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})";
const std::string kBailingRx =
    R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
    R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)";
const std::string kSeedCoderRx =
    kContr +
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kExaoneMoeRx =
    kContr +
    R"(|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?)"
    R"(|\s*[\r\n]|\s+(?!\S)|\s+)";
const std::string kMinicpm5Rx =
    kContr +
    R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// DeepSeek LLM: Latin/Greek/Cyrillic/... letters, ASCII and full-width punctuation, CJK.
const std::string kDsLatin =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})"
    R"(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A})"
    R"(\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556})"
    R"(\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})"
    R"(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D})"
    R"(\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D})"
    R"(\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4})"
    R"(\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4})"
    R"(\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124})"
    R"(\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F})"
    R"(\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4})"
    R"(\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F})"
    R"(\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17})"
    R"(\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3})"
    R"(\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF})"
    R"(\x{1E900}-\x{1E943}]+)";
const std::string kDsPunct =
    R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)";
const std::string kCjkA = R"([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";
const std::string kCjkB = R"([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)";
const std::string kPoroRx =
    R"( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)";

enum class Set {
  kDefault,
  kLlama3,
  kJais2,
  kDeepseekLlm,
  kDeepseek3,
  kDeepseekCoder,
  kFalcon,
  kStarcoder,
  kGpt2,
  kQwen2,
  kQwen35,
  kPoro,
  kViking,
  kTekken,
  kChameleon,
  kGpt4o,
  kGraniteEmbMulti,
  kTinyAya,
  kSuperbpe,
  kBailing,
  kSeedCoder,
  kLaguna,
  kExaoneMoe,
  kSplitLines,
  kMinicpm5,
};

std::vector<std::string> regexes_of(Set set) {
  switch (set) {
    case Set::kDefault:
      return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2Rx, R"(\p{N}+)", "[0-9][0-9][0-9]"};
    case Set::kLlama3:
      return {kLlama3Rx};
    case Set::kJais2:
      return {kJais2Rx};
    case Set::kDeepseekLlm:
      return {"[\r\n]", kDsLatin, kDsPunct, R"(\s+$)", kCjkA, R"(\p{N}+)"};
    case Set::kDeepseek3:
      return {R"(\p{N}{1,3})", kCjkB, kDeepseek3Rx};
    case Set::kDeepseekCoder:
      return {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjkA, R"(\p{N})"};
    case Set::kFalcon:
      return {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2Rx, "[0-9][0-9][0-9]"};
    case Set::kStarcoder:
      return {R"(\p{N})", kGpt2Rx};
    case Set::kGpt2:
      return {kGpt2Rx};
    case Set::kQwen2:
      return {kQwen2Rx};
    case Set::kQwen35:
      return {kQwen35Rx};
    case Set::kPoro:
      return {kPoroRx};
    case Set::kViking:
      return {kPoroRx, R"(\p{N})"};
    case Set::kTekken:
      return {kTekkenRx};
    case Set::kChameleon:
      return {"<sentinel:[0-9]+>",       "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
              R"(([\t\n]|    |  ))",     R"(\p{N})",
              R"([\p{P}!-/:-@\[-`{-~])", kGpt2Rx};
    case Set::kGpt4o:
      return {kGpt4oRx};
    case Set::kGraniteEmbMulti:
      return {kGraniteEmbMultiRx};
    case Set::kTinyAya:
      return {R"(\d{1,3}(?=(?:\d{3})*\b))", kTinyAyaRx};
    case Set::kSuperbpe:
      return {R"(\p{N}+)", R"((?=(\d{3})+(?!\d)))"};
    case Set::kBailing:
      return {kBailingRx};
    case Set::kSeedCoder:
      return {kSeedCoderRx};
    case Set::kLaguna:
      return {R"([^\n]+|[\n]+)", kQwen2Rx};
    case Set::kExaoneMoe:
      return {kExaoneMoeRx};
    case Set::kSplitLines:
      return {R"([^\n]+|[\n]+)"};
    case Set::kMinicpm5:
      return {R"(\p{N}{1,3})", kMinicpm5Rx};
  }
  return {};
}

enum Flag : uint32_t {
  kNoClean = 1u << 0,
  kIgnoreMerges = 1u << 1,
  kAddBos = 1u << 2,
  kAddSep = 1u << 3,
  kEscapeWs = 1u << 4,
  kRawBytes = 1u << 5,
  kBosUnset = 1u << 6,
};

struct Entry {
  std::string_view name;
  Set set;
  uint32_t flags;
};

// The pre values llama.cpp accepts, with what each selects (llama-vocab.cpp, load()).
constexpr std::array kEntries = {
    Entry{"default", Set::kDefault, 0},
    Entry{"minicpm5", Set::kMinicpm5, kIgnoreMerges},
    Entry{"llama3", Set::kLlama3, kIgnoreMerges | kAddBos},
    Entry{"llama-v3", Set::kLlama3, kIgnoreMerges | kAddBos},
    Entry{"llama-bpe", Set::kLlama3, kIgnoreMerges | kAddBos},
    Entry{"falcon3", Set::kLlama3, kIgnoreMerges | kAddBos},
    Entry{"falcon-h1", Set::kLlama3, kIgnoreMerges | kAddBos},
    Entry{"pixtral", Set::kLlama3, kIgnoreMerges | kAddBos},
    Entry{"midm-2.0", Set::kLlama3, kIgnoreMerges | kAddBos},
    Entry{"lfm2", Set::kLlama3, kIgnoreMerges | kAddBos},
    Entry{"jina-v5-nano", Set::kLlama3, kIgnoreMerges | kAddBos},
    Entry{"deepseek-llm", Set::kDeepseekLlm, kNoClean},
    Entry{"deepseek-coder", Set::kDeepseekCoder, kNoClean},
    Entry{"deepseek-v3", Set::kDeepseek3, kNoClean},
    Entry{"falcon", Set::kFalcon, 0},
    Entry{"mpt", Set::kGpt2, 0},
    Entry{"starcoder", Set::kStarcoder, 0},
    Entry{"gpt-2", Set::kGpt2, 0},
    Entry{"phi-2", Set::kGpt2, 0},
    Entry{"jina-es", Set::kGpt2, 0},
    Entry{"jina-de", Set::kGpt2, 0},
    Entry{"gigachat", Set::kGpt2, 0},
    Entry{"jina-v2-es", Set::kGpt2, 0},
    Entry{"jina-v2-de", Set::kGpt2, 0},
    Entry{"a.x-4.0", Set::kGpt2, 0},
    Entry{"mellum", Set::kGpt2, 0},
    Entry{"modern-bert", Set::kGpt2, 0},
    Entry{"jais-2", Set::kJais2, 0},
    Entry{"gemma4", Set::kSplitLines, kEscapeWs | kRawBytes},
    Entry{"granite-embed-multi-311m", Set::kSplitLines, kEscapeWs | kRawBytes},
    Entry{"sarvam-moe", Set::kSplitLines, kEscapeWs | kRawBytes | kNoClean},
    Entry{"jina-v1-en", Set::kGpt2, kAddSep},
    Entry{"jina-v2-code", Set::kGpt2, kAddSep},
    Entry{"roberta-bpe", Set::kGpt2, kAddSep},
    Entry{"refact", Set::kStarcoder, 0},
    Entry{"command-r", Set::kStarcoder, kNoClean},
    Entry{"qwen2", Set::kQwen2, kNoClean},
    Entry{"deepseek-r1-qwen", Set::kQwen2, kNoClean},
    Entry{"kormo", Set::kQwen2, kNoClean},
    Entry{"f2llmv2", Set::kQwen2, kNoClean},
    Entry{"qwen35", Set::kQwen35, kNoClean},
    Entry{"stablelm2", Set::kQwen2, 0},
    Entry{"olmo", Set::kGpt2, 0},
    Entry{"dbrx", Set::kLlama3, 0},
    Entry{"smaug-bpe", Set::kLlama3, 0},
    Entry{"poro-chat", Set::kPoro, kNoClean},
    Entry{"glm4", Set::kLlama3, kBosUnset},
    Entry{"chatglm-bpe", Set::kLlama3, kBosUnset},
    Entry{"viking", Set::kViking, kNoClean},
    Entry{"jais", Set::kGpt2, 0},
    Entry{"tekken", Set::kTekken, kNoClean | kIgnoreMerges | kAddBos},
    Entry{"smollm", Set::kStarcoder, kNoClean},
    Entry{"codeshell", Set::kStarcoder, 0},
    Entry{"bloom", Set::kPoro, 0},
    Entry{"gpt3-finnish", Set::kPoro, 0},
    Entry{"exaone", Set::kStarcoder, 0},
    Entry{"exaone4", Set::kGpt2, 0},
    Entry{"exaone-moe", Set::kExaoneMoe, 0},
    Entry{"chameleon", Set::kChameleon, kAddBos | kNoClean},
    Entry{"minerva-7b", Set::kStarcoder, 0},
    Entry{"megrez", Set::kQwen2, 0},
    Entry{"gpt-4o", Set::kGpt4o, kNoClean},
    Entry{"llama4", Set::kGpt4o, kNoClean},
    Entry{"kanana2", Set::kGpt4o, kNoClean},
    Entry{"talkie", Set::kGpt4o, kNoClean},
    Entry{"granite-embed-multi-97m", Set::kGraniteEmbMulti, kNoClean | kIgnoreMerges},
    Entry{"tiny_aya", Set::kTinyAya, kNoClean},
    Entry{"cohere2moe", Set::kTinyAya, kNoClean},
    Entry{"superbpe", Set::kSuperbpe, kNoClean},
    Entry{"trillion", Set::kGpt2, kNoClean},
    Entry{"granite-docling", Set::kGpt2, kNoClean},
    Entry{"bailingmoe", Set::kBailing, kNoClean},
    Entry{"bailingmoe2", Set::kBailing, kNoClean},
    Entry{"llada-moe", Set::kBailing, kNoClean},
    Entry{"seed-coder", Set::kSeedCoder, kNoClean},
    Entry{"hunyuan", Set::kQwen2, kNoClean},
    Entry{"hunyuan-dense", Set::kDeepseek3, kNoClean},
    Entry{"joyai-llm", Set::kDeepseek3, kNoClean},
    Entry{"grok-2", Set::kQwen2, kNoClean},
    Entry{"laguna", Set::kLaguna, kNoClean},
    Entry{"minimax-m2", Set::kGpt4o, kNoClean},
    Entry{"solar-open", Set::kQwen2, kNoClean},
    Entry{"mellum2", Set::kStarcoder, 0},
};

}  // namespace

Result<PreTokenizerConfig> pre_tokenizer_config(std::string_view pre) {
  if (pre.empty()) pre = "default";
  for (const Entry& e : kEntries) {
    if (e.name != pre) continue;
    PreTokenizerConfig config;
    config.name = std::string(e.name);
    config.regexes = regexes_of(e.set);
    config.clean_spaces = (e.flags & kNoClean) == 0;
    config.ignore_merges = (e.flags & kIgnoreMerges) != 0;
    config.add_bos = (e.flags & kAddBos) != 0;
    config.add_sep = (e.flags & kAddSep) != 0;
    config.escape_whitespaces = (e.flags & kEscapeWs) != 0;
    config.byte_encode = (e.flags & kRawBytes) == 0;
    config.bos_unset = (e.flags & kBosUnset) != 0;
    return config;
  }
  return error(ErrorCode::kUnsupported,
               "unsupported pre-tokenizer type '" + std::string(pre) + "' (tokenizer.ggml.pre)");
}

std::vector<std::string_view> supported_pre_tokenizers() {
  std::vector<std::string_view> names;
  for (const Entry& e : kEntries) names.push_back(e.name);
  return names;
}

std::string pre_from_hf_regex(std::string_view pattern) {
  // The original (?i:...) forms found in tokenizer.json files.
  static const std::string kCi = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
  struct Known {
    std::string regex;
    std::string_view pre;
  };
  static const std::string kCased = R"([\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])";
  static const std::string kLower = R"([\p{Ll}\p{Lm}\p{Lo}\p{M}])";
  static const std::array<Known, 7> kKnown = {{
      {kCi + kLlama3Rx.substr(kContr.size()), "llama-bpe"},
      {kCi + kQwen2Rx.substr(kContr.size()), "qwen2"},
      {kCi + kQwen35Rx.substr(kContr.size()), "qwen35"},
      {kGpt2Rx + R"(|\s+)", "gpt-2"},
      {R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|)"
       R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}|)"
       R"( ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       "tekken"},
      {kLlama3Rx, "llama-bpe"},
      // o200k (GPT-4o, GPT-OSS): cased words with optional contractions, 1-3 digits.
      {R"([^\r\n\p{L}\p{N}]?)" + kCased + "*" + kLower + "+" + kCi + R"(?|[^\r\n\p{L}\p{N}]?)" +
           kCased + "+" + kLower + "*" + kCi +
           R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       "gpt-4o"},
  }};
  for (const Known& k : kKnown) {
    if (k.regex == pattern) return std::string(k.pre);
  }
  return {};
}

}  // namespace hearth::tokenizer
