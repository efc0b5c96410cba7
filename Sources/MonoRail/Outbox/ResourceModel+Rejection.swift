import Foundation

extension ResourceModel {
    /// Settles a write the server refused (``rejection``): with `keepLocal`, the local values are
    /// put back on top of the server's newest state and saved again (a refused delete is sent
    /// again, a refused create is created again); without it, the record is read again and the
    /// local values are dropped. A write the outbox parked (``Outbox/parked``) is sent again in its
    /// place, or discarded.
    ///
    /// ```swift
    /// // A 412: someone changed the train since the app read it.
    /// if train.rejection?.statusCode == 412 {
    ///     try await train.resolve(keepLocal: true)    // fetch, re-apply our company, save with the new ETag
    /// }
    /// ```
    ///
    /// A save under ``WritePolicy/queued`` is kept again; the read is always sent.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` of the read or of the write; the rejection stays then.
    public func resolve(keepLocal: Bool) async throws {
        let (rejected, id, store) = _$state.state.withLock { ($0.rejectedWrites, $0.id, $0.store ?? .default) }
        if let parked = store.outbox.parked.first(where: { $0.model == Self.resourceName && $0.id == id }) {
            try await resolve(parked, keepLocal: keepLocal, in: store)
            return
        }
        if rejected.contains(where: { $0.verb == .create }) {
            // Nothing of it reached the server; its values are still the instance's.
            _$state.clearRejection(of: self)
            if keepLocal { try await create(in: store) } else { revert() }
            return
        }
        if _$state.state.withLock({ $0.id }) != nil { try await fetch() }
        _$state.clearRejection(of: self)
        guard keepLocal else { return }
        if rejected.last?.verb == .destroy {
            try await delete()
            return
        }
        for write in rejected { _ = try _$state.applyEdits(of: write, queued: false, to: self, in: store) }
        try await save()
    }

    /// Settles a parked write: kept, the record's newest state is read and saved again with the
    /// local values, which sends the parked write in its place; dropped, it is discarded.
    private func resolve(_ parked: PendingWrite, keepLocal: Bool, in store: ResourceStore) async throws {
        if !keepLocal || parked.verb == .destroy {
            try await store.outbox.discard(parked)
            if parked.verb != .create { try await fetch() }
            guard keepLocal else {
                revert()
                return
            }
            try await delete()
            return
        }
        if parked.verb != .create { try await fetch() }
        _$state.clearRejection(of: self)
        try await save()
    }
}
