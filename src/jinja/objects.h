// The engine's objects as Jinja2 defines them: namespace() (jinja2.utils.Namespace), the for
// loop's `loop` (jinja2.runtime.LoopContext), cycler() and joiner().
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jinja/ast.h"
#include "jinja/value.h"

namespace hearth::jinja {

struct Frame;

class Namespace final : public Object {
 public:
  std::string_view type_name() const override { return "Namespace"; }
  Value get_attr(std::string_view name) const override;
  Status set_attr(std::string_view name, Value value) override;
  std::string to_str() const override;  // <Namespace {'a': 1}>

  DictData& attributes() { return attributes_; }

 private:
  DictData attributes_;
};

// `loop` inside a for loop. It walks the loop's items itself so that `loop.last`,
// `loop.nextitem` and `loop.length` can look ahead; with an `if` filter the filter runs
// lazily, item by item, as in Jinja2.
class LoopContext final : public Object, public std::enable_shared_from_this<LoopContext> {
 public:
  // Filters one candidate item (the `if` clause); unset when the loop has none.
  using ItemFilter = std::function<Result<bool>(const Value& item)>;

  LoopContext(std::vector<Value> items, ItemFilter filter, int depth0)
      : items_(std::move(items)),
        filter_(std::move(filter)),
        filtered_(static_cast<bool>(filter_)),
        depth0_(depth0) {}

  std::string_view type_name() const override { return "LoopContext"; }
  // Attribute errors (a failing filter while looking ahead) read as undefined here; the
  // evaluator uses attribute() to see them.
  Value get_attr(std::string_view name) const override;
  std::string to_str() const override;  // <LoopContext 1/3>

  Result<Value> attribute(std::string_view name) const;
  // The next item of the loop (after the filter), nullopt at the end; advances index0.
  Result<std::optional<Value>> next();
  // The loop is over: drop the filter (it refers to the evaluator's frames).
  void finish() {
    if (filter_) next_index_ = items_.size();  // unfiltered items must not surface later
    filter_ = nullptr;
  }

  // For recursive loops: the statement and the frame its body runs in.
  const ForStmt* statement = nullptr;
  Frame* parent_frame = nullptr;
  int depth0() const { return depth0_; }

 private:
  Result<bool> fetch_one() const;  // moves one more filtered item into ahead_
  Result<int64_t> length() const;
  Value bound_method(std::string name) const;

  mutable std::vector<Value> items_;
  mutable size_t next_index_ = 0;
  mutable std::deque<Value> ahead_;
  mutable ItemFilter filter_;
  mutable std::optional<int64_t> length_;
  bool filtered_ = false;
  int depth0_ = 0;
  int64_t index0_ = -1;
  Value current_;
  Value previous_;
  std::optional<std::vector<Value>> last_changed_;
};

class Cycler final : public Object, public std::enable_shared_from_this<Cycler> {
 public:
  explicit Cycler(std::vector<Value> items) : items_(std::move(items)) {}
  std::string_view type_name() const override { return "Cycler"; }
  Value get_attr(std::string_view name) const override;

 private:
  std::vector<Value> items_;
  mutable size_t pos_ = 0;
};

// joiner(sep): a callable returning "" the first time and sep afterwards.
Value make_joiner(Value separator);

}  // namespace hearth::jinja
