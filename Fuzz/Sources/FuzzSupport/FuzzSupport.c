#include "FuzzSupport.h"

#include <stdatomic.h>

// Declared by the sanitizer runtimes (ASan provides both); weak so a build without one still links.
extern int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void *, size_t), void (*free_hook)(const volatile void *))
    __attribute__((weak));
extern size_t __sanitizer_get_allocated_size(const volatile void *p) __attribute__((weak));

static _Atomic long current_bytes;
static _Atomic long peak_bytes;

static void on_malloc(const volatile void *pointer, size_t size) {
    (void)pointer;
    long now = atomic_fetch_add(&current_bytes, (long)size) + (long)size;
    long peak = atomic_load(&peak_bytes);
    while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
    }
}

static void on_free(const volatile void *pointer) {
    // The hook runs before the chunk is released, so its size is still known.
    if (pointer && __sanitizer_get_allocated_size) {
        atomic_fetch_sub(&current_bytes, (long)__sanitizer_get_allocated_size(pointer));
    }
}

int monorail_memory_start(void) {
    if (!__sanitizer_install_malloc_and_free_hooks || !__sanitizer_get_allocated_size) return 0;
    return __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}

long monorail_memory_reset_peak(void) {
    long now = atomic_load(&current_bytes);
    atomic_store(&peak_bytes, now);
    return now;
}

long monorail_memory_peak(void) { return atomic_load(&peak_bytes); }
