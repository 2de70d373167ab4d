#include "base/pooling_type.h"

namespace hearth {

namespace {

struct PoolingName {
  PoolingType type;
  std::string_view name;
};

constexpr PoolingName kPoolingNames[] = {
    {PoolingType::kNone, "none"}, {PoolingType::kMean, "mean"}, {PoolingType::kCls, "cls"},
    {PoolingType::kLast, "last"}, {PoolingType::kRank, "rank"},
};

}  // namespace

std::optional<PoolingType> pooling_from_name(std::string_view name) {
  for (const PoolingName& p : kPoolingNames) {
    if (p.name == name) return p.type;
  }
  return std::nullopt;
}

std::string_view pooling_name(PoolingType type) {
  for (const PoolingName& p : kPoolingNames) {
    if (p.type == type) return p.name;
  }
  return "unspecified";
}

}  // namespace hearth
