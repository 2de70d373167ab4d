// hearth-gguf-dump: prints a GGUF file's header, metadata and tensor directory.
#include <cstdio>
#include <string>

#include "gguf/file.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.gguf [--all]\n", argv[0]);
    return 2;
  }
  const bool all = argc > 2 && std::string(argv[2]) == "--all";
  auto archive = hearth::gguf::Archive::open(argv[1]);
  if (!archive.is_ok()) {
    std::fprintf(stderr, "error: %s\n", archive.status().to_string().c_str());
    return 1;
  }
  for (const auto& file : archive->files()) {
    std::printf("%s: GGUF v%u, %zu metadata keys, %zu tensors, alignment %u, data at %llu\n",
                file.name().c_str(), file.version(), file.metadata().size(), file.tensors().size(),
                file.alignment(), static_cast<unsigned long long>(file.data_offset()));
    for (const auto& kv : file.metadata()) {
      std::printf("  %-45.*s %s\n", static_cast<int>(kv.key.size()), kv.key.data(),
                  kv.value.to_display_string(all ? 1u << 30 : 8).c_str());
    }
    for (const auto& t : file.tensors()) {
      std::printf("  tensor %-32.*s %-8s %-16s %llu bytes\n", static_cast<int>(t.name.size()),
                  t.name.data(), std::string(hearth::tensor_type_name(t.type)).c_str(),
                  t.shape_string().c_str(), static_cast<unsigned long long>(t.n_bytes));
    }
  }
  return 0;
}
