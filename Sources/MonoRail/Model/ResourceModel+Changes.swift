public import Foundation
import Observation

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
    /// Whether any field holds an unsaved edit that differs from the server state. Edits handed to a
    /// save the outbox keeps are not unsaved: they are ``hasPendingChanges``.
    public var hasChanges: Bool {
        let fields = Self.resourceSchema.fields
        let coder = FieldCoder(options: CodingOptions())
        return _$state.state.withLock { state in
            !state.membership.isEmpty
                || state.edits.indices.contains { index in
                    InstanceState<Self>.isUnsaved(index, in: state)
                        && !fields[index].isEqual(state.values, state.server, coder)
                }
        }
    }

    /// The unsaved edits, by Swift property name, with the server's and the current value.
    public var changes: [String: FieldChange] {
        changes { index, state in InstanceState<Self>.isUnsaved(index, in: state) }
    }

    /// Whether the outbox keeps a write of this record the server has not confirmed yet: a create,
    /// a save (see ``pendingChanges``) or a delete.
    public var hasPendingChanges: Bool {
        _$state.state.withLock { state in
            state.isDeletePending || (state.id?.isLocal ?? false)
                || state.edits.indices.contains { InstanceState<Self>.isPending($0, in: state) }
        }
    }

    /// The fields whose edits the outbox keeps for the server, by Swift property name, with the
    /// server's value and the one shown. They stay until the server confirms them, or roll back
    /// when it refuses them.
    public var pendingChanges: [String: FieldChange] {
        changes { index, state in InstanceState<Self>.isPending(index, in: state) }
    }

    /// Why the server refused the last write the outbox sent for this record, which was then rolled
    /// back; `nil` once a later one succeeds. Validation messages are also in ``errors``.
    public var rejection: APIError? {
        _$state.registrar.access(self, keyPath: \.rejection)
        return _$state.state.withLock { $0.rejection }
    }

    private func changes(where included: (Int, InstanceState<Self>.State) -> Bool) -> [String: FieldChange] {
        let fields = Self.resourceSchema.fields
        let coder = FieldCoder(options: CodingOptions())
        let state = _$state.state.withLock { $0 }
        var changes: [String: FieldChange] = [:]
        for index in state.edits.indices
        where included(index, state) && !fields[index].isEqual(state.values, state.server, coder) {
            let field = fields[index]
            changes[field.name] = FieldChange(
                field: field.name, old: (try? field.encode(state.server, coder)) ?? .null,
                new: (try? field.encode(state.values, coder)) ?? .null)
        }
        return changes
    }

    /// Discards unsaved edits: every edited field returns to the last server state. Fields the
    /// outbox keeps a save of stay as they are; they roll back if the server refuses it.
    public func revert() {
        let fields = Self.resourceSchema.fields
        let coder = FieldCoder(options: CodingOptions())
        let changed = _$state.state.withLock { state -> [Int] in
            var changed: [Int] = []
            for index in state.edits.indices where state.edits[index] != 0 {
                if index < state.pending.count, state.pending[index] != 0 { continue }
                state.edits[index] = 0
                if !fields[index].isEqual(state.values, state.server, coder) {
                    fields[index].copy(&state.values, state.server)
                    changed.append(index)
                }
            }
            if !state.edits.contains(where: { $0 != 0 }) { state.edits = [] }
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
    ///
    /// The time is the wall clock's (``MonoRail/Configuration/wallClock``), for display and age; which
    /// answer is newer is decided by the order requests were sent in (``FetchStamp``), so a clock set
    /// back keeps nothing from being merged.
    public var fetchedAt: Date? { _$state.fetched?.date }

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
