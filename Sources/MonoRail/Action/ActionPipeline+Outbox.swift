import Foundation
import HTTPTypes
import Tracing

// Stage 2 (write policy): where the outbox plugs into the pipeline. The kept writes' replay is the
// outbox's (`OutboxReplay`).

extension ActionPipeline {
    /// Sends a write now, or keeps it in the outbox, as the write policy says; `nil` when the
    /// policy is ``WritePolicy/direct`` or the write has files to upload, which are always sent now.
    func applyWritePolicy<Value: Sendable>(
        _ prepared: Prepared, answering: (Prepared) -> Answering<Value>, queued: (Prepared) throws -> Value
    ) async throws -> ResourceResponse<Value>? {
        guard setup.writePolicy != .direct, prepared.files.isEmpty else { return nil }
        if let problem = store.configuration.queuedWritesProblem(for: setup.writePolicy) {
            throw APIError(.invalidConfiguration, problem)
        }
        let outbox = store.outbox
        try outbox.open()
        var prepared = prepared
        prepared.idempotencyKey = UUID().uuidString.lowercased()
        if setup.writePolicy == .queued || store.isOffline
            || outbox.isHoldingWrites(model: Model.resourceName, id: prepared.expectedID)
        {
            return try await keep(prepared, in: outbox, queued: queued)
        }
        // Queued when offline, online as far as the store knows: one attempt, no retries, for at
        // most the offline deadline; the outbox retries what this one could not finish.
        let sent = store.stamp()
        let (outcome, attempt) = await FirstOutcome.attempt(
            within: setup.offlineDeadline, clock: setup.client.configuration.clock
        ) { [prepared] in
            try await send(prepared, retries: false)
        }
        switch outcome {
        case .answered(.success(let response)):
            return try await answering(prepared).received(response, sent: sent)
        case .answered(.failure(let error as APIError)) where error.isTransient:
            // Same key: the server may have applied it before the answer was lost.
            return try await keep(prepared, in: outbox, unanswered: error.response == nil, queued: queued)
        case .answered(.failure(let error)):
            throw error
        case .late:
            // A dead network answers nothing: the write is kept under the same key, which makes the
            // request still under way and the replay one write on the server.
            attempt.cancel()
            store.noteReachability(answered: false)
            return try await keep(prepared, in: outbox, unanswered: true, queued: queued)
        }
    }

    /// The entity tag a save or delete sends as `If-Match`: the record's, as the record cache has it
    /// from its own `GET` or the answer to its last write.
    func entityTag(for prepared: Prepared) async -> String? {
        guard prepared.action.verb == .update || prepared.action.verb == .destroy, let id = prepared.expectedID,
            !id.isLocal, let storage = setup.storage
        else { return nil }
        let key = RecordKey(model: Model.resourceName, id: id)
        return try? await storage.records([key])[key]?.etag
    }

    /// Keeps a write in the outbox and applies it to the instance optimistically.
    private func keep<Value: Sendable>(
        _ prepared: Prepared, in outbox: Outbox, unanswered: Bool = false, queued: (Prepared) throws -> Value
    ) async throws -> ResourceResponse<Value> {
        guard let target = prepared.action.target else { throw APIError(.invalidRequest, "only writes are kept") }
        let verb = prepared.action.verb
        let fields = Model.resourceSchema.fields
        let sent = prepared.sentEdits ?? []
        let id = verb == .create ? prepared.action.clientID ?? ResourceID.local() : prepared.expectedID
        let body = prepared.body?.replacingLocalIDs(outbox.replacedIDs)
        // Behind another kept write of the record, the entity tag to expect is that one's answer's.
        let waitsForIfMatch =
            setup.conditionalWrites && verb != .create && outbox.holdsWrite(model: Model.resourceName, id: id)
        let ifMatch = waitsForIfMatch ? nil : prepared.ifMatch
        // The action's span, kept with the write: its replay, maybe in another process, links to it.
        let traceContext = InstrumentationContext.current.flatMap(setup.client.telemetry.propagationFields(of:))
        let fate = try await outbox.keep(
            { sequence in
                PendingWrite(
                    sequence: sequence, idempotencyKey: prepared.idempotencyKey ?? UUID().uuidString.lowercased(),
                    model: Model.resourceName, modelType: _mangledTypeName(Model.self), verb: verb, id: id, body: body,
                    fields: sent.indices.filter { sent[$0] != 0 && $0 < fields.count }.map { fields[$0].name },
                    ifMatch: ifMatch, waitsForIfMatch: waitsForIfMatch, traceContext: traceContext)
            }, instance: target, sent: sent, unanswered: unanswered,
            apply: {
                switch verb {
                case .create:
                    guard let id else { return }
                    target._$state.state.withLock { state in
                        state.id = id
                        state.store = store
                    }
                    store.identityMap.withLock { map in
                        map.insert(target, for: IdentityMap.Key(type: ObjectIdentifier(Model.self), id: id), id: id)
                    }
                    target._$state.markQueued(sent: sent)
                    target._$state.announceIdentity(of: target)
                    target._$state.announce(.created, fields: [], of: target)
                case .destroy:
                    target._$state.markDeletePending(true)
                    target._$state.announce(.deleted, fields: [], of: target)
                default:
                    target._$state.markQueued(sent: sent)
                }
            })
        var response = ResourceResponse(
            value: try queued(prepared), status: .accepted, headerFields: HTTPFields(), source: .outbox)
        response.fate = fate
        return response
    }
}
