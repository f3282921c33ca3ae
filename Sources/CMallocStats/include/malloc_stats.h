#ifndef MALLOC_STATS_H
#define MALLOC_STATS_H

#include <stddef.h>

/// Bytes currently allocated through malloc by this process (0 where the platform cannot say).
size_t malloc_stats_bytes_in_use(void);

#endif
