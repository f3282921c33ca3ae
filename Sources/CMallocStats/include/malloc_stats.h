#ifndef MALLOC_STATS_H
#define MALLOC_STATS_H

#include <stddef.h>
#include <stdint.h>

/// Bytes currently allocated through malloc by this process (0 where the platform cannot say).
size_t malloc_stats_bytes_in_use(void);

/// The address of this function's own stack frame: called from the same place, equal when the stack is
/// equally deep. The real stack, unlike a local variable's address under AddressSanitizer, whose
/// use-after-return detection moves locals to a fake stack on the heap.
void *malloc_stats_stack_frame(void);

// Counters (the benchmark's and the tests' producer threads): atomics for code that is not the package's.

static inline intptr_t cvu_counter_load(const intptr_t *counter) {
    return __atomic_load_n(counter, __ATOMIC_ACQUIRE);
}

static inline void cvu_counter_store(intptr_t *counter, intptr_t value) {
    __atomic_store_n(counter, value, __ATOMIC_RELEASE);
}

/// Adds `delta` and returns the new value.
static inline intptr_t cvu_counter_add(intptr_t *counter, intptr_t delta) {
    return __atomic_add_fetch(counter, delta, __ATOMIC_ACQ_REL);
}

#endif
