#ifndef MALLOC_STATS_H
#define MALLOC_STATS_H

#include <stddef.h>

/// Bytes currently allocated through malloc by this process (0 where the platform cannot say).
size_t malloc_stats_bytes_in_use(void);

/// The address of this function's own stack frame: called from the same place, equal when the stack is
/// equally deep. The real stack, unlike a local variable's address under AddressSanitizer, whose
/// use-after-return detection moves locals to a fake stack on the heap.
void *malloc_stats_stack_frame(void);

#endif
