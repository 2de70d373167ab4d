// Slot actions (POST /slots/:id?action=save|restore|erase) run on an idle slot: its tokens
// and KV rows written to or read from a slot file (slot_file.h), or dropped. Queued by the
// server's threads in the intake and run by the step loop between engine steps, once the
// slot's task was released (a slot with a pending action takes no new task). Scheduler
// thread only.
#pragma once

#include <string>

#include "engine/context.h"
#include "scheduler/intake.h"
#include "scheduler/slot_file.h"
#include "scheduler/slot_table.h"

namespace hearth::scheduler::detail {

class SlotFiles {
 public:
  SlotFiles(const engine::Model& model, engine::Context& ctx, int32_t n_ctx_slot);

  Result<SlotFileResult> run(const SlotAction& action, Slot& slot);

 private:
  Result<SlotFileResult> save(const Slot& slot, const std::string& path);
  Result<SlotFileResult> restore(Slot& slot, const std::string& path);

  const SlotFileShape shape_;  // what a file must match to be restored here
  const int32_t n_ctx_slot_;
  engine::KvCache& kv_;
};

}  // namespace hearth::scheduler::detail
