#!/usr/bin/env bash
# Builds the fuzz targets (debug, AddressSanitizer, libFuzzer) and runs one or all of them.
#
#   Fuzz/run.sh TARGET|all SECONDS [libFuzzer options…]
#
# New inputs go to .build-asan/corpus/TARGET (not committed); the seeds in Fuzz/Corpus/TARGET are only
# read. A finding is written to .build-asan/findings/TARGET-… and makes the script fail.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(json msgpack-reader msgpack-decoder value-decoder form multipart dates retry-after content-type
    route-templates msgpack-list json-list openapi eventstream jsonapi)
target=${1:?usage: run.sh TARGET|all SECONDS}
seconds=${2:-60}
shift 2 || shift $#

# The fuzz targets exist only with MONORAIL_FUZZ set (Package.swift); MONORAIL_SANITIZE=address
# instruments MonoRail's own code with AddressSanitizer and coverage, libFuzzer goes into the fuzz
# executable alone (`--sanitize=fuzzer` would also link libFuzzer's main into the macro plugin).
# MONORAIL_FUZZ_SCRATCH picks the build: CI passes the one its AddressSanitizer test run built. The
# tests are built too, as `swift test` would: a build of the fuzz product alone compiles without
# testability and would recompile every module the test build just made.
export MONORAIL_FUZZ=1 MONORAIL_SANITIZE=address
flags=(--scratch-path "${MONORAIL_FUZZ_SCRATCH:-.build-asan}")
swift build --build-tests "${flags[@]}" >&2
binary="$(swift build "${flags[@]}" --show-bin-path)/MonoRailFuzz"

if [ "$target" = all ]; then selected=("${targets[@]}"); else selected=("$target"); fi
mkdir -p .build-asan/findings
for name in "${selected[@]}"; do
    mkdir -p ".build-asan/corpus/$name"
    echo "== fuzz $name for ${seconds}s" >&2
    # Leak checking is off: the Swift runtime keeps metadata caches for the life of the process.
    MONORAIL_FUZZ_TARGET="$name" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
        "$binary" ".build-asan/corpus/$name" "Fuzz/Corpus/$name" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=256 -max_len=65536 -artifact_prefix=".build-asan/findings/$name-" \
        -print_final_stats=1 "$@"
done
