// Memory the allocator holds but no longer uses, handed back to the operating system.
#pragma once

namespace hearth {

// After a large transient working set (a multi-megabyte request body parsed, tokenized and
// answered): glibc keeps freed heap pages in its arenas, so without this the process's
// resident size stays at its peak. Costs a walk over the arenas (about a millisecond);
// meant for rare large requests, not for every one. A no-op on other C libraries.
void return_free_memory();

}  // namespace hearth
