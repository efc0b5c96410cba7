public import Foundation

/// Where a store keeps the records the server sent, so that a read can be answered without a
/// request, after a restart when the cache is on disk: the storage seam of the action pipeline.
///
/// The pipeline asks the cache before a read is sent (as its ``CachePolicy`` says) and gives it
/// every record a read or write brought back once it merged, embedded and side-loaded records
/// included, each under its own model and id. A cached answer is decoded and merged by the same
/// code as a network answer, so the instances are the same live ones.
///
/// MonoRail has two: ``InMemoryRecordCache``, every store's default, and `SQLiteStorage` in the
/// `MonoRailSQLite` module, which survives restarts. Set one with
/// ``MonoRail/Configuration/storage``.
///
/// Implementations must be safe to call from any task, and must keep the newer of two versions of
/// a record: ``write(_:query:)`` never replaces a stored record with one fetched earlier.
public protocol RecordCache: AnyObject, Sendable {
    /// The stored records among `keys`, by key; keys it does not hold are left out.
    func records(_ keys: [RecordKey]) async throws -> [RecordKey: StoredRecord]

    /// The stored answer to a read.
    func query(_ key: QueryKey) async throws -> StoredQuery?

    /// Keeps records, and the query they answered when there is one, together (in one transaction,
    /// where that means something). A record whose stored version was fetched later stays as it is.
    func write(_ records: [StoredRecord], query: StoredQuery?) async throws

    /// Marks records, and a query, as confirmed by the server at `fetchedAt` (a `304 Not Modified`).
    func refresh(_ keys: [RecordKey], query: QueryKey?, fetchedAt: Date) async throws

    /// Forgets records; queries that named them can no longer be answered.
    func remove(_ keys: [RecordKey]) async throws

    /// Forgets records the server deleted, and their ids in stored queries, which stay answerable:
    /// the server would no longer list them either.
    func forgetDeleted(_ keys: [RecordKey]) async throws

    /// Forgets every record and query of a model.
    func removeAll(model: String) async throws

    /// Forgets the records of a model that an authoritative list no longer holds — those not in
    /// `ids` and fetched before `date`, when that list was asked for — as ``forgetDeleted(_:)``
    /// does. Returns their keys.
    func forgetAbsent(model: String, keeping ids: Set<String>, fetchedBefore date: Date) async throws -> [RecordKey]

    /// Keeps records from eviction (`true`), or lets them go again (`false`).
    func setPinned(_ pinned: Bool, _ keys: [RecordKey]) async throws

    /// Forgets everything, so that none of it can be read back, from memory or from disk.
    func clear() async throws

    /// Waits until every write made so far is kept for good (on disk, for a cache that writes in
    /// the background). An app calls it before it quits; the default does nothing.
    func flush() async throws
}

extension RecordCache {
    /// Does nothing: the cache keeps each write before ``write(_:query:)`` returns.
    public func flush() async throws {}
}

/// A record's place in a cache: its model's name and its id.
public struct RecordKey: Hashable, Sendable, CustomStringConvertible {
    /// The model's resource name: `"train"`.
    public var model: String
    /// The id as text; `1` and `"1"` are the same record, as in the identity map.
    public var id: String

    /// Creates a key.
    public init(model: String, id: String) {
        self.model = model
        self.id = id
    }

    /// The key of a record of a model with an id.
    public init(model: String, id: ResourceID) {
        self.init(model: model, id: id.description)
    }

    /// `"train 1"`.
    public var description: String { "\(model) \(id)" }
}

/// One record as a cache keeps it: what the server sent for it, and when.
public struct StoredRecord: Sendable {
    /// Which record.
    public var key: RecordKey
    /// The record as the server sent it, in MessagePack: the record of a MessagePack response
    /// byte for byte, that of a JSON response with the same values (MessagePack keeps every JSON
    /// value exactly). Embedded records stay inside it, and are also stored on their own.
    public var body: Data
    /// When the request that fetched it was sent: the record is at least this fresh.
    public var fetchedAt: Date
    /// The `ETag` of the record's own response (`GET /trains/1`), for `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` of the record's own response, for `If-Modified-Since`.
    public var lastModified: String?

    /// Creates a stored record.
    public init(key: RecordKey, body: Data, fetchedAt: Date, etag: String? = nil, lastModified: String? = nil) {
        self.key = key
        self.body = body
        self.fetchedAt = fetchedAt
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// The answer to one read, as a cache keeps it: which records it held, in order, and which related
/// records came beside them, so that the read can be answered again without a request.
public struct StoredQuery: Sendable, Hashable {
    /// Which read.
    public var key: QueryKey
    /// The ids of the records, in response order.
    public var ids: [String]
    /// Side-loaded records that came with them (`?include=cars`).
    public var related: [RecordKey]
    /// When the request was sent.
    public var fetchedAt: Date
    /// The `ETag` of the response, for `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` of the response, for `If-Modified-Since`.
    public var lastModified: String?

    /// Creates a stored query.
    public init(
        key: QueryKey, ids: [String], related: [RecordKey] = [], fetchedAt: Date, etag: String? = nil,
        lastModified: String? = nil
    ) {
        self.key = key
        self.ids = ids
        self.related = related
        self.fetchedAt = fetchedAt
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// A read's place in a cache: its model's name and what it asked for.
public struct QueryKey: Hashable, Sendable, CustomStringConvertible {
    /// The model's resource name.
    public var model: String
    /// The read's path and parameters, such as `/trains?company=MonoRail%20Co.`.
    public var key: String

    /// Creates a key.
    public init(model: String, key: String) {
        self.model = model
        self.key = key
    }

    /// `"train /trains?…"`.
    public var description: String { "\(model) \(key)" }
}
