// Loading a model: the GGUF file's general.architecture picks the implementation from
// one table of architectures, each in its own file.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/model.h"
#include "gguf/file.h"

namespace hearth::models {

using ModelPtr = std::shared_ptr<const engine::Model>;

// Opens `path` (a single GGUF or the first shard of a split model) and loads it.
Result<ModelPtr> load_model(const std::string& path, const engine::LoadOptions& options = {});
Result<ModelPtr> load_model(std::shared_ptr<const gguf::Archive> archive,
                            const engine::LoadOptions& options = {});

// The architecture names load_model accepts.
std::vector<std::string_view> supported_architectures();

}  // namespace hearth::models
