import Foundation
import HTTPTypes

// A pushed change's way through stages 4 to 8: its record is read as a response body of the model's
// conventions, merged as a read answered now, kept by the record cache with the live-updates
// cursor, and announced.

/// What a pushed change did, for the live-updates events and the record cache.
struct PushOutcome: Sendable {
    /// The records merged or deleted.
    var keys: [RecordKey]
    /// What the record cache is given: the records as they came, and the ones the server deleted.
    var records: [StoredRecord] = []
    var deleted: [RecordKey] = []
    /// The instances merged, held until the record cache was given their records: an answer
    /// overtaken by the change, and merged once they are gone, finds the change's state there
    /// (the persist stage, `ActionPipeline.Answering.keepHeard`).
    var instances: [any ResourceModel] = []
}

extension ActionPipeline {
    /// Merges the record (or, under a plural root, the records) of a pushed change.
    ///
    /// - Parameters:
    ///   - isList: Whether the body holds a list (its root is the model's plural).
    ///   - arrived: When the change arrived: its place among the store's answers.
    /// - Throws: ``/MonoRailClient/APIError`` as a response's merge throws; nothing is merged then.
    func mergePushed(_ body: Data, isList: Bool, arrived: FetchStamp) throws -> PushOutcome {
        let response = Model.receivedResponse(body, contentType: "application/json", setup: setup)
        let context = MergeContext(
            fetched: arrived, keepsWire: setup.storage != nil, acceptsJSON: setup.storage?.acceptsJSON ?? false)
        let instances: [Model] =
            if isList {
                try mergeList(response, context)
            } else {
                [try mergeRecord(response, expecting: nil, target: nil, mode: .read, context)]
            }
        let keys = instances.compactMap { instance in
            instance._$state.state.withLock { $0.id }.map { RecordKey(model: setup.singular, id: $0) }
        }
        return PushOutcome(keys: keys, records: context.records, instances: instances)
    }

    /// Applies a pushed destroy: the record, which needs only its id, leaves the identity map, its
    /// instance is marked deleted and its observers and live queries are told, as for a delete this
    /// app made.
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/decodingFailed`` when the body names no id.
    func applyPushedDestroy(_ body: Data, isList: Bool, arrived: FetchStamp) throws -> PushOutcome {
        if store.signOutFence.excludes(arrived) { throw ResourceStore.fencedOut }
        let response = Model.receivedResponse(body, contentType: "application/json", setup: setup)
        let records: [JSONValue]
        let path: String
        if isList {
            let located = try setup.records(in: response)
            (records, path) = (located.main, located.path)
        } else {
            let located = try setup.record(in: response)
            (records, path) = ([located.main], located.path)
        }
        // Every id is read before anything is deleted: a body with one bad record deletes nothing.
        let idKey = setup.jsonAPI == nil ? setup.idKey : "id"
        let ids = try records.map { record in
            guard let value = record[idKey], let id = ResourceID(json: value) else {
                throw APIError(
                    .decodingFailed,
                    "a pushed destroy of \(setup.typeName) names no id under \"\(idKey)\" at \(path)")
            }
            return id
        }
        store.noteGone(Model.self, ids: ids, heardAt: arrived.order)
        var keys: [RecordKey] = []
        for id in ids {
            keys.append(RecordKey(model: setup.singular, id: id))
            if let instance = store.instance(of: Model.self, id: id) { store.noteDeletedOnServer(instance, id: id) }
        }
        return PushOutcome(keys: keys, deleted: keys)
    }
}
