import Foundation

extension ResourceModel {
    /// Settles a write the server refused (``rejection``): with `keepLocal`, the fields the refused
    /// writes changed are put back on top of the server's newest state and saved again (a refused
    /// delete is sent again, a refused create is created again); without it, the record is read
    /// again and the local values are dropped.
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
    /// - Throws: ``APIError`` of the read or of the write; the rejection stays then.
    public func resolve(keepLocal: Bool) async throws {
        let (rejected, store) = _$state.state.withLock { ($0.rejectedWrites, $0.store ?? .default) }
        let setup = store.setup(for: Self.self)
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
        let coder = FieldCoder(options: setup.coding)
        for write in rejected {
            guard let body = write.body else { continue }
            let patch = try setup.decoder(coder: coder, store: store).decode(
                body, at: RecordLocation(base: "refused write \(write.sequence)"), allowsMissingID: true)
            // Only what the app changed: the body may carry every field, as it was before.
            _ = _$state.applyEdits(patch, queued: false, only: Set(write.fields), of: self, coder: coder)
        }
        try await save()
    }
}
