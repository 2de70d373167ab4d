#include "model_info.h"

#include <map>
#include <string>

namespace hearth::server_tool {

namespace {

// llama.cpp's file-type names, by general.file_type value.
std::string ftype_name(uint32_t ftype) {
  static const std::map<uint32_t, const char*> kNames = {{0, "all F32"},
                                                         {1, "F16"},
                                                         {2, "Q4_0"},
                                                         {3, "Q4_1"},
                                                         {7, "Q8_0"},
                                                         {8, "Q5_0"},
                                                         {9, "Q5_1"},
                                                         {10, "Q2_K - Medium"},
                                                         {11, "Q3_K - Small"},
                                                         {12, "Q3_K - Medium"},
                                                         {13, "Q3_K - Large"},
                                                         {14, "Q4_K - Small"},
                                                         {15, "Q4_K - Medium"},
                                                         {16, "Q5_K - Small"},
                                                         {17, "Q5_K - Medium"},
                                                         {18, "Q6_K"},
                                                         {21, "Q2_K - Small"},
                                                         {25, "IQ4_NL - 4.5 bpw"},
                                                         {30, "IQ4_XS - 4.25 bpw"},
                                                         {32, "BF16"},
                                                         {38, "MXFP4 MoE"}};
  auto it = kNames.find(ftype);
  return it == kNames.end() ? "unknown, may not work" : it->second;
}

// Without general.file_type the reference guesses from the most common weight type.
uint32_t guess_ftype(const gguf::Archive& archive) {
  std::map<TensorType, int> counts;
  for (const gguf::TensorInfo* t : archive.tensors()) {
    if (t->n_dims >= 2) ++counts[t->type];
  }
  TensorType best = TensorType::kF32;
  int best_count = -1;
  for (const auto& [type, count] : counts) {
    if (count > best_count) {
      best = type;
      best_count = count;
    }
  }
  static const std::map<TensorType, uint32_t> kFtype = {
      {TensorType::kF32, 0},   {TensorType::kF16, 1},     {TensorType::kBF16, 32},
      {TensorType::kQ4_0, 2},  {TensorType::kQ4_1, 3},    {TensorType::kQ5_0, 8},
      {TensorType::kQ5_1, 9},  {TensorType::kQ8_0, 7},    {TensorType::kQ2_K, 10},
      {TensorType::kQ3_K, 12}, {TensorType::kQ4_K, 15},   {TensorType::kQ5_K, 17},
      {TensorType::kQ6_K, 18}, {TensorType::kIQ4_NL, 25}, {TensorType::kIQ4_XS, 30}};
  auto it = kFtype.find(best);
  return it == kFtype.end() ? 0 : it->second;
}

int vocab_type_number(tokenizer::VocabType type) {
  switch (type) {
    case tokenizer::VocabType::kSpm:
      return 1;
    case tokenizer::VocabType::kBpe:
      return 2;
    case tokenizer::VocabType::kWpm:
      return 3;
    case tokenizer::VocabType::kUgm:
      return 4;
    default:
      return 0;
  }
}

}  // namespace

server::ModelInfo describe_model(const engine::Model& model, const tokenizer::Tokenizer& tok) {
  server::ModelInfo info;
  info.vocab_type = vocab_type_number(tok.type());
  info.n_vocab = tok.n_vocab();
  info.n_ctx_train = model.hparams().n_ctx_train;
  info.n_embd = model.hparams().n_embd;
  for (const gguf::TensorInfo* t : model.archive().tensors()) {
    info.n_params += static_cast<uint64_t>(t->n_elements());
  }
  info.size = model.archive().total_tensor_bytes();
  auto ftype = model.metadata().get_u32("general.file_type");
  info.ftype = ftype ? ftype_name(*ftype) : "(guessed) " + ftype_name(guess_ftype(model.archive()));
  // The reranking prompt with {query} and {document} (llama_model_chat_template "rerank").
  if (const gguf::Value* v = model.metadata().find("tokenizer.chat_template.rerank");
      v && v->as_string())
    info.rerank_template = std::string(*v->as_string());
  return info;
}

}  // namespace hearth::server_tool
