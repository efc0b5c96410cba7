/// Tells a merge whether a model kept the default ``ResourceModel/customDeserialize(_:)``: the
/// default implementation marks the probe bound around a call, an override does not.
///
/// A MessagePack list is read in place only when the default is kept; a rewrite needs each record
/// as a tree, so with an override every record is built as one first.
enum DefaultHookProbe {
    @TaskLocal static var current: Locked<Bool>?

    /// Runs `body` and reports whether the default `customDeserialize` ran inside it.
    static func run<Result>(_ body: () throws -> Result) rethrows -> (result: Result, defaultRan: Bool) {
        let probe = Locked(false)
        let result = try $current.withValue(probe) { try body() }
        return (result, probe.withLock { $0 })
    }
}
