// Deleter for the shared containers behind Value (lists, dicts, namespaces): frees nested
// containers iteratively through a per-thread queue instead of recursively, so values nested
// thousands of levels deep cannot overflow the C++ stack when they are released (value.cpp).
#pragma once

namespace hearth::jinja {

template <typename T>
struct DeferredDelete {
  void operator()(T* pointer) const;
};

}  // namespace hearth::jinja
