#include "scheduler/slot_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace hearth::scheduler {
namespace {

constexpr char kMagic[8] = {'H', 'E', 'A', 'R', 'T', 'H', 'S', 'L'};
// 2: the layers without a window in the header, and the first token whose windowed-layer
// rows are stored (KvSnapshot::window_first).
constexpr uint32_t kVersion = 2;
constexpr int kShapeFields = 8;  // version, then seven shape fields
// magic, version and shape, n_tokens, window_first.
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 * (kShapeFields + 2);

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Sequential reader; every get fails once the input is exhausted.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool get_u32(uint32_t& v) {
    if (left() < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(bytes_[at_++]) << (8 * i);
    return true;
  }
  bool get_u64(uint64_t& v) {
    if (left() < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(bytes_[at_++]) << (8 * i);
    return true;
  }
  std::span<const uint8_t> take(size_t n) {
    const std::span<const uint8_t> out = bytes_.subspan(at_, n);
    at_ += n;
    return out;
  }
  size_t left() const { return bytes_.size() - at_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

uint64_t token_bytes(const engine::KvCacheShape& s) {
  return static_cast<uint64_t>(s.token_bytes());
}

Status invalid(const char* reason) {
  return error(ErrorCode::kInvalidArgument, reason);
}

// Reads and checks magic, version and shape; false when any of them disagrees.
bool header_matches(Reader& in, const SlotFileShape& shape) {
  const std::span<const uint8_t> magic = in.take(sizeof(kMagic));
  if (std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0) return false;
  uint32_t f[kShapeFields] = {};
  for (uint32_t& v : f) {
    if (!in.get_u32(v)) return false;
  }
  const uint32_t want[kShapeFields] = {kVersion,
                                       static_cast<uint32_t>(shape.kv.n_layer),
                                       static_cast<uint32_t>(shape.kv.k_row_bytes),
                                       static_cast<uint32_t>(shape.kv.v_row_bytes),
                                       shape.type_k,
                                       shape.type_v,
                                       static_cast<uint32_t>(shape.n_vocab),
                                       static_cast<uint32_t>(shape.kv.n_full_layers())};
  return std::memcmp(f, want, sizeof(f)) == 0;
}

}  // namespace

std::vector<uint8_t> encode_slot_file(const SlotFileShape& shape, std::span<const int32_t> tokens,
                                      const engine::KvSnapshot& kv) {
  std::vector<uint8_t> out;
  out.reserve(kHeaderBytes + tokens.size() * 4 + 8 + kv.data.size());
  for (char c : kMagic) out.push_back(static_cast<uint8_t>(c));
  put_u32(out, kVersion);
  put_u32(out, static_cast<uint32_t>(shape.kv.n_layer));
  put_u32(out, static_cast<uint32_t>(shape.kv.k_row_bytes));
  put_u32(out, static_cast<uint32_t>(shape.kv.v_row_bytes));
  put_u32(out, shape.type_k);
  put_u32(out, shape.type_v);
  put_u32(out, static_cast<uint32_t>(shape.n_vocab));
  put_u32(out, static_cast<uint32_t>(shape.kv.n_full_layers()));
  put_u32(out, static_cast<uint32_t>(tokens.size()));
  put_u32(out, static_cast<uint32_t>(kv.window_first));
  for (int32_t t : tokens) put_u32(out, static_cast<uint32_t>(t));
  put_u64(out, kv.data.size());
  out.insert(out.end(), kv.data.begin(), kv.data.end());
  return out;
}

uint64_t max_slot_file_bytes(const SlotFileShape& shape, int32_t n_ctx_slot) {
  const auto n = static_cast<uint64_t>(std::max(n_ctx_slot, 0));
  return kHeaderBytes + n * 4 + 8 + n * token_bytes(shape.kv);
}

Result<SlotState> decode_slot_file(std::span<const uint8_t> bytes, const SlotFileShape& shape,
                                   int32_t n_ctx_slot) {
  if (bytes.size() < kHeaderBytes) return invalid(kRestoreInvalidFile);
  Reader in(bytes);
  if (!header_matches(in, shape)) return invalid(kRestoreInvalidFile);
  uint32_t n_tokens = 0, window_first = 0;
  if (!in.get_u32(n_tokens) || !in.get_u32(window_first)) return invalid(kRestoreInvalidFile);
  if (n_tokens > static_cast<uint32_t>(std::max(n_ctx_slot, 0))) return invalid(kRestoreTooLong);
  if (window_first > n_tokens) return invalid(kRestoreInvalidFile);
  if (in.left() < static_cast<size_t>(n_tokens) * 4) return invalid(kRestoreInvalidFile);
  SlotState state;
  state.tokens.resize(n_tokens);
  bool tokens_ok = true;
  for (int32_t& t : state.tokens) {
    uint32_t v = 0;
    (void)in.get_u32(v);
    t = static_cast<int32_t>(v);
    tokens_ok = tokens_ok && t >= 0 && t < shape.n_vocab;
  }
  if (!tokens_ok) return invalid(kRestoreBadTokens);
  uint64_t n_kv = 0;
  const uint64_t expected = window_first * static_cast<uint64_t>(shape.kv.full_token_bytes()) +
                            (n_tokens - window_first) * token_bytes(shape.kv);
  if (!in.get_u64(n_kv) || n_kv != expected || in.left() != n_kv)
    return invalid(kRestoreInvalidFile);
  const std::span<const uint8_t> rows = in.take(static_cast<size_t>(n_kv));
  state.kv.shape = shape.kv;
  state.kv.n_tokens = static_cast<int32_t>(n_tokens);
  state.kv.window_first = static_cast<int32_t>(window_first);
  state.kv.data.assign(rows.begin(), rows.end());
  return state;
}

Status write_file(const std::string& path, std::span<const uint8_t> bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return error(ErrorCode::kIo, fmt::format("cannot create {}: {}", path, strerror(errno)));
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    return error(ErrorCode::kIo, fmt::format("cannot write {}: {}", path, strerror(errno)));
  if (std::fclose(f.release()) != 0)
    return error(ErrorCode::kIo, fmt::format("cannot write {}: {}", path, strerror(errno)));
  return Status::ok();
}

Result<std::vector<uint8_t>> read_file_bounded(const std::string& path, uint64_t max_bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return error(ErrorCode::kIo, fmt::format("cannot open {}: {}", path, strerror(errno)));
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (;;) {
    const size_t n = std::fread(buf, 1, sizeof(buf), f.get());
    const size_t keep = static_cast<size_t>(std::min<uint64_t>(n, max_bytes - out.size()));
    out.insert(out.end(), buf, buf + keep);
    if (n < sizeof(buf) || out.size() == max_bytes) break;
  }
  if (std::ferror(f.get()))
    return error(ErrorCode::kIo, fmt::format("cannot read {}: {}", path, strerror(errno)));
  return out;
}

}  // namespace hearth::scheduler
