#include "server/streams/stream_store.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace hearth::server::streams {

namespace {

using Clock = std::chrono::steady_clock;

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What the pump takes from a producer at a time: a bound on one render pass, not on the
// session (the producer keeps the rest for the next pass).
constexpr size_t kPumpChunkBytes = 64 * 1024;
// Finished sessions are also swept this often when nobody touches the store.
constexpr auto kSweepInterval = std::chrono::seconds(60);

// The answer a client gets for a session's stream: SSE, never buffered by proxies.
http::Response stream_answer(std::shared_ptr<http::StreamSource> reader) {
  http::Response response;
  response.content_type = "text/event-stream";
  response.headers.emplace_back("X-Accel-Buffering", "no");
  response.stream = std::move(reader);
  return response;
}

}  // namespace

class Feed;

// One conversation's bytes: a window of the newest `cap` bytes, addressed by absolute offset.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::string id, size_t cap)
      : id_(std::move(id)), cap_(cap), started_at_(unix_seconds()) {}

  const std::string& id() const { return id_; }

  void append(const std::string& bytes) {
    if (bytes.empty()) return;
    {
      std::lock_guard lock(mutex_);
      if (done_) return;
      buffer_ += bytes;
      const size_t kept = buffer_.size() - head_;
      if (kept > cap_) {
        head_ += kept - cap_;
        dropped_ += kept - cap_;
      }
      // Compacted once the dead prefix is the larger part: amortised O(1) per byte, and the
      // storage stays under twice the cap.
      if (head_ > buffer_.size() / 2) {
        buffer_.erase(0, head_);
        head_ = 0;
      }
    }
    wake_readers();
  }

  // The producer ended, was cancelled, or the session was evicted: readers drain and end.
  void finish() {
    {
      std::lock_guard lock(mutex_);
      if (done_) return;
      done_ = true;
      completed_at_ = unix_seconds();
      completed_steady_ = Clock::now();
      source_.reset();
      inner_.reset();
    }
    wake_readers();
  }

  // Stops the producer (and a generation that has not answered yet), then finishes.
  void cancel();

  // The generating answer this session waits for, and the client's own pending answer.
  void set_pending(std::shared_ptr<http::PendingResponse> inner,
                   std::shared_ptr<http::PendingResponse> outer) {
    std::lock_guard lock(mutex_);
    inner_ = std::move(inner);
    outer_ = std::move(outer);
  }

  // The answer is in: the client waiting for it is no longer ours to resolve. Null when the
  // session was cancelled meanwhile (the cancel resolved it).
  std::shared_ptr<http::PendingResponse> take_outer() {
    std::lock_guard lock(mutex_);
    inner_.reset();
    return std::move(outer_);
  }

  // False when the session was cancelled first (the caller then stops the producer).
  bool set_source(std::shared_ptr<Feed> source) {
    std::lock_guard lock(mutex_);
    if (cancelled_ || done_) return false;
    source_ = std::move(source);
    return true;
  }

  std::shared_ptr<Feed> source() const {
    std::lock_guard lock(mutex_);
    return source_;
  }

  // Appends what is available from `offset` (about `max_bytes`), advancing it. True once
  // there is nothing more to read: the session ended and the reader has it all, or the
  // reader fell behind the window.
  bool read(uint64_t& offset, std::string& out, size_t max_bytes) const {
    std::lock_guard lock(mutex_);
    if (offset < dropped_) return true;
    const uint64_t end = dropped_ + (buffer_.size() - head_);
    if (offset < end) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(end - offset, max_bytes));
      out.append(buffer_, head_ + static_cast<size_t>(offset - dropped_), n);
      offset += n;
    }
    return done_ && offset >= end;
  }

  bool offset_lost(uint64_t from) const {
    std::lock_guard lock(mutex_);
    return from < dropped_;
  }

  void add_reader(const void* key, std::function<void()> wake) {
    std::lock_guard lock(mutex_);
    readers_[key] = std::move(wake);
  }
  void remove_reader(const void* key) {
    std::lock_guard lock(mutex_);
    readers_.erase(key);
  }

  // Done longer ago than `ttl`.
  bool expired(Clock::time_point now, std::chrono::milliseconds ttl) const {
    std::lock_guard lock(mutex_);
    return done_ && now - completed_steady_ >= ttl;
  }
  bool done() const {
    std::lock_guard lock(mutex_);
    return done_;
  }
  Clock::time_point completed_steady() const {
    std::lock_guard lock(mutex_);
    return completed_steady_;
  }

  SessionStatus status() const {
    std::lock_guard lock(mutex_);
    return SessionStatus{.conversation_id = id_,
                         .is_done = done_,
                         .total_bytes = dropped_ + (buffer_.size() - head_),
                         .started_at = started_at_,
                         .completed_at = completed_at_};
  }

  // Drain scheduling: one pending pump pass per session at a time.
  bool mark_drain() { return !drain_scheduled_.exchange(true); }
  void clear_drain() { drain_scheduled_.store(false); }

  void resolve_with_reader(const std::shared_ptr<http::PendingResponse>& outer,
                           http::Response shape);

 private:
  void wake_readers() {
    std::vector<std::function<void()>> wakes;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [key, wake] : readers_) wakes.push_back(wake);
    }
    for (const auto& wake : wakes) wake();
  }

  const std::string id_;
  const size_t cap_;
  const int64_t started_at_;
  mutable std::mutex mutex_;
  std::string buffer_;    // bytes [head_, size) are the window
  size_t head_ = 0;       // dead prefix of buffer_
  uint64_t dropped_ = 0;  // absolute offset of the window's first byte
  bool done_ = false;
  bool cancelled_ = false;
  int64_t completed_at_ = 0;
  Clock::time_point completed_steady_{};
  std::shared_ptr<Feed> source_;                  // the producer, once it streams
  std::shared_ptr<http::PendingResponse> inner_;  // the generating answer, until it resolves
  std::shared_ptr<http::PendingResponse> outer_;  // the requesting client's, until resolved
  std::map<const void*, std::function<void()>> readers_;
  std::atomic<bool> drain_scheduled_{false};
};

// The producer's side of a session. While the requesting client is connected, its connection
// pulls the producer (so a slow client paces the generation, as without a session) and every
// byte it takes is also appended to the session. Once that client is gone, the store's pump
// pulls instead, so the generation runs to its end.
class Feed : public std::enable_shared_from_this<Feed> {
 public:
  using Handover = std::function<void()>;  // starts the pump on this feed's session

  Feed(std::shared_ptr<Session> session, std::shared_ptr<http::StreamSource> producer,
       Handover handover)
      : session_(std::move(session)),
        producer_(std::move(producer)),
        handover_(std::move(handover)) {}

  // Takes what the producer has ready into the session (and `out`, when given). True once
  // the producer ended or the feed was stopped.
  bool pull(std::string* out, size_t max_bytes) {
    if (stopped_.load()) return true;
    std::string bytes;
    const bool ended = producer_->take(bytes, max_bytes);
    session_->append(bytes);
    if (out) *out += bytes;
    if (ended) session_->finish();
    return ended;
  }

  // The client's connection wants to be told when there is more.
  void attach(std::function<void()> notify) {
    {
      std::lock_guard lock(mutex_);
      if (pumping_) return;
      client_notify_ = notify;
    }
    producer_->set_notify(std::move(notify));
  }

  // The client is gone (or never came): the pump takes over. Once only.
  void handover() {
    Handover start;
    {
      std::lock_guard lock(mutex_);
      if (pumping_) return;
      pumping_ = true;
      client_notify_ = nullptr;
      start = std::move(handover_);
    }
    if (start) start();
  }

  // Cancelled: the producer stops and a connected client is woken to see the end.
  void stop() {
    stopped_.store(true);
    producer_->abandon();
    std::function<void()> notify;
    {
      std::lock_guard lock(mutex_);
      notify = std::move(client_notify_);
      handover_ = nullptr;
    }
    if (notify) notify();
  }

  bool stopped() const { return stopped_.load(); }
  http::StreamSource& producer() { return *producer_; }

 private:
  std::shared_ptr<Session> session_;
  std::shared_ptr<http::StreamSource> producer_;
  std::mutex mutex_;
  Handover handover_;
  std::function<void()> client_notify_;
  bool pumping_ = false;
  std::atomic<bool> stopped_{false};
};

void Session::cancel() {
  std::shared_ptr<Feed> source;
  std::shared_ptr<http::PendingResponse> inner, outer;
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    source = std::move(source_);
    inner = std::move(inner_);
    outer = std::move(outer_);
  }
  if (source) source->stop();
  if (inner) inner->cancel();
  finish();
  // A client still waiting for the first event gets the (empty) stream, which ends at once.
  if (outer) resolve_with_reader(outer, {});
}

namespace {

// The requesting client's stream: the producer's bytes as they come, through the feed.
class ClientTap final : public http::StreamSource {
 public:
  explicit ClientTap(std::shared_ptr<Feed> feed) : feed_(std::move(feed)) {}
  // Dropped unwritten (the client left before its answer was sent): the pump takes over.
  ~ClientTap() override { feed_->handover(); }

  bool take(std::string& out, size_t max_bytes) override { return feed_->pull(&out, max_bytes); }
  void set_notify(std::function<void()> notify) override { feed_->attach(std::move(notify)); }
  void abandon() override { feed_->handover(); }

 private:
  std::shared_ptr<Feed> feed_;
};

// A client reading a session: what the connection pulls from.
class SessionReader final : public http::StreamSource {
 public:
  SessionReader(std::shared_ptr<Session> session, uint64_t from)
      : session_(std::move(session)), offset_(from) {}
  ~SessionReader() override { session_->remove_reader(this); }

  bool take(std::string& out, size_t max_bytes) override {
    return session_->read(offset_, out, std::max<size_t>(max_bytes, 1));
  }
  void set_notify(std::function<void()> notify) override {
    session_->add_reader(this, std::move(notify));
  }
  // A reader leaving stops nothing: that is the point of the session.
  void abandon() override { session_->remove_reader(this); }

 private:
  std::shared_ptr<Session> session_;
  uint64_t offset_;  // only the connection's thread touches it
};

}  // namespace

void Session::resolve_with_reader(const std::shared_ptr<http::PendingResponse>& outer,
                                  http::Response shape) {
  http::Response answer = stream_answer(std::make_shared<SessionReader>(shared_from_this(), 0));
  answer.ping_interval = shape.ping_interval;
  answer.ping_chunk = shape.ping_chunk;
  for (auto& header : shape.headers) {
    if (header.first != "X-Accel-Buffering") answer.headers.push_back(std::move(header));
  }
  outer->resolve([answer = std::move(answer)] { return answer; });
}

// --- The store ------------------------------------------------------------------------------

struct StreamStore::Impl : std::enable_shared_from_this<Impl> {
  explicit Impl(StreamLimits l) : limits(l) {}

  StreamLimits limits;
  std::mutex mutex;  // sessions
  std::unordered_map<std::string, std::shared_ptr<Session>> sessions;

  // The pump: one thread renders producers' output into sessions and runs first answers,
  // off the scheduler's thread and independent of any client.
  std::mutex pump_mutex;
  std::condition_variable pump_cv;
  std::deque<std::function<void()>> work;
  bool stopping = false;
  std::thread pump;

  void post(std::function<void()> job) {
    {
      std::lock_guard lock(pump_mutex);
      if (stopping) return;
      work.push_back(std::move(job));
    }
    pump_cv.notify_one();
  }

  void run_pump() {
    std::unique_lock lock(pump_mutex);
    while (true) {
      pump_cv.wait_for(lock, kSweepInterval, [this] { return stopping || !work.empty(); });
      if (stopping) return;
      if (work.empty()) {
        lock.unlock();
        sweep();
        lock.lock();
        continue;
      }
      std::function<void()> job = std::move(work.front());
      work.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  // Drops expired sessions. Caller must not hold `mutex`.
  void sweep() {
    std::vector<std::shared_ptr<Session>> gone;
    {
      std::lock_guard lock(mutex);
      sweep_locked(gone);
    }
  }
  void sweep_locked(std::vector<std::shared_ptr<Session>>& gone) {
    const auto now = Clock::now();
    for (auto it = sessions.begin(); it != sessions.end();) {
      if (it->second->expired(now, limits.ttl)) {
        gone.push_back(std::move(it->second));
        it = sessions.erase(it);
      } else {
        ++it;
      }
    }
  }

  // A new session for `id`; `replaced` gets the one it displaces. Null when full.
  std::shared_ptr<Session> create(const std::string& id, std::shared_ptr<Session>& replaced,
                                  std::vector<std::shared_ptr<Session>>& gone) {
    std::lock_guard lock(mutex);
    sweep_locked(gone);
    auto it = sessions.find(id);
    if (it == sessions.end() && sessions.size() >= limits.max_sessions && !evict_oldest_done()) {
      return nullptr;
    }
    auto session = std::make_shared<Session>(id, limits.max_session_bytes);
    if (it != sessions.end()) {
      replaced = std::move(it->second);
      it->second = session;
    } else {
      sessions.emplace(id, session);
    }
    return session;
  }

  bool evict_oldest_done() {
    auto oldest = sessions.end();
    for (auto it = sessions.begin(); it != sessions.end(); ++it) {
      if (!it->second->done()) continue;
      if (oldest == sessions.end() ||
          it->second->completed_steady() < oldest->second->completed_steady()) {
        oldest = it;
      }
    }
    if (oldest == sessions.end()) return false;
    sessions.erase(oldest);
    return true;
  }

  // Removes `session` if it is still the one mapped to its id.
  void remove(const std::shared_ptr<Session>& session) {
    std::lock_guard lock(mutex);
    auto it = sessions.find(session->id());
    if (it != sessions.end() && it->second == session) sessions.erase(it);
  }

  std::shared_ptr<Session> find(const std::string& id) {
    std::vector<std::shared_ptr<Session>> gone;
    std::lock_guard lock(mutex);
    sweep_locked(gone);
    auto it = sessions.find(id);
    return it == sessions.end() ? nullptr : it->second;
  }

  void schedule_drain(const std::shared_ptr<Session>& session) {
    if (!session->mark_drain()) return;
    post([weak = std::weak_ptr<Session>(session)] {
      auto s = weak.lock();
      if (!s) return;
      s->clear_drain();
      if (auto feed = s->source()) feed->pull(nullptr, kPumpChunkBytes);
    });
  }

  // Pump thread: the generating answer is ready; run its render and hand the client its part.
  void start(const std::shared_ptr<Session>& session, const http::PendingResponse::Render& render) {
    http::Response answer = render();
    std::shared_ptr<http::PendingResponse> outer = session->take_outer();
    if (!answer.stream) {
      // Not a stream (an error, or a non-streaming request): nothing to resume.
      remove(session);
      session->finish();
      if (outer) outer->resolve([answer = std::move(answer)] { return answer; });
      return;
    }
    auto feed = std::make_shared<Feed>(
        session, answer.stream,
        [weak_self = weak_from_this(), weak_session = std::weak_ptr<Session>(session)] {
          auto self = weak_self.lock();
          auto s = weak_session.lock();
          if (self && s) self->pump_session(s);
        });
    if (!session->set_source(feed)) {
      // Cancelled meanwhile: the generation stops and the client gets the ended session.
      feed->stop();
      if (outer) session->resolve_with_reader(outer, std::move(answer));
      return;
    }
    if (!outer || outer->cancelled()) {
      feed->handover();  // nobody to write to: the pump drains from the start
      return;
    }
    answer.stream = std::make_shared<ClientTap>(feed);
    outer->resolve([answer = std::move(answer)] { return answer; });
  }

  // The producer now notifies the pump, which drains it until it ends.
  void pump_session(const std::shared_ptr<Session>& session) {
    auto feed = session->source();
    if (!feed) return;
    feed->producer().set_notify(
        [weak_self = weak_from_this(), weak_session = std::weak_ptr<Session>(session)] {
          auto self = weak_self.lock();
          auto s = weak_session.lock();
          if (self && s) self->schedule_drain(s);
        });
    schedule_drain(session);
  }
};

StreamStore::StreamStore(StreamLimits limits) : impl_(std::make_shared<Impl>(limits)) {
  impl_->pump = std::thread([impl = impl_.get()] { impl->run_pump(); });
}

StreamStore::~StreamStore() {
  shutdown();
}

const StreamLimits& StreamStore::limits() const {
  return impl_->limits;
}

bool StreamStore::adopt(const std::string& id, http::Response answer, http::Response& out) {
  if (!answer.pending) {
    out = std::move(answer);
    return true;
  }
  std::shared_ptr<Session> replaced;
  std::vector<std::shared_ptr<Session>> gone;
  std::shared_ptr<Session> session = impl_->create(id, replaced, gone);
  if (replaced) replaced->cancel();
  if (!session) {
    answer.pending->cancel();
    return false;
  }
  auto outer = std::make_shared<http::PendingResponse>();
  std::shared_ptr<http::PendingResponse> inner = answer.pending;
  session->set_pending(inner, outer);
  // The client's leaving cancels only its wait: the session keeps the generation.
  inner->on_ready([weak = std::weak_ptr<Impl>(impl_), session](http::PendingResponse::Render r) {
    if (auto impl = weak.lock()) {
      impl->post([impl = impl.get(), session, r = std::move(r)] { impl->start(session, r); });
    }
  });
  out = http::Response{};
  out.headers = std::move(answer.headers);
  out.pending = outer;
  return true;
}

OpenResult StreamStore::open(const std::string& id, uint64_t from,
                             std::shared_ptr<http::StreamSource>& out) {
  std::shared_ptr<Session> session = impl_->find(id);
  if (!session) return OpenResult::kNotFound;
  if (session->offset_lost(from)) return OpenResult::kOffsetLost;
  out = std::make_shared<SessionReader>(session, from);
  return OpenResult::kOk;
}

void StreamStore::cancel(const std::string& id) {
  std::shared_ptr<Session> session;
  {
    std::lock_guard lock(impl_->mutex);
    auto it = impl_->sessions.find(id);
    if (it == impl_->sessions.end()) return;
    session = std::move(it->second);
    impl_->sessions.erase(it);
  }
  session->cancel();
}

std::vector<SessionStatus> StreamStore::lookup(const std::vector<std::string>& ids) {
  std::vector<std::shared_ptr<Session>> matched;
  {
    std::vector<std::shared_ptr<Session>> gone;
    std::lock_guard lock(impl_->mutex);
    impl_->sweep_locked(gone);
    for (const std::string& id : ids) {
      const std::string variant = id + "::";
      for (const auto& [key, session] : impl_->sessions) {
        if (key == id || key.compare(0, variant.size(), variant) == 0) matched.push_back(session);
      }
    }
  }
  std::vector<SessionStatus> out;
  out.reserve(matched.size());
  for (const auto& session : matched) out.push_back(session->status());
  return out;
}

void StreamStore::shutdown() {
  {
    std::lock_guard lock(impl_->pump_mutex);
    impl_->stopping = true;
    impl_->work.clear();
  }
  impl_->pump_cv.notify_all();
  if (impl_->pump.joinable()) impl_->pump.join();
  std::unordered_map<std::string, std::shared_ptr<Session>> all;
  {
    std::lock_guard lock(impl_->mutex);
    all.swap(impl_->sessions);
  }
  for (auto& [id, session] : all) session->cancel();
}

}  // namespace hearth::server::streams
