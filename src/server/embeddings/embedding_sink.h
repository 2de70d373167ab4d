// Collects the results of one embedding or rerank request: one task per input, answered
// together once every result is in (or with the first error, which stops the others). The
// scheduler thread only stores the vectors; the JSON is built on the connection's thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "scheduler/task.h"
#include "server/api_error.h"
#include "server/http/http.h"
#include "server/json_util.h"

namespace hearth::server {

class EmbeddingSink final : public scheduler::TaskSink,
                            public std::enable_shared_from_this<EmbeddingSink> {
 public:
  // Builds the body from every result, in index order.
  using Render = std::function<Json(const std::vector<scheduler::EmbeddingResult>&)>;

  EmbeddingSink(int32_t n_results, Render render);

  // Scheduler thread.
  void on_final(scheduler::FinalResult&& result) override;
  void on_embedding(scheduler::EmbeddingResult&& result) override;
  void on_error(int32_t index, const scheduler::TaskError& error) override;

  // The HTTP answer, pending until every result (or the first error) is in.
  http::Response response();

 private:
  void resolve_locked(std::optional<ApiError> error);

  const int32_t n_results_;
  Render render_;
  std::shared_ptr<http::PendingResponse> pending_ = std::make_shared<http::PendingResponse>();
  std::mutex mutex_;
  bool resolved_ = false;
  std::vector<scheduler::EmbeddingResult> results_;
};

}  // namespace hearth::server
