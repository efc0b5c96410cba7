public import Foundation

/// A field whose value differs from the last server state.
public struct FieldChange: Sendable, Hashable {
    /// The Swift property name.
    public let field: String
    /// The last value the server sent (or the declared default for a new record).
    public let old: JSONValue
    /// The current, unsaved value.
    public let new: JSONValue

    /// Creates a change.
    public init(field: String, old: JSONValue, new: JSONValue) {
        self.field = field
        self.old = old
        self.new = new
    }
}

extension ResourceModel {
    /// Whether any field holds an unsaved edit that differs from the server state.
    public var hasChanges: Bool {
        let fields = Self.resourceSchema.fields
        let coder = FieldCoder(options: CodingOptions())
        return _$state.state.withLock { state in
            state.edits.indices.contains { index in
                state.edits[index] != 0 && !fields[index].isEqual(state.values, state.server, coder)
            }
        }
    }

    /// The unsaved edits, by Swift property name, with the server's and the current value.
    public var changes: [String: FieldChange] {
        let fields = Self.resourceSchema.fields
        let coder = FieldCoder(options: CodingOptions())
        let (values, server, edits) = _$state.state.withLock { ($0.values, $0.server, $0.edits) }
        var changes: [String: FieldChange] = [:]
        for index in edits.indices where edits[index] != 0 && !fields[index].isEqual(values, server, coder) {
            let field = fields[index]
            changes[field.name] = FieldChange(
                field: field.name, old: (try? field.encode(server, coder)) ?? .null,
                new: (try? field.encode(values, coder)) ?? .null)
        }
        return changes
    }

    /// Discards unsaved edits: every edited field returns to the last server state.
    public func revert() {
        let fields = Self.resourceSchema.fields
        let coder = FieldCoder(options: CodingOptions())
        let changed = _$state.state.withLock { state -> [Int] in
            var changed: [Int] = []
            for index in state.edits.indices where state.edits[index] != 0 {
                if !fields[index].isEqual(state.values, state.server, coder) {
                    fields[index].copy(&state.values, state.server)
                    changed.append(index)
                }
            }
            state.edits = []
            return changed
        }
        if !changed.isEmpty { _$state.announce(.reverted, fields: changed, of: self) }
    }

    /// Whether ``delete()`` removed the record from the server.
    public var isDeleted: Bool { _$state.state.withLock { $0.isDeleted } }

    /// When the request that fetched the record's newest server state was sent — from the network,
    /// or from the record cache, where it keeps the time of the request that first brought it; `nil`
    /// for an instance the server has not described. The record is at least this fresh.
    ///
    /// A read older than this does not change the instance: answers that arrive out of order, and
    /// cached copies older than what the instance shows, are left out of its fields.
    public var fetchedAt: Date? { _$state.state.withLock { $0.fetchedAt } }

    /// The changes to this instance: merges, edits, reverts, creation and deletion.
    ///
    /// ```swift
    /// for await update in train.updates where update.kind == .merged {
    ///     print("server changed", update.fields)
    /// }
    /// ```
    public var updates: AsyncStream<ResourceUpdate<Self>> { _$state.updateBroadcaster().stream() }

    /// The changes to every instance of this model in a store.
    ///
    /// - Parameter store: The store to watch; default ``ResourceStore/default``.
    public static func updates(in store: ResourceStore = .default) -> AsyncStream<ResourceUpdate<Self>> {
        store.broadcaster(for: Self.self).stream()
    }
}
