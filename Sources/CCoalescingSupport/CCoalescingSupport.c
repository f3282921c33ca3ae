#include "CCoalescingSupport.h"

#if defined(__APPLE__)
_Thread_local uint64_t cvu_tls_thread_identity = 0;
#else
_Thread_local uint64_t cvu_tls_thread_identity __attribute__((tls_model("initial-exec"))) = 0;
#endif

#if defined(__APPLE__)
#include <pthread.h>

static bool cvu_ask_is_main_thread(void) {
    return pthread_main_np() != 0;
}

#elif defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>

static bool cvu_ask_is_main_thread(void) {
    return (pid_t)syscall(SYS_gettid) == getpid();
}

#else
#error "CCoalescingSupport: unknown platform; teach cvu_ask_is_main_thread how to find the main thread"
#endif

uint64_t cvu_thread_identity_slow(void) {
    static uint64_t next = 0;
    uint64_t serial = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
    uint64_t identity = (serial << 1) | (cvu_ask_is_main_thread() ? 1 : 0);
    cvu_tls_thread_identity = identity;
    return identity;
}

cvu_stripe_t cvu_stripes[CVU_STRIPE_COUNT];  // zero: free (and OS_UNFAIR_LOCK_INIT on Apple)

#if !defined(__APPLE__)
#include <linux/futex.h>

// Ulrich Drepper's "Futexes Are Tricky", mutex 2: after a failed fast path the lock is marked contended (2)
// and the thread sleeps in the kernel until the holder's release wakes one waiter.
void cvu_stripe_lock_contended(cvu_stripe_t *stripe) {
    uint32_t state = __atomic_exchange_n(&stripe->state, 2, __ATOMIC_ACQUIRE);
    while (state != 0) {
        syscall(SYS_futex, &stripe->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        state = __atomic_exchange_n(&stripe->state, 2, __ATOMIC_ACQUIRE);
    }
}

// The release found waiters (the state was 2): free the lock and wake one.
void cvu_stripe_wake(cvu_stripe_t *stripe) {
    __atomic_store_n(&stripe->state, 0, __ATOMIC_RELEASE);
    syscall(SYS_futex, &stripe->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#endif

uint64_t cvu_next_generation(void) {
    static uint64_t next = 0;
    return __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
}

intptr_t cvu_transaction_scopes = 0;
_Thread_local cvu_transaction_cache_t cvu_transaction_cache = {0};
uint64_t cvu_transaction_epoch = 1;

uint8_t cvu_diagnostics_recording = 0;
uint8_t cvu_diagnostics_counting = 0;
uint8_t cvu_recording_ledger_used = 0;
#if defined(__APPLE__)
_Thread_local cvu_diagnostics_stamp_t cvu_diagnostics_stamp = {0};
#else
_Thread_local cvu_diagnostics_stamp_t cvu_diagnostics_stamp __attribute__((tls_model("initial-exec"))) = {0};
#endif
int64_t cvu_clock_test_offset = 0;
uint64_t cvu_clock_test_frozen_at = 0;

#include <time.h>

/// `cvu_clock_test_frozen_at` while a freeze is reading its instant: readings wait for the instant.
#define CVU_CLOCK_FREEZING UINT64_MAX

static uint64_t cvu_monotonic_real_ns(void) {
#if defined(__APPLE__)
    return clock_gettime_nsec_np(CLOCK_UPTIME_RAW);
#else
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
#endif
}

uint64_t cvu_monotonic_now_ns(void) {
    for (;;) {
        uint64_t frozen = __atomic_load_n(&cvu_clock_test_frozen_at, __ATOMIC_SEQ_CST);
        if (frozen == CVU_CLOCK_FREEZING) continue;  // (tests only: two instructions long)
        if (frozen == 0) {
            uint64_t now = cvu_monotonic_real_ns();
            // A freeze that announced itself before this reading may take an earlier instant: take its
            // instant instead. One that announces itself after takes a later one.
            if (__atomic_load_n(&cvu_clock_test_frozen_at, __ATOMIC_SEQ_CST) != 0) continue;
            frozen = now;
        }
        return frozen + (uint64_t)__atomic_load_n(&cvu_clock_test_offset, __ATOMIC_RELAXED);
    }
}

void cvu_clock_freeze(bool frozen) {
    if (!frozen) {
        // Every reading after this one is real, and so later than the instant the clock was frozen at.
        __atomic_store_n(&cvu_clock_test_frozen_at, 0, __ATOMIC_SEQ_CST);
        return;
    }
    // Announced before the instant is read: a reading that raced it either came before the instant, or sees
    // the announcement and takes the instant.
    __atomic_store_n(&cvu_clock_test_frozen_at, CVU_CLOCK_FREEZING, __ATOMIC_SEQ_CST);
    __atomic_store_n(&cvu_clock_test_frozen_at, cvu_monotonic_real_ns(), __ATOMIC_SEQ_CST);
}

_Thread_local const void *cvu_tls_tracked_run = 0;
