// Writes the seed corpus for gguf_fuzz: a few tiny valid files that between them use every
// metadata value type, several tensor types, a custom alignment and the split keys.
//
//   build-fuzz/bin/make_gguf_seeds tests/fuzz/corpus/gguf
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gguf/writer.h"

namespace {

using hearth::TensorType;
using hearth::gguf::ValueType;
using hearth::gguf::Writer;

template <typename T>
std::vector<uint8_t> array_payload(ValueType element, const std::vector<T>& values) {
  std::vector<uint8_t> out(12 + sizeof(T) * values.size());
  const auto type = static_cast<uint32_t>(element);
  const uint64_t count = values.size();
  std::memcpy(out.data(), &type, 4);
  std::memcpy(out.data() + 4, &count, 8);
  if (!values.empty()) std::memcpy(out.data() + 12, values.data(), sizeof(T) * values.size());
  return out;
}

void add(Writer& w, std::string_view name, TensorType type, std::vector<int64_t> ne,
         std::vector<uint8_t> data) {
  const hearth::Status status = w.add_tensor(name, type, std::move(ne), std::move(data));
  if (!status.is_ok()) {
    std::fprintf(stderr, "%s\n", status.to_string().c_str());
    std::exit(1);
  }
}

std::vector<uint8_t> bytes_of(size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(first + i);
  return v;
}

// A minimal model: the usual header keys, a vocabulary and three tensors.
Writer small_model() {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 1);
  w.set_u32("llama.embedding_length", 8);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "b"});
  w.set_f32_array("tokenizer.ggml.scores", std::vector<float>{0, 0, 0, -1, -2});
  w.set_i32_array("tokenizer.ggml.token_type", std::vector<int32_t>{2, 3, 3, 1, 1});
  add(w, "token_embd.weight", TensorType::kF32, {8, 5}, bytes_of(160, 0));
  add(w, "blk.0.attn_q.weight", TensorType::kQ8_0, {32, 1}, bytes_of(34, 7));
  add(w, "output_norm.weight", TensorType::kF16, {8}, bytes_of(16, 3));
  return w;
}

// Every scalar and array value type, alignment 8, multi-dimensional quantized tensors.
Writer all_types() {
  Writer w;
  w.set_alignment(8);
  w.set_u8("u8", 1);
  w.set_i8("i8", -1);
  w.set_u16("u16", 2);
  w.set_i16("i16", -2);
  w.set_u32("u32", 3);
  w.set_i32("i32", -3);
  w.set_u64("u64", 4);
  w.set_i64("i64", -4);
  w.set_f32("f32", 0.5f);
  w.set_f64("f64", 0.25);
  w.set_bool("bool", false);
  w.set_string("string", "text");
  w.set_raw("a.u8", 9, array_payload<uint8_t>(ValueType::kU8, {1, 2}));
  w.set_raw("a.i16", 9, array_payload<int16_t>(ValueType::kI16, {-1}));
  w.set_raw("a.u64", 9, array_payload<uint64_t>(ValueType::kU64, {5}));
  w.set_raw("a.f64", 9, array_payload<double>(ValueType::kF64, {1.5}));
  w.set_raw("a.bool", 9, array_payload<uint8_t>(ValueType::kBool, {1, 0}));
  w.set_string_array("a.string", {"x", ""});
  add(w, "q4", TensorType::kQ4_0, {32, 2}, bytes_of(36, 1));
  add(w, "bf16", TensorType::kBF16, {2, 1, 2, 1}, bytes_of(8, 2));
  add(w, "empty", TensorType::kF32, {0, 3}, {});
  add(w, "q4k", TensorType::kQ4_K, {256}, bytes_of(144, 9));
  return w;
}

// The first shard of a one-shard split model, and no tensors of its own.
Writer split_keys() {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u16("split.no", 0);
  w.set_u16("split.count", 1);
  w.set_i32("split.tensors.count", 0);
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::pair<const char*, Writer> seeds[] = {
      {"seed-small-model.gguf", small_model()},
      {"seed-all-types.gguf", all_types()},
      {"seed-split-keys.gguf", split_keys()},
  };
  for (const auto& [name, writer] : seeds) {
    const hearth::Status status = writer.write(dir + "/" + name);
    if (!status.is_ok()) {
      std::fprintf(stderr, "%s\n", status.to_string().c_str());
      return 1;
    }
  }
  return 0;
}
