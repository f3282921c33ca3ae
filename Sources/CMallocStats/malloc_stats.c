// What malloc holds: memory figures for coalesce-bench and the soak test (RSS growth is coarser).
#include "malloc_stats.h"
#include <stdlib.h>  // defines __GLIBC__ where glibc is the C library

#if defined(__APPLE__)
#include <malloc/malloc.h>
size_t malloc_stats_bytes_in_use(void) {
    malloc_statistics_t stats;
    malloc_zone_statistics(NULL, &stats);
    return stats.size_in_use;
}
#elif defined(__GLIBC__)
#include <malloc.h>
size_t malloc_stats_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
#else
size_t malloc_stats_bytes_in_use(void) { return 0; }
#endif

__attribute__((noinline)) void *malloc_stats_stack_frame(void) {
    return __builtin_frame_address(0);
}
