#include "server/embeddings/embedding_sink.h"

#include <algorithm>

namespace hearth::server {

EmbeddingSink::EmbeddingSink(int32_t n_results, Render render)
    : n_results_(n_results), render_(std::move(render)) {}

http::Response EmbeddingSink::response() {
  // The client went away before the answer was written: the remaining tasks stop.
  pending_->set_on_cancel([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->cancel();
  });
  http::Response response;
  response.pending = pending_;
  if (n_results_ == 0) {
    std::lock_guard lock(mutex_);
    resolve_locked(std::nullopt);
  }
  return response;
}

void EmbeddingSink::on_final(scheduler::FinalResult&& /*result*/) {
  // Only completion tasks end here; an embedding request never submits one.
  on_error(0, {scheduler::TaskError::Kind::kServer, "unexpected completion result"});
}

void EmbeddingSink::on_embedding(scheduler::EmbeddingResult&& result) {
  std::lock_guard lock(mutex_);
  if (resolved_) return;
  results_.push_back(std::move(result));
  if (static_cast<int32_t>(results_.size()) >= n_results_) resolve_locked(std::nullopt);
}

void EmbeddingSink::on_error(int32_t /*index*/, const scheduler::TaskError& error) {
  {
    std::lock_guard lock(mutex_);
    if (resolved_) return;
    resolve_locked(from_task_error(error));
  }
  cancel();  // the other inputs of the request stop too
}

void EmbeddingSink::resolve_locked(std::optional<ApiError> error) {
  resolved_ = true;
  if (error) {
    pending_->resolve([e = std::move(*error)] { return error_response(e); });
    return;
  }
  std::sort(results_.begin(), results_.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  // The results move into the render, which runs once on the connection's thread.
  pending_->resolve([results = std::move(results_), render = render_] {
    http::Response response;
    response.body = dump_json(render(results));
    return response;
  });
}

}  // namespace hearth::server
