public import Foundation
import HTTPTypes

extension ResourceModel {
    /// Merges the records of a list body received some other way (a cache, a push payload, a file)
    /// into the store, exactly as ``get(policy:in:)`` merges a response: `{"trains": […]}`, a bare array, a
    /// namespace, per the model's conventions.
    ///
    /// ```swift
    /// let trains = try Train.merge(listBody: cachedData)
    /// ```
    ///
    /// - Parameters:
    ///   - body: The bytes.
    ///   - contentType: How the bytes are written: JSON unless this names MessagePack
    ///     (`application/x-msgpack`).
    ///   - store: The identity map to merge into.
    /// - Returns: The live instances, in body order.
    /// - Throws: ``/MonoRailClient/APIError``: ``/MonoRailClient/APIError/Code/decodingFailed`` or ``/MonoRailClient/APIError/Code/inconsistentResponse``;
    ///   nothing is merged when it throws.
    public static func merge(
        listBody body: Data, contentType: String = "application/json", in store: ResourceStore = .default
    ) throws -> [Self] {
        let pipeline = ActionPipeline<Self>(store: store)
        return try pipeline.mergeList(
            receivedResponse(body, contentType: contentType, setup: pipeline.setup),
            MergeContext(fetched: store.stamp()))
    }

    /// Merges one record body received some other way into the store, as ``get(id:include:parameters:policy:in:)`` merges a
    /// response: `{"train": {…}}` or a bare object.
    ///
    /// - Parameters:
    ///   - body: The bytes.
    ///   - contentType: How the bytes are written, as in ``merge(listBody:contentType:in:)``.
    ///   - store: The identity map to merge into.
    /// - Returns: The live instance.
    /// - Throws: ``/MonoRailClient/APIError``, as ``merge(listBody:contentType:in:)``.
    public static func merge(
        recordBody body: Data, contentType: String = "application/json", in store: ResourceStore = .default
    ) throws -> Self {
        let pipeline = ActionPipeline<Self>(store: store)
        return try pipeline.mergeRecord(
            receivedResponse(body, contentType: contentType, setup: pipeline.setup), expecting: nil, target: nil,
            mode: .read, MergeContext(fetched: store.stamp()))
    }

    /// Merges one record, given as its JSON value rather than a response body (no root, no
    /// namespace), into the store, and returns the store's instance for it: Apic's
    /// `init(dictionary:)` for a record that should be shared.
    ///
    /// ```swift
    /// let train = try Train.merge(json: ["id": 1, "company": "MonoRail Co."])
    /// train === (try await Train.get(id: 1))   // true
    /// ```
    ///
    /// - Parameters:
    ///   - json: The record, with its id.
    ///   - store: The identity map to merge into.
    /// - Throws: ``/MonoRailClient/APIError``: ``/MonoRailClient/APIError/Code/decodingFailed`` as for a response;
    ///   ``/MonoRailClient/APIError/Code/inconsistentResponse``; nothing is merged when it throws.
    public static func merge(json: JSONValue, in store: ResourceStore = .default) throws -> Self {
        let pipeline = ActionPipeline<Self>(store: store)
        let coder = FieldCoder(options: pipeline.setup.coding)
        let patch = try pipeline.setup.decoder(coder: coder, store: store).decode(json, at: RecordLocation(base: "$"))
        let (merged, side) = try store.mergeKeepingSideloads(
            [patch], sideloaded: [], target: nil, mode: .read, coder: coder, fetched: store.stamp())
        withExtendedLifetime(side) { if !side.isEmpty { resourceSchema.adoptRelated(merged, in: store) } }
        guard let instance = merged.first else {
            throw APIError(.inconsistentResponse, "the record held no \(resourceSchema.typeName)")
        }
        return instance
    }

    static func receivedResponse(_ body: Data, contentType: String, setup: ModelSetup<Self>) -> APIResponse {
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = contentType
        return APIResponse(
            request: HTTPRequest(method: .get, scheme: nil, authority: nil, path: setup.path), response: response,
            body: body, decoder: setup.client.responseDecoder)
    }
}

extension ResourceModel {
    /// Creates an instance from one record's JSON, read with the same rules as a response (key
    /// mapping, transforms, decoding policy, `customDeserialize`, embedded records), without
    /// entering the store: Apic's `init(json:)`. Use ``merge(json:in:)`` for the store's instance.
    ///
    /// ```swift
    /// let draft = try Train(json: ["company": "MonoRail Co.", "max_speed": 46.8])
    /// try await draft.save()   // POST /trains: it has no id
    /// ```
    ///
    /// The instance uses `store`'s configuration, and saves to it. Embedded records become
    /// instances of their own, outside the store too.
    ///
    /// - Parameters:
    ///   - json: The record; the id may be left out.
    ///   - store: Whose configuration reads the record; the instance does not enter its identity map.
    /// - Throws: ``/MonoRailClient/APIError/Code/decodingFailed``, naming the field and path, as for a response.
    public init(json: JSONValue, using store: ResourceStore = .default) throws {
        self.init()
        let setup = store.setup(for: Self.self)
        let coder = FieldCoder(options: setup.coding)
        let patch = try setup.decoder(coder: coder, store: store).decode(
            json, at: RecordLocation(base: "$"), allowsMissingID: true)
        // A map of its own: the instance and what it embeds are built as a merge builds them, and
        // nobody else can find them.
        var detached = IdentityMap()
        var announcements: [() -> Void] = []
        _ = Merger.apply(
            [patch], target: self, mode: .read, store: store, map: &detached, coder: coder, fetched: store.stamp(),
            announcements: &announcements)
        // Read from JSON the app had, not fetched: the instance has no age.
        _$state.state.withLock {
            $0.isPersisted = $0.id != nil
            $0.fetched = nil
        }
    }

    /// Creates an instance from a Foundation dictionary, as ``init(json:using:)`` does from JSON:
    /// Apic's `init(dictionary:)`.
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/encodingFailed`` for a value with no JSON form, or as
    ///   ``init(json:using:)``.
    public init(dictionary: [String: Any], using store: ResourceStore = .default) throws {
        try self.init(json: JSONValue(foundation: dictionary), using: store)
    }
}

extension ResourceModel {
    /// The record as the wire shows it: the id under ``primaryKey`` and each field under its wire
    /// key, in the form a save sends (transforms, reference ids, ``customSerialize(_:for:)`` with
    /// ``ActionVerb/update``) — Objects' `var dictionary`, ready to log, compare or send elsewhere.
    ///
    /// ```swift
    /// let train = try await Train.get(id: 1)
    /// try train.json   // {"id": 1, "company": "MonoRail Co.", "number_of_cars": 5, …}
    /// ```
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/encodingFailed``, naming the field, as a save would.
    public var json: JSONValue {
        get throws {
            let snapshot = _$state.snapshot()
            let store = snapshot.store ?? .default
            let setup = store.setup(for: Self.self)
            let (body, _) = try Self.encodeBody(snapshot.values, only: nil, setup: setup, verb: .update, store: store)
            guard let id = snapshot.id, case .object(var object) = body else { return body }
            object[setup.idKey] = id.jsonValue
            return .object(object)
        }
    }

    /// ``json`` as a Foundation dictionary (`NSNull` for null): Objects' `var dictionary`.
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/encodingFailed``, as ``json``.
    public var dictionary: [String: Any] {
        get throws {
            guard case .object(let object) = try json else {
                throw APIError(
                    .encodingFailed,
                    "\(Self.resourceSchema.typeName).customSerialize(_:for: .update) returned no object; a dictionary needs one"
                )
            }
            return object.mapValues(\.foundationValue)
        }
    }
}

extension ResourceModel {
    /// Reads this instance's record again, when what the store heard of it may have missed a change
    /// (after a live-updates reset, or a create's answer that may be the server's replay of an
    /// earlier attempt's); a record the server no longer has is deleted here too.
    func readAgain(in store: ResourceStore) async -> APIError? {
        guard let id = _$state.state.withLock({ $0.id }), !id.isLocal else { return nil }
        do {
            _ = try await fetch()
            return nil
        } catch let error as APIError where error.statusCode == 404 || error.statusCode == 410 {
            store.noteGone(Self.self, ids: [id])
            store.noteDeletedOnServer(self, id: id)
            try? await store.setup(for: Self.self).storage?.forgetDeleted([RecordKey(model: Self.resourceName, id: id)])
            return nil
        } catch {
            // Answered after the store heard the record was deleted: the instance reads as deleted.
            if _$state.state.withLock({ $0.isDeleted }) { return nil }
            return APIError.wrapping(error, request: nil)
        }
    }
}
