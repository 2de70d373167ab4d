// The pooling types of sentence embeddings as the reference numbers and names them (its
// --pooling values and the GGUF key `<arch>.pooling_type`). Here in base so that the option
// parser can read --pooling without linking the engine that pools.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hearth {

enum class PoolingType : int32_t {
  kUnspecified = -1,
  kNone = 0,  // one vector per token
  kMean = 1,  // the average of the sequence's rows
  kCls = 2,   // the first row
  kLast = 3,  // the last row
  kRank = 4,  // a classifier head's scores (rerankers)
};

std::optional<PoolingType> pooling_from_name(std::string_view name);
std::string_view pooling_name(PoolingType type);

}  // namespace hearth
