#ifndef BENCH_SUPPORT_H
#define BENCH_SUPPORT_H

#include <stddef.h>

/// Bytes currently allocated through malloc by this process (0 where the platform cannot say).
size_t bench_malloc_bytes_in_use(void);

#endif
