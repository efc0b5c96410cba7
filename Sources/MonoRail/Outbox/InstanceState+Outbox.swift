import Foundation
import Observation

// What the outbox does to a live instance: marks edits pending, applies restored writes, rolls
// back refused ones, and replaces local ids.
extension InstanceState {
    /// Notes that the outbox keeps the edits numbered `sent`: they are pending until the server
    /// confirms them.
    func markQueued(sent: [UInt64]) {
        state.withLock { state in Self.markQueued(sent: sent, in: &state) }
    }

    private static func markQueued(sent: [UInt64], in state: inout State) {
        guard sent.contains(where: { $0 != 0 }) else { return }
        if state.pending.isEmpty { state.pending = Array(repeating: 0, count: Model.resourceSchema.fields.count) }
        for index in sent.indices where sent[index] != 0 && index < state.pending.count {
            state.pending[index] = max(state.pending[index], sent[index])
        }
    }

    /// Applies the fields a write changed, read from its body, as edits: pending ones (`queued`), as
    /// they were when the app kept a write restored from storage, or unsaved ones, to be saved
    /// again. Only the fields the write changed: its body may carry every field, as it was then.
    /// Returns the edit numbers of the fields.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` when the body cannot be read as the model's record.
    func applyEdits(of write: PendingWrite, queued: Bool, to model: Model, in store: ResourceStore) throws
        -> [UInt64]
    {
        guard let body = write.body else { return [] }
        let setup = store.setup(for: Model.self)
        let coder = FieldCoder(options: setup.coding)
        let patch = try setup.decoder(coder: coder, store: store).decode(
            body, at: RecordLocation(base: "outbox write \(write.sequence)"), allowsMissingID: true)
        let fields = Model.resourceSchema.fields
        let changedFields = Set(write.fields)
        let applied = fields.indices.map { index in
            index < patch.present.count && patch.present[index] && changedFields.contains(fields[index].name)
        }
        let (sent, changed) = state.withLock { state -> ([UInt64], [Int]) in
            var changed: [Int] = []
            for index in fields.indices where applied[index] {
                if !fields[index].isEqual(state.values, patch.values, coder) { changed.append(index) }
                fields[index].copy(&state.values, patch.values)
                Self.markEdited(index, in: &state)
            }
            var sent = Array(repeating: UInt64(0), count: fields.count)
            for index in fields.indices where applied[index] {
                sent[index] = state.edits[index]
            }
            if queued { Self.markQueued(sent: sent, in: &state) }
            return (sent, changed)
        }
        if let registrar = registrarIfMade {
            for index in changed { fields[index].notify(model, registrar) }
        }
        if !changed.isEmpty { announce(.edited, fields: changed, of: model) }
        return sent
    }

    /// Marks a record the outbox keeps a delete of: deleted now, and not brought back by reads
    /// until the server answers.
    func markDeletePending(_ pending: Bool) {
        state.withLock { state in
            state.isDeletePending = pending
            state.isDeleted = pending
        }
    }

    /// Puts back the server's state after the server refused the write that sent the edits numbered
    /// `sent`: each field still holding that edit returns to the server's value. A later edit not
    /// handed to a save stays. Keeps `rejection`, and the validation messages in ``errors``.
    func rollBack(sent: [UInt64], rejection: APIError, of model: Model) {
        let fields = Model.resourceSchema.fields
        let changed = state.withLock { state -> [Int] in
            var changed: [Int] = []
            for index in sent.indices where sent[index] != 0 && index < state.edits.count {
                if index < state.pending.count, state.pending[index] <= sent[index] { state.pending[index] = 0 }
                guard state.edits[index] == sent[index] else { continue }
                state.edits[index] = 0
                if !fields[index].isEqual(state.values, state.server, FieldCoder(options: CodingOptions())) {
                    fields[index].copy(&state.values, state.server)
                    changed.append(index)
                }
            }
            state.rejection = rejection
            return changed
        }
        tellObservers(of: \.rejection, of: model)
        if rejection.code == .validationFailed { setErrors(rejection.errors, of: model) }
        if !changed.isEmpty { announce(.reverted, fields: changed, of: model) }
    }

    /// Shows a parked write as a refused direct write shows: the fields it sent hold the app's values,
    /// unsaved again (no longer pending), the error in `rejection` and the validation messages in
    /// ``errors``; a parked delete leaves the record not deleted. A record created only in the
    /// outbox keeps its local id, which the writes parked with it name.
    func park(_ write: PendingWrite, sent: [UInt64], rejection: APIError, of model: Model) {
        state.withLock { state in
            for index in sent.indices where sent[index] != 0 && index < state.pending.count {
                if state.pending[index] <= sent[index] { state.pending[index] = 0 }
            }
            if write.verb == .destroy {
                state.isDeletePending = false
                state.isDeleted = false
            }
            // The record's own refusal says more than that a later write of it waits behind it.
            if rejection.code != .dependencyRejected || state.rejection == nil { state.rejection = rejection }
            state.rejectedWrites.append(write)
        }
        tellObservers(of: \.rejection, of: model)
        if rejection.code == .validationFailed { setErrors(rejection.errors, of: model) }
        if write.verb == .destroy { announce(.reverted, fields: [], of: model) }
    }

    /// Clears the rejection once a write of the record went through, or it was resolved.
    func clearRejection(of model: Model) {
        let had = state.withLock { state in
            defer {
                state.rejection = nil
                state.rejectedWrites = []
            }
            return state.rejection != nil
        }
        guard had else { return }
        tellObservers(of: \.rejection, of: model)
    }

    /// Replaces a local id the server has replaced in the instance's `@References` fields, its
    /// edits kept as they are. Returns whether any field held it.
    @discardableResult
    func replaceLocalIDs(_ replaced: [String: ResourceID], of model: Model, coder: FieldCoder) -> Bool {
        let fields = Model.resourceSchema.fields
        let changed = state.withLock { state -> [Int] in
            var changed: [Int] = []
            for index in fields.indices where fields[index].isReference {
                for copy in [\State.values, \State.server] {
                    guard let current = try? fields[index].encode(state[keyPath: copy], coder) else { continue }
                    let updated = current.replacingLocalIDs(replaced)
                    guard updated != current else { continue }
                    try? fields[index].decode(&state[keyPath: copy], updated, coder)
                    if copy == \State.values { changed.append(index) }
                }
            }
            return changed
        }
        if !changed.isEmpty { announce(.merged, fields: changed, of: model) }
        return !changed.isEmpty
    }
}
