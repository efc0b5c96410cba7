import FuzzTargets

/// libFuzzer's entry point: runs the target MONORAIL_FUZZ_TARGET names on one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes =
        start.map { UnsafeRawBufferPointer(start: $0, count: count) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
    FuzzTarget.selected.run(bytes)
    return 0
}
