#include "scheduler/task.h"

namespace hearth::scheduler {

const char* stop_type_name(StopType type) {
  switch (type) {
    case StopType::kNone:
      return "none";
    case StopType::kEos:
      return "eos";
    case StopType::kLimit:
      return "limit";
    case StopType::kWord:
      return "word";
  }
  return "none";
}

}  // namespace hearth::scheduler
