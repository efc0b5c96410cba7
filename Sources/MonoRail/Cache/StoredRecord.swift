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
