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

uint64_t cvu_next_generation(void) {
    static uint64_t next = 0;
    return __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
}
