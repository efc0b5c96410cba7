#ifndef MONORAIL_FUZZ_SUPPORT_H
#define MONORAIL_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (in the fuzzer runtime): parses the command line and calls `callback` per input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

/// Starts counting heap bytes; returns 0 when the sanitizer runtime has no malloc hooks.
int monorail_memory_start(void);
/// Makes the current heap size the new peak and returns it.
long monorail_memory_reset_peak(void);
/// The largest heap size since the last reset.
long monorail_memory_peak(void);

#endif
