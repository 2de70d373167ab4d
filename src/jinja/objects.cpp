// Namespace, LoopContext, Cycler and joiner, with Jinja2's attribute sets and messages.
#include "jinja/objects.h"

#include "jinja/builtins.h"

namespace hearth::jinja {

// --- Namespace --------------------------------------------------------------------------------

Value Namespace::get_attr(std::string_view name) const {
  if (const Value* value = attributes_.find(Value(name))) return *value;
  return Value();
}

Status Namespace::set_attr(std::string_view name, Value value) {
  attributes_.set(Value(name), std::move(value));
  return Status::ok();
}

std::string Namespace::to_str() const {
  Value dict = Value::dict();
  dict.dict_data() = attributes_;
  return "<Namespace " + repr(dict) + ">";
}

// --- LoopContext ------------------------------------------------------------------------------

Result<bool> LoopContext::fetch_one() const {
  while (next_index_ < items_.size()) {
    const Value& item = items_[next_index_++];
    bool keep = true;
    if (filter_) {
      HEARTH_ASSIGN_OR_RETURN(keep, filter_(item));
    }
    if (keep) {
      ahead_.push_back(item);
      return true;
    }
  }
  return false;
}

Result<std::optional<Value>> LoopContext::next() {
  if (ahead_.empty()) {
    HEARTH_ASSIGN_OR_RETURN(bool found, fetch_one());
    if (!found) return std::optional<Value>();
  }
  previous_ = std::move(current_);
  current_ = std::move(ahead_.front());
  ahead_.pop_front();
  ++index0_;
  return std::optional<Value>(current_);
}

Result<int64_t> LoopContext::length() const {
  if (length_) return *length_;
  if (!filtered_) {
    length_ = static_cast<int64_t>(items_.size());
    return *length_;
  }
  while (true) {
    HEARTH_ASSIGN_OR_RETURN(bool found, fetch_one());
    if (!found) break;
  }
  length_ = index0_ + 1 + static_cast<int64_t>(ahead_.size());
  return *length_;
}

Value LoopContext::bound_method(std::string name) const {
  auto self = std::const_pointer_cast<LoopContext>(shared_from_this());
  if (name == "cycle") {
    return Value::callable("LoopContext.cycle", [self](CallArgs& args, Interp&) -> Result<Value> {
      if (!args.keyword.empty()) {
        return render_error("cycle() got an unexpected keyword argument '" +
                            args.keyword.front().first + "'");
      }
      if (args.positional.empty()) return render_error("no items for cycling given");
      const auto count = static_cast<int64_t>(args.positional.size());
      const int64_t index = ((self->index0_ % count) + count) % count;
      return args.positional[static_cast<size_t>(index)];
    });
  }
  return Value::callable("LoopContext.changed", [self](CallArgs& args, Interp&) -> Result<Value> {
    if (!args.keyword.empty()) {
      return render_error("changed() got an unexpected keyword argument '" +
                          args.keyword.front().first + "'");
    }
    if (self->last_changed_) {
      const Value previous = Value::tuple(*self->last_changed_);
      if (equals(previous, Value::tuple(args.positional))) return Value(false);
    }
    self->last_changed_ = args.positional;
    return Value(true);
  });
}

Result<Value> LoopContext::attribute(std::string_view name) const {
  if (name == "index0") return Value(index0_);
  if (name == "index") return Value(index0_ + 1);
  if (name == "first") return Value(index0_ == 0);
  if (name == "depth0") return Value(static_cast<int64_t>(depth0_));
  if (name == "depth") return Value(static_cast<int64_t>(depth0_ + 1));
  if (name == "previtem") {
    if (index0_ <= 0) return Value::undefined("there is no previous item");
    return previous_;
  }
  if (name == "last" || name == "nextitem") {
    if (ahead_.empty()) {
      HEARTH_ASSIGN_OR_RETURN(bool found, fetch_one());
      if (!found) {
        if (name == "last") return Value(true);
        return Value::undefined("there is no next item");
      }
    }
    if (name == "last") return Value(false);
    return ahead_.front();
  }
  if (name == "length" || name == "revindex" || name == "revindex0") {
    HEARTH_ASSIGN_OR_RETURN(int64_t total, length());
    if (name == "length") return Value(total);
    if (name == "revindex") return Value(total - index0_);
    return Value(total - index0_ - 1);
  }
  if (name == "cycle" || name == "changed") return bound_method(std::string(name));
  return Value::undefined("'jinja2.runtime.LoopContext object' has no attribute '" +
                          std::string(name) + "'");
}

Value LoopContext::get_attr(std::string_view name) const {
  Result<Value> value = attribute(name);
  if (!value.is_ok()) return Value::undefined(value.status().message());
  return std::move(value).value();
}

std::string LoopContext::to_str() const {
  Result<int64_t> total = length();
  return "<LoopContext " + std::to_string(index0_ + 1) + "/" +
         (total.is_ok() ? std::to_string(*total) : std::string("?")) + ">";
}

// --- Cycler -----------------------------------------------------------------------------------

Value Cycler::get_attr(std::string_view name) const {
  if (name == "items") return Value::tuple(items_);
  if (name == "pos") return Value(static_cast<int64_t>(pos_));
  if (name == "current") return items_[pos_];
  auto self = std::const_pointer_cast<Cycler>(shared_from_this());
  if (name == "next" || name == "__next__") {
    return Value::callable("Cycler.next", [self](CallArgs& args, Interp&) -> Result<Value> {
      if (!args.positional.empty() || !args.keyword.empty()) {
        return render_error("next() takes no arguments");
      }
      Value current = self->items_[self->pos_];
      self->pos_ = (self->pos_ + 1) % self->items_.size();
      return current;
    });
  }
  if (name == "reset") {
    return Value::callable("Cycler.reset", [self](CallArgs& args, Interp&) -> Result<Value> {
      if (!args.positional.empty() || !args.keyword.empty()) {
        return render_error("reset() takes no arguments");
      }
      self->pos_ = 0;
      return Value::none();
    });
  }
  return Value();
}

// --- joiner -----------------------------------------------------------------------------------

Value make_joiner(Value separator) {
  auto used = std::make_shared<bool>(false);
  return Value::callable("joiner", [used, separator](CallArgs& args, Interp&) -> Result<Value> {
    if (!args.positional.empty() || !args.keyword.empty()) {
      return render_error("Joiner.__call__() takes 1 positional argument");
    }
    if (!*used) {
      *used = true;
      return Value("");
    }
    return separator;
  });
}

}  // namespace hearth::jinja
