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
}
