public import Foundation

/// One record as a cache keeps it: what the server sent for it, and when.
public struct StoredRecord: Sendable {
    /// The encoding of a record's ``StoredRecord/body``.
    public enum Format: Sendable, Hashable {
        /// MessagePack: the record of a MessagePack response byte for byte, that of a JSON
        /// response with the same values (MessagePack keeps every JSON value exactly).
        case messagePack
        /// The record's JSON text as the response held it; given only to a cache that
        /// ``RecordCache/acceptsJSON``.
        case json
    }

    /// Which record.
    public var key: RecordKey
    /// The record as the server sent it, in ``format``. Embedded records stay inside it, and are
    /// also stored on their own.
    public var body: Data
    /// How ``body`` is encoded.
    public var format: Format
    /// When the request that fetched it was sent, by the wall clock: the record's age.
    public var fetchedAt: Date
    /// The request's place in the order of requests (``FetchStamp/order``): of two versions of the
    /// record, the one with the higher order is newer, whatever the clock said.
    public var order: Int64
    /// The `ETag` of the record's own response (`GET /trains/1`), for `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` of the record's own response, for `If-Modified-Since`.
    public var lastModified: String?

    /// Creates a stored record.
    public init(
        key: RecordKey, body: Data, fetchedAt: Date, order: Int64 = 0, etag: String? = nil,
        lastModified: String? = nil, format: Format = .messagePack
    ) {
        self.key = key
        self.body = body
        self.format = format
        self.fetchedAt = fetchedAt
        self.order = order
        self.etag = etag
        self.lastModified = lastModified
    }

    /// When it was fetched, by the order and the wall clock.
    public var fetched: FetchStamp { FetchStamp(order: order, date: fetchedAt) }

    /// The record with its body in MessagePack, for a cache that keeps MessagePack only; a body that
    /// is not JSON stays as it is, and the reader reports it.
    public func inMessagePack() -> StoredRecord {
        guard format == .json, let value = try? JSONParser(maxDepth: .max).parse(body) else { return self }
        var record = self
        record.body = MessagePackWriter.serialize(value)
        record.format = .messagePack
        return record
    }
}

extension StoredRecord {
    /// This record laid over an older copy of it, member by member, as a live instance takes an
    /// answer: a member this copy leaves out keeps the older copy's value. A list that renders
    /// trains without their embedded cars, or a sparse fieldset (a JSON:API resource object's
    /// `attributes` and `relationships` are laid over one another the same way), does not erase
    /// what a fuller read stored.
    ///
    /// `nil` when this copy holds every member of the older one (it stands as it came, byte for
    /// byte), when the older is newer by ``order``, or when either cannot be read as an object.
    package func laid(over older: StoredRecord) -> StoredRecord? {
        // The record read again unchanged, the common case, holds every member: nothing to read.
        guard older.format != format || older.body != body else { return nil }
        guard older.order <= order, case .object(var members)? = Self.tree(of: self),
            case .object(let stored)? = Self.tree(of: older)
        else { return nil }
        var changed = false
        let isResourceObject = members["type"] != nil && stored["type"] != nil
        for (key, value) in stored {
            guard let newer = members[key] else {
                members[key] = value
                changed = true
                continue
            }
            guard isResourceObject, key == "attributes" || key == "relationships",
                case .object(var inner) = newer, case .object(let olderInner) = value
            else { continue }
            for (name, kept) in olderInner where inner[name] == nil {
                inner[name] = kept
                changed = true
            }
            members[key] = .object(inner)
        }
        guard changed else { return nil }
        var merged = self
        merged.body =
            format == .json ? JSONWriter.serialize(.object(members)) : MessagePackWriter.serialize(.object(members))
        return merged
    }

    private static func tree(of record: StoredRecord) -> JSONValue? {
        switch record.format {
        case .json: try? JSONParser().parse(record.body)
        case .messagePack: try? MessagePackReader().readJSON(record.body)
        }
    }
}
