import MonoRailTransport

/// Tells a merge whether a model kept the default ``ResourceModel/customDeserialize(_:)``: the
/// default implementation notes its model type in the probe bound around a call, an override does
/// not.
///
/// A MessagePack list is read in place only when the default is kept; a rewrite needs each record
/// as a tree, so with an override every record is built as one first. The probe notes types, not
/// merely that a default ran, because decoding one record also decodes the records embedded in it,
/// whose models may keep the default while the record's own model does not.
enum DefaultHookProbe {
    @TaskLocal static var current: Locked<Set<ObjectIdentifier>>?

    /// Runs `body` and reports whether `model`'s default `customDeserialize` ran inside it.
    static func run<Result>(for model: Any.Type, _ body: () throws -> Result) rethrows -> (
        result: Result, defaultRan: Bool
    ) {
        let probe = Locked(Set<ObjectIdentifier>())
        let result = try $current.withValue(probe) { try body() }
        return (result, probe.withLock { $0.contains(ObjectIdentifier(model)) })
    }
}
