#include "CCoalescingSupport.h"

#if defined(__APPLE__)
_Thread_local cvu_thread_record_t cvu_tls_thread = {0, 0, 0};
#else
_Thread_local cvu_thread_record_t cvu_tls_thread __attribute__((tls_model("initial-exec"))) = {0, 0, 0};
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
    cvu_tls_thread.identity = identity;
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

uint8_t cvu_diagnostics_recording = 0;
#include <time.h>

uint64_t cvu_monotonic_now_ns(void) {
#if defined(__APPLE__)
    return clock_gettime_nsec_np(CLOCK_UPTIME_RAW);
#else
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
#endif
}

