// Low-level support for NotificationCoalescing and UpdateContext that exists on every supported system
// (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1, Linux with Glibc or Musl), where the
// Synchronization module (iOS 18 / macOS 15) does not.
//
// The atomics are the compiler's __atomic builtins on plain integers, in static inline functions that
// Swift inlines at the call site. ThreadSanitizer instruments them, so it sees the orderings we rely on.
// Every pointer must point at memory whose address does not move (a ManagedBuffer's elements, or memory
// allocated by hand), never at a Swift stored property.
#ifndef C_COALESCING_SUPPORT_H
#define C_COALESCING_SUPPORT_H

#include <stdbool.h>
#include <stdint.h>

// MARK: One-byte flags

static inline bool cvu_flag_load_relaxed(const uint8_t *flag) {
    return __atomic_load_n(flag, __ATOMIC_RELAXED) != 0;
}

static inline bool cvu_flag_load_acquire(const uint8_t *flag) {
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
}

static inline void cvu_flag_store_relaxed(uint8_t *flag, bool value) {
    __atomic_store_n(flag, (uint8_t)(value ? 1 : 0), __ATOMIC_RELAXED);
}

static inline void cvu_flag_store_release(uint8_t *flag, bool value) {
    __atomic_store_n(flag, (uint8_t)(value ? 1 : 0), __ATOMIC_RELEASE);
}

/// A flag byte that carries more than one bit (read as a flag, it is set when any bit is).
static inline uint8_t cvu_byte_load_relaxed(const uint8_t *byte) {
    return __atomic_load_n(byte, __ATOMIC_RELAXED);
}

static inline void cvu_byte_store_release(uint8_t *byte, uint8_t value) {
    __atomic_store_n(byte, value, __ATOMIC_RELEASE);
}

// MARK: Transaction scopes

/// How many `withUpdateTransaction` bodies run now, in every thread: 0 lets a request skip looking up
/// the current transaction (a task-local read) on its fast path.
extern intptr_t cvu_transaction_scopes;

static inline bool cvu_transaction_scopes_active(void) {
    return __atomic_load_n(&cvu_transaction_scopes, __ATOMIC_RELAXED) != 0;
}

static inline void cvu_transaction_scopes_add(intptr_t delta) {
    __atomic_add_fetch(&cvu_transaction_scopes, delta, __ATOMIC_SEQ_CST);
}

// MARK: Threads

// A 64-bit word: a scheduler's turn mark (bit 0: a turn is asked for; the rest: the number of the batch
// that asked, so that a batch can tell whether a turn has served it).

static inline uint64_t cvu_word_load_relaxed(const uint64_t *word) {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
}

static inline uint64_t cvu_word_load_acquire(const uint64_t *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

static inline bool cvu_word_compare_exchange(uint64_t *word, uint64_t expected, uint64_t desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

static inline uint64_t cvu_word_fetch_and(uint64_t *word, uint64_t mask) {
    return __atomic_fetch_and(word, mask, __ATOMIC_SEQ_CST);
}

static inline void cvu_word_store_relaxed(uint64_t *word, uint64_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
}

// The package's one thread-local: the calling thread's record. `identity`: its serial number (given on first
// use, never reused) shifted left by one, and bit 0 set on the process's main thread; read inline (a
// thread-pointer access after the first call on a thread), so that a request's "am I on the scheduler's
// thread" costs a load and a compare. `tracked_run`: the tracked updater whose delivery is under way on the
// thread (Observation merges every tracking begun inside it into its own, so a tracked updater delivered
// there tracks nothing of its own), or null. `schedulers`: the thread's list of the schedulers that turn on it
// (`ThreadSchedulers`), or null: unretained here, owned by the thread's Foundation dictionary, which releases it
// at thread exit (its deinit clears this). Set and read on the thread only.
typedef struct {
    uint64_t identity;
    const void *tracked_run;
    const void *schedulers;
} cvu_thread_record_t;

#if defined(__APPLE__)
extern _Thread_local cvu_thread_record_t cvu_tls_thread;
#else
extern _Thread_local cvu_thread_record_t cvu_tls_thread __attribute__((tls_model("initial-exec")));
#endif

uint64_t cvu_thread_identity_slow(void);

static inline uint64_t cvu_thread_identity(void) {
    uint64_t identity = cvu_tls_thread.identity;
    if (__builtin_expect(identity != 0, 1)) {
        return identity;
    }
    return cvu_thread_identity_slow();
}

static inline uint64_t cvu_thread_serial(void) {
    return cvu_thread_identity() >> 1;
}

/// Whether the calling thread is the process's main thread (the first thread). Cheap: on Darwin
/// `pthread_main_np()`; elsewhere the kernel's thread id compared with the process id once per thread,
/// then a thread-local read. Exact even after the main thread has exited (under `dispatchMain()`): no
/// later thread can have the process id as its thread id.
static inline bool cvu_is_main_thread(void) {
    return (cvu_thread_identity() & 1) != 0;
}

// The striped locks (`StripedLocks`): a fixed array of small locks in static storage, taken and released
// inline. No lazily created table (a `swift_once` check on every lock) and no library call on the
// uncontended path. Apple: `os_unfair_lock`. Elsewhere: a three-state futex lock (0 free, 1 taken, 2 taken
// with waiters): a compare-and-swap to take, an atomic decrement to release, the kernel only when contended.

#define CVU_STRIPE_COUNT 64

#if defined(__APPLE__)
#include <os/lock.h>
typedef os_unfair_lock cvu_stripe_t;
#else
typedef struct { uint32_t state; } cvu_stripe_t;
void cvu_stripe_lock_contended(cvu_stripe_t *stripe);
void cvu_stripe_wake(cvu_stripe_t *stripe);
#endif

extern cvu_stripe_t cvu_stripes[CVU_STRIPE_COUNT];

static inline void cvu_stripe_lock(unsigned index) {
    cvu_stripe_t *stripe = &cvu_stripes[index % CVU_STRIPE_COUNT];
#if defined(__APPLE__)
    os_unfair_lock_lock(stripe);
#else
    uint32_t expected = 0;
    if (__builtin_expect(__atomic_compare_exchange_n(&stripe->state, &expected, 1, false, __ATOMIC_ACQUIRE,
                                                     __ATOMIC_RELAXED), 1)) {
        return;
    }
    cvu_stripe_lock_contended(stripe);
#endif
}

static inline void cvu_stripe_unlock(unsigned index) {
    cvu_stripe_t *stripe = &cvu_stripes[index % CVU_STRIPE_COUNT];
#if defined(__APPLE__)
    os_unfair_lock_unlock(stripe);
#else
    if (__builtin_expect(__atomic_fetch_sub(&stripe->state, 1, __ATOMIC_RELEASE) != 1, 0)) {
        cvu_stripe_wake(stripe);
    }
#endif
}

/// The next number of a process-wide counter (1, 2, …): orders values made on any thread.
uint64_t cvu_next_generation(void);

// One byte of bits (a context's scheduled byte), read atomically from any thread.

static inline uint8_t cvu_bits_load(const uint8_t *bits) {
    return __atomic_load_n(bits, __ATOMIC_ACQUIRE);
}

// MARK: Diagnostics

/// Whether `UpdateDiagnostics.isRecording` is on: one relaxed byte load on the delivery path.
extern uint8_t cvu_diagnostics_recording;

static inline bool cvu_diagnostics_is_recording(void) {
    return __atomic_load_n(&cvu_diagnostics_recording, __ATOMIC_RELAXED) != 0;
}

static inline void cvu_diagnostics_set_recording(bool value) {
    __atomic_store_n(&cvu_diagnostics_recording, value ? 1 : 0, __ATOMIC_RELAXED);
}

/// Nanoseconds of a monotonic clock (Linux: CLOCK_MONOTONIC through the vDSO, ~30 ns; Darwin:
/// CLOCK_UPTIME_RAW): what a scheduler's diagnostics read (`CoalescingScheduler.now()`), per turn, and per
/// updater only in timed deliveries, never per request.
uint64_t cvu_monotonic_now_ns(void);

/// The tracked updater whose delivery is under way on this thread (see `cvu_thread_record_t`), or null.
static inline const void *cvu_tracked_run(void) {
    return cvu_tls_thread.tracked_run;
}

/// Sets the tracked updater under way on this thread; returns the one before (restore it after).
static inline const void *cvu_set_tracked_run(const void *run) {
    const void *before = cvu_tls_thread.tracked_run;
    cvu_tls_thread.tracked_run = run;
    return before;
}

/// The calling thread's list of schedulers (see `cvu_thread_record_t`), or null.
static inline const void *cvu_thread_schedulers(void) {
    return cvu_tls_thread.schedulers;
}

static inline void cvu_set_thread_schedulers(const void *list) {
    cvu_tls_thread.schedulers = list;
}

#endif
