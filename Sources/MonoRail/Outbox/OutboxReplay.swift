import Foundation
import HTTPTypes
import Logging
import Tracing

// The replay of kept writes: each sent through the pipeline's exchange, its answer merged as the
// same write's made directly would be.

/// Restores, sends and rolls back the kept writes of one model.
///
/// It holds no store: the outbox passes its own, which it holds weakly, so that nothing here keeps a
/// store alive.
protocol OutboxReplaying: Sendable {
    /// Sends a kept write under its key, merges the answer, and says how it ended.
    func send(_ write: PendingWrite, entry: Outbox.Entry, in store: ResourceStore) async -> Outbox.Outcome
    /// Rolls the instance back after the server said the record is gone, or a write it depended on
    /// was dropped.
    func rollBack(_ write: PendingWrite, entry: Outbox.Entry, error: APIError, in store: ResourceStore)
    /// Marks the instance of a kept delete deleted, and forgets its stored record: the record is gone
    /// from the server, as the delete asked.
    func deleted(_ entry: Outbox.Entry, in store: ResourceStore) async
    /// Shows the parked write's values on the instance as unsaved, with the error.
    func park(_ write: PendingWrite, entry: Outbox.Entry, error: APIError, in store: ResourceStore)
    /// Shows the write's values as pending again: it is sent once more.
    func resume(_ entry: Outbox.Entry, in store: ResourceStore)
    /// Rolls the instance back to the server's state, leaving no error: the app dropped the write.
    func discard(_ write: PendingWrite, entry: Outbox.Entry, in store: ResourceStore)
    /// Where the model's writes go together as JSON:API atomic operations now, if anywhere.
    func atomicOperationsPath(in store: ResourceStore) -> String?
    /// The write as one operation of an atomic request, its local ids as `lid`s.
    func operation(for write: PendingWrite, in store: ResourceStore) throws -> JSONValue
    /// Merges one operation's result, `{"data": …}` or `{}`, as the answer to the write.
    func absorb(
        result: JSONValue, of response: APIResponse, write: PendingWrite, entry: Outbox.Entry, in store: ResourceStore
    ) async -> Outbox.Outcome
    /// Sends writes of a graph, this model's first, as one atomic request under `key`; the outcome
    /// of each, in order.
    func send(_ batch: [Outbox.BatchMember], key: String, in store: ResourceStore) async -> [Outbox.Outcome]
}

struct OutboxReplay<Model: ResourceModel>: OutboxReplaying {
    /// Puts kept writes back on live instances after a launch: the record as storage has it, with
    /// each write's fields applied as pending edits. Returns each write's instance and edit numbers.
    func restore(_ writes: [PendingWrite], in store: ResourceStore) async -> [Int64: (any ResourceModel, [UInt64])] {
        let pipeline = ActionPipeline<Model>(store: store)
        let setup = pipeline.setup
        var restored: [Int64: (any ResourceModel, [UInt64])] = [:]
        var instances: [String: Model] = [:]
        for write in writes {
            let key = write.id?.description ?? ""
            let instance: Model
            if let known = instances[key] {
                instance = known
            } else {
                instance = await self.instance(for: write, pipeline: pipeline, store: store)
                instances[key] = instance
            }
            var sent: [UInt64] = []
            switch write.verb {
            case .destroy:
                if write.parking == nil { instance._$state.markDeletePending(true) }
            default:
                do {
                    sent = try instance._$state.applyEdits(
                        of: write, queued: write.parking == nil, to: instance, in: store)
                } catch {
                    // The write is still sent as kept; only the instance cannot show it.
                    setup.client.configuration.logger.warning(
                        "a kept \(Model.resourceSchema.typeName) write could not be shown on its instance: \(error)")
                }
            }
            if let parking = write.parking {
                instance._$state.park(write, sent: sent, rejection: parking.error, of: instance)
            }
            restored[write.sequence] = (instance, sent)
        }
        return restored
    }

    /// The live instance a restored write applies to: the one in the identity map, else the stored
    /// record, else a new one (a record created in the outbox).
    private func instance(for write: PendingWrite, pipeline: ActionPipeline<Model>, store: ResourceStore) async
        -> Model
    {
        guard let id = write.id else { return store.identityMap.withLock { $0.makeSingleton(of: Model.self) } }
        if let live = store.instance(of: Model.self, id: id) { return live }
        if write.verb != .create, let storage = pipeline.setup.storage {
            let key = RecordKey(model: Model.resourceName, id: id)
            if let record = try? await storage.records([key])[key],
                let merged = try? pipeline.mergeStored(
                    CacheHit(records: [record], fetched: record.fetched), confirmed: nil
                ).first
            {
                return merged
            }
        }
        let made = Model()
        made._$state.state.withLock { state in
            state.id = id
            state.store = store
            state.isPersisted = write.verb != .create
        }
        store.identityMap.withLock { map in
            // Another task may have made it meanwhile: that one is the instance.
            if map.instance(of: Model.self, id: id) != nil { return }
            map.insert(made, for: IdentityMap.Key(type: ObjectIdentifier(Model.self), id: id), id: id)
        }
        return store.instance(of: Model.self, id: id) ?? made
    }

    func send(_ write: PendingWrite, entry: Outbox.Entry, in store: ResourceStore) async -> Outbox.Outcome {
        await Self.traced([write], in: store) { span in
            let outcome = await sending(write, entry: entry, in: store)
            span?.attributes["monorail.outbox.outcome"] = outcome.name
            return outcome
        }
    }

    /// Runs a replay in a span of its own, `Outbox.replay`: the start of a new trace, as the app's
    /// action that kept the writes has ended, maybe in another process; it links to each write's.
    static func traced<Result>(
        _ writes: [PendingWrite], in store: ResourceStore, _ body: ((any Span)?) async -> Result
    ) async -> Result {
        let setup = store.setup(for: Model.self)
        let telemetry = setup.client.telemetry
        guard telemetry.tracer != nil else { return await body(nil) }
        var attributes: SpanAttributes = [
            "monorail.model": "\(setup.typeName)",
            "monorail.outbox.writes": .int64(Int64(writes.count)),
        ]
        if let write = writes.first, writes.count == 1 {
            attributes["monorail.action"] = write.verb.actionName
            attributes["monorail.outbox.sequence"] = write.sequence
            attributes["monorail.outbox.attempt"] = write.attempts + 1
            if let id = write.id { attributes["monorail.record.id"] = id.description }
        }
        return await telemetry.withSpan(
            "Outbox.replay", context: .topLevel, attributes: attributes,
            links: writes.compactMap { $0.traceContext.flatMap(telemetry.context(from:)) }, body)
    }

    private func sending(_ write: PendingWrite, entry: Outbox.Entry, in store: ResourceStore) async -> Outbox.Outcome {
        let pipeline = ActionPipeline<Model>(store: store)
        let prepared: ActionPipeline<Model>.Prepared
        do {
            prepared = try self.prepared(write, entry: entry, pipeline: pipeline, store: store)
        } catch let error as APIError {
            return .rejected(error)
        } catch {
            return .rejected(APIError(.invalidRequest, "\(error)", underlyingError: error))
        }
        let sent = store.stamp()
        do {
            let response = try await pipeline.send(prepared)
            return try await absorb(response, prepared: prepared, sent: sent, write: write, entry: entry, in: store)
        } catch let error as APIError {
            return Self.outcome(of: error, attempts: write.attempts)
        } catch {
            return .unreachable(APIError(.transport, "\(error)", underlyingError: error), retryAfter: nil)
        }
    }

    /// Merges the server's answer to a kept write, as the answer to the same write made directly
    /// would merge, and says how the write ended.
    func absorb(
        _ response: APIResponse, prepared: ActionPipeline<Model>.Prepared, sent: FetchStamp, write: PendingWrite,
        entry: Outbox.Entry, in store: ResourceStore
    ) async throws -> Outbox.Outcome {
        let pipeline = ActionPipeline<Model>(store: store)
        let setup = pipeline.setup
        let target = entry.instance as? Model
        let local = entry.write.id.flatMap { $0.isLocal ? $0 : nil }
        do {
            switch write.verb {
            case .destroy:
                _ = try await pipeline.answering(prepared) { _, prepared, _ in pipeline.mergeDelete(prepared) }
                    .received(response, sent: sent)
                return .confirmed(nil, etag: nil)
            default:
                let answer = try await pipeline.answering(prepared) { response, prepared, context in
                    try pipeline.mergeWrite(response, prepared, context)
                }
                .received(response, sent: sent)
                let instance = answer.value
                if let local { store.remove(instance, id: local) }
                instance._$state.clearRejection(of: instance)
                instance._$state.setErrors(ValidationErrors(), of: instance)
                if write.verb == .create { instance._$state.carryOutPendingAssignments(of: instance) }
                // An earlier attempt's answer was lost: this one may be the server's replay of it, the
                // record as made or saved then, since changed or deleted — maybe by a change pushed
                // before a restart, or one pushed since that this older answer would undo.
                if entry.mayHaveApplied, let failure = await instance.readAgain(in: store) {
                    setup.client.configuration.logger.warning(
                        "a kept \(Model.resourceSchema.typeName) \(write.verb.actionName) was sent again; its record could not be read again: \(failure)"
                    )
                }
                return .confirmed(
                    instance._$state.state.withLock { $0.id }, etag: response.response.headerFields[.eTag])
            }
        } catch let error as APIError {
            if let status = error.statusCode, (200..<300).contains(status) {
                // The server took it and the answer could not be merged: sending it again would
                // only bring the same answer back.
                setup.client.configuration.logger.warning(
                    "the server took a kept \(Model.resourceSchema.typeName) write but its answer could not be merged: \(error)"
                )
                target?._$state.markSaved(sent: entry.sent)
                return .confirmed(nil, etag: nil)
            }
            throw error
        }
    }

    /// A kept write as a request.
    func prepared(
        _ write: PendingWrite, entry: Outbox.Entry, pipeline: ActionPipeline<Model>, store: ResourceStore
    ) throws -> ActionPipeline<Model>.Prepared {
        let (target, sent) = (entry.instance as? Model, entry.sent)
        let instance = target ?? Model()
        let operation: ModelAction<Model>.Operation =
            switch write.verb {
            case .create: .create(instance)
            case .destroy: .delete(instance)
            default: .save(instance)
            }
        var parameters: [String: JSONValue] = [:]
        let (method, path) = try pipeline.endpoint(
            of: write.verb, id: write.id, instance: instance, parameters: &parameters)
        // The body as it was kept, on every attempt: the key promises the same request, and a field
        // the user did not edit is not rebuilt from a record cache that may have lost the record.
        let body = write.body
        var prepared = ActionPipeline<Model>.Prepared(
            ModelAction(operation: operation, store: store), method, path, parameters: parameters,
            id: write.verb == .create ? nil : write.id, body: body.map { ($0, FileAttachments()) },
            sent: write.verb == .destroy ? nil : sent)
        prepared.idempotencyKey = write.idempotencyKey
        prepared.ifMatch = write.ifMatch
        // Its answer may find the record already brought in by a read or a push since it was kept.
        if write.verb == .create { prepared.createdSince = entry.keptAt }
        prepared.urlTemplate = pipeline.urlTemplate(of: prepared.action)
        return prepared
    }

    /// Whether a failed attempt is worth another: no answer, a transient status (`408`, `425`,
    /// `429`, `5xx`), or an answer that cannot be read; a `409` after an earlier attempt (which may
    /// still be running on the server) for a few tries; a `401` once there is a token. Any other
    /// refusal is final.
    static func outcome(of error: APIError, attempts: Int) -> Outbox.Outcome {
        if error.statusCode == 401 || error.code == .unauthorized { return .unauthorized(error) }
        let isRefusal = error.statusCode.map { (400..<500).contains($0) && ![408, 425, 429].contains($0) } ?? false
        if !isRefusal,
            error.isTransient || error.code == .cancelled || error.statusCode == 425 || Outbox.isUnreadable(error)
        {
            let retryAfter = error.response?.headerFields[.retryAfter].flatMap {
                RetryPolicy.retryAfterDelay($0, now: Date())
            }
            return .unreachable(error, retryAfter: retryAfter)
        }
        if error.statusCode == 409, attempts > 1, attempts <= 5 { return .unreachable(error, retryAfter: nil) }
        return .rejected(error)
    }

    func deleted(_ entry: Outbox.Entry, in store: ResourceStore) async {
        let pipeline = ActionPipeline<Model>(store: store)
        if let instance = entry.instance as? Model { pipeline.markDeleted(instance, id: entry.write.id) }
        guard let id = entry.write.id, let storage = pipeline.setup.storage else { return }
        do {
            try await storage.forgetDeleted([RecordKey(model: Model.resourceName, id: id)])
        } catch {
            pipeline.setup.client.configuration.logger.warning(
                "the record cache could not forget a deleted \(Model.resourceSchema.typeName): \(error)")
        }
    }

    func park(_ write: PendingWrite, entry: Outbox.Entry, error: APIError, in store: ResourceStore) {
        guard let instance = entry.instance as? Model else { return }
        instance._$state.park(write, sent: entry.sent, rejection: error, of: instance)
    }

    func resume(_ entry: Outbox.Entry, in store: ResourceStore) {
        guard let instance = entry.instance as? Model else { return }
        if entry.write.verb == .destroy {
            instance._$state.markDeletePending(true)
            instance._$state.announce(.deleted, fields: [], of: instance)
        } else {
            instance._$state.markQueued(sent: entry.sent)
        }
    }

    func discard(_ write: PendingWrite, entry: Outbox.Entry, in store: ResourceStore) {
        guard let instance = entry.instance as? Model else { return }
        rollBack(write, entry: entry, error: APIError(.cancelled, "discarded"), in: store)
        instance._$state.clearRejection(of: instance)
        instance._$state.setErrors(ValidationErrors(), of: instance)
    }

    func rollBack(_ write: PendingWrite, entry: Outbox.Entry, error: APIError, in store: ResourceStore) {
        guard let instance = entry.instance as? Model else { return }
        let state = instance._$state
        // Called latest first: each earlier one goes before.
        state.state.withLock { $0.rejectedWrites.insert(write, at: 0) }
        let isGone = error.statusCode == 404 || error.statusCode == 410
        switch write.verb {
        case .create:
            // Nothing of it is on the server: the instance leaves the identity map with its values,
            // to be fixed and created again.
            state.rollBack(sent: [], rejection: error, of: instance)
            state.markQueued(sent: [])
            let local = state.state.withLock { state -> ResourceID? in
                defer {
                    state.id = nil
                    state.isPersisted = false
                    if !state.pending.isEmpty { state.pending = [] }
                }
                return state.id
            }
            if let local { store.remove(instance, id: local) }
            state.announceIdentity(of: instance)
        case .destroy where !isGone:
            state.markDeletePending(false)
            state.rollBack(sent: [], rejection: error, of: instance)
            state.announce(.reverted, fields: [], of: instance)
        case _ where isGone:
            // The server has no such record: it is gone here too.
            state.rollBack(sent: entry.sent, rejection: error, of: instance)
            state.state.withLock { state in
                state.isDeletePending = false
                state.isDeleted = true
            }
            if let id = write.id { store.remove(instance, id: id) }
            state.announce(.deleted, fields: [], of: instance)
        default:
            state.rollBack(sent: entry.sent, rejection: error, of: instance)
        }
    }
}
