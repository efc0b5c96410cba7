import FuzzSupport
import FuzzTargets

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the target MONORAIL_FUZZ_TARGET names on one input.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.selected.run(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}

// SwiftPM gives every executable a `main` of its own, so libFuzzer's is never used; this hands
// control to libFuzzer's driver with the command line.
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzTestOneInput))
