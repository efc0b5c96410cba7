public import Foundation
import HTTPTypes

/// A create, save or delete kept in the ``Outbox`` until the server confirms or rejects it.
///
/// It holds what is sent, so that a replay after a restart sends the same request under the same
/// `Idempotency-Key`: the model, the record, the body, and the `If-Match` entity tag.
public struct PendingWrite: Sendable, Hashable {
    /// Its place in the outbox: writes are sent in this order.
    public var sequence: Int64
    /// The `Idempotency-Key` every attempt carries; the server applies the write once per key.
    public var idempotencyKey: String
    /// The model's resource name: `"train"`.
    public var model: String
    /// The model's Swift type as the runtime names it (`_mangledTypeName`), so that a process that
    /// has not used the model yet — an app flushing at launch — can still send the write and merge
    /// its answer; `nil` for a write kept by an older version.
    public var modelType: String?
    /// ``ActionVerb/create``, ``ActionVerb/update`` or ``ActionVerb/destroy``.
    public var verb: ActionVerb
    /// The record's id: a local one (``ResourceID/isLocal``) for a record created in the outbox
    /// until the server gives it its own; `nil` for a singleton resource's record.
    public var id: ResourceID?
    /// The body sent, before the conventions' root wraps it; `nil` for a delete.
    public var body: JSONValue?
    /// The Swift names of the fields it writes.
    public var fields: [String]
    /// The entity tag sent as `If-Match`, when the store sends them
    /// (``MonoRail/Configuration/conditionalWrites``) and the record has one.
    public var ifMatch: String?
    /// Whether ``ifMatch`` is the entity tag of the answer to the write before it of the same
    /// record, which sets it when the server confirms that one.
    public var waitsForIfMatch: Bool
    /// When it was made.
    public var createdAt: Date
    /// The attempts made so far.
    public var attempts: Int
    /// The attempts the server answered with a failure (``OutboxLimits/maximumFailures``).
    public var failures: Int
    /// Why the outbox stopped sending it, when it did: see ``Outbox/parked``.
    public var parking: Parking?
    /// The `Idempotency-Key` of the JSON:API atomic operations request it was first sent in, with
    /// the other writes of its graph (a record created offline and the writes naming it); `nil` for
    /// a write sent on its own. A replay sends the same writes together again, under that key.
    public var batch: String?
    /// The trace context of the `save()`, `create()` or `delete()` that kept it, as the tracer
    /// wrote it (`traceparent` and `tracestate` for a W3C tracer): the span of its replay links to
    /// it, in this process or after a restart. `nil` when no tracer recorded.
    public var traceContext: [String: String]?
    /// Whether storage could not read the write back (a damaged file, or one a later version wrote):
    /// it is parked with the reason and never sent; ``Outbox/discard(_:)`` removes it.
    package var isUnreadable = false

    /// Why a write waits for the app (``Outbox/retry(_:)`` or ``Outbox/discard(_:)``, or a new save
    /// of its record) instead of being sent.
    public struct Parking: Sendable, Hashable {
        /// The error's code: ``/MonoRailClient/APIError/Code/validationFailed`` for a 422, ``/MonoRailClient/APIError/Code/httpStatus``
        /// for another refusal or a server failing past ``OutboxLimits``,
        /// ``/MonoRailClient/APIError/Code/dependencyRejected`` for a write parked with one it depends on.
        public var code: APIError.Code
        /// The status of the answer, if one came.
        public var statusCode: Int?
        /// What went wrong.
        public var message: String
        /// When the write was parked.
        public var parkedAt: Date

        /// Creates a parking note.
        public init(code: APIError.Code, statusCode: Int?, message: String, parkedAt: Date = Date()) {
            self.code = code
            self.statusCode = statusCode
            self.message = message
            self.parkedAt = parkedAt
        }

        init(_ error: APIError) {
            self.init(code: error.code, statusCode: error.statusCode, message: error.message)
        }

        /// The error, as far as storage keeps it: code, status and message.
        public var error: APIError {
            // A status read back from a damaged file could be any number; HTTPTypes traps outside 0–999.
            let status = statusCode.flatMap { (100...999).contains($0) ? $0 : nil }
            return APIError(code, message, response: status.map { HTTPResponse(status: .init(code: $0)) })
        }
    }

    /// Creates a pending write.
    public init(
        sequence: Int64, idempotencyKey: String, model: String, modelType: String? = nil, verb: ActionVerb,
        id: ResourceID?, body: JSONValue?, fields: [String], ifMatch: String? = nil, waitsForIfMatch: Bool = false,
        createdAt: Date = Date(), attempts: Int = 0, failures: Int = 0, parking: Parking? = nil, batch: String? = nil,
        traceContext: [String: String]? = nil
    ) {
        self.batch = batch
        self.traceContext = traceContext
        self.sequence = sequence
        self.idempotencyKey = idempotencyKey
        self.model = model
        self.modelType = modelType
        self.verb = verb
        self.id = id
        self.body = body
        self.fields = fields
        self.ifMatch = ifMatch
        self.waitsForIfMatch = waitsForIfMatch
        self.createdAt = createdAt
        self.attempts = attempts
        self.failures = failures
        self.parking = parking
    }

    /// The write with every local id the server has replaced — in its record id and anywhere in
    /// its body (a car's `train_id` naming a train created in the outbox).
    func replacingLocalIDs(_ replaced: [String: ResourceID]) -> PendingWrite {
        guard !replaced.isEmpty else { return self }
        var write = self
        if let id, let real = replaced[id.description] { write.id = real }
        write.body = body.map { $0.replacingLocalIDs(replaced) }
        return write
    }

    /// The local ids the body names other than the record's own: records created in the outbox
    /// that this write needs the server to have first.
    var referencedLocalIDs: Set<String> {
        namedIDs { ResourceID.string($0).isLocal }
    }

    /// The id later writes may name this write's record by and so wait for it: a local id, or the
    /// id the app gave a record it creates; `nil` for a record the server named.
    var chainedID: String? {
        guard let id, id.isLocal || verb == .create else { return nil }
        return id.description
    }

    /// The ids the body names, its own left out, that `isChained` picks: the kept creates (and
    /// writes of records made in the outbox) it waits for.
    func namedIDs(where isChained: (String) -> Bool) -> Set<String> {
        var found = Set<String>()
        if let body { Self.collectStrings(in: body, where: isChained, into: &found) }
        if let id { found.remove(id.description) }
        return found
    }

    private static func collectStrings(
        in value: JSONValue, where picks: (String) -> Bool, into found: inout Set<String>
    ) {
        switch value {
        case .string(let text) where picks(text): found.insert(text)
        case .array(let items): for item in items { collectStrings(in: item, where: picks, into: &found) }
        case .object(let members):
            for member in members.values { collectStrings(in: member, where: picks, into: &found) }
        default: break
        }
    }
}

extension JSONValue {
    /// The value with each string that is a replaced local id turned into the server's id.
    func replacingLocalIDs(_ replaced: [String: ResourceID]) -> JSONValue {
        switch self {
        case .string(let text): replaced[text]?.jsonValue ?? self
        case .array(let items): .array(items.map { $0.replacingLocalIDs(replaced) })
        case .object(let members): .object(members.mapValues { $0.replacingLocalIDs(replaced) })
        default: self
        }
    }
}

extension JSONValue? {
    /// A body with another's members laid over its own: a write folded into an earlier one of the
    /// same record.
    func overlaid(with other: JSONValue?) -> JSONValue? {
        guard case .object(var members)? = self, case .object(let newer)? = other else { return other ?? self }
        // JSON:API documents, `{"data": {"type", "attributes", "relationships"}}`: the resource
        // objects' attributes and relationships are laid over each other, not replaced whole.
        if members.count == 1, newer.count == 1, case .object(var data)? = members["data"],
            case .object(let newerData)? = newer["data"], data["type"] != nil, newerData["type"] != nil
        {
            // A create's document names no id: a save's laid over it does not add its local one.
            for (key, value) in newerData where key != "id" || data["id"] != nil {
                data[key] =
                    key == "attributes" || key == "relationships"
                    ? JSONValue?.some(data[key] ?? [:]).overlaid(with: value) ?? value : value
            }
            return .object(["data": .object(data)])
        }
        members.merge(newer) { _, new in new }
        return .object(members)
    }
}
