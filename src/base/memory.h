// Memory the allocator holds but no longer uses, handed back to the operating system.
#pragma once

namespace hearth {

// After a large transient working set (a multi-megabyte request body parsed, tokenized and
// answered): glibc keeps freed heap pages in its arenas, so without this the process's
// resident size stays at its peak. Costs a walk over the arenas (about a millisecond);
// meant for rare large requests, not for every one. A no-op on other C libraries.
void return_free_memory();

// For a long-running server: allocations of 256 KiB and more get pages of their own and
// give them back when freed (glibc otherwise raises this threshold after the first large
// free, up to 32 MiB, and keeps such blocks in its heaps for good). The engine allocates
// its buffers once, so this costs its steps nothing. A no-op on other C libraries.
void return_large_blocks_when_freed();

// Makes the calling thread yield the CPU to the process's other threads (nice +10 on
// Linux, once per thread): for bulk work such as multi-megabyte request bodies, which must
// not slow the threads that serve everyone else. A no-op where it is not supported.
void lower_this_thread_priority();

}  // namespace hearth
