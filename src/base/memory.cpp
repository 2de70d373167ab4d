#include "base/memory.h"

#include <cstddef>  // the C library's feature macros (__GLIBC__)

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace hearth {

void return_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void return_large_blocks_when_freed() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}

void lower_this_thread_priority() {
#if defined(__linux__)
  thread_local bool lowered = false;
  if (lowered) return;
  lowered = true;
  // On Linux a nice value belongs to the thread named by its id.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  const int current = getpriority(PRIO_PROCESS, tid);
  (void)setpriority(PRIO_PROCESS, tid, current + 10);
#endif
}

}  // namespace hearth
