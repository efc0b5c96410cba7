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

    /// The stored records among `keys`, in the order of `keys`: `nil` where it holds none. A stored
    /// query's records are read with it, thousands at once on a cold start; by default it asks
    /// ``records(_:)``, and a cache that can answer in order without hashing each key does so.
    func records(inOrderOf keys: [RecordKey]) async throws -> [StoredRecord?]

    /// The stored answer to a read.
    func query(_ key: QueryKey) async throws -> StoredQuery?

    /// Keeps records, and the query they answered when there is one, together (in one transaction,
    /// where that means something). A record whose stored version was fetched later stays as it is.
    /// A record is merged into its stored copy by member, as a live instance takes an answer: what
    /// the new copy leaves out (an index's lighter rendering, a sparse fieldset) keeps its stored
    /// value; `StoredRecord.laid(over:)` does it for the caches in this package.
    func write(_ records: [StoredRecord], query: StoredQuery?) async throws

    /// Marks records, and a query, as confirmed by the server by a request sent at `fetched` (a
    /// `304 Not Modified`), unless a later one stored them.
    func refresh(_ keys: [RecordKey], query: QueryKey?, fetched: FetchStamp) async throws

    /// Forgets records; queries that named them can no longer be answered.
    func remove(_ keys: [RecordKey]) async throws

    /// Forgets records the server deleted, and their ids in stored queries, which stay answerable:
    /// the server would no longer list them either.
    func forgetDeleted(_ keys: [RecordKey]) async throws

    /// Forgets every record and query of a model.
    func removeAll(model: String) async throws

    /// Forgets the records of a model that an authoritative list no longer holds — those not in
    /// `ids` and fetched before `order`, the list's request's ``FetchStamp/order`` — as
    /// ``forgetDeleted(_:)`` does. Returns their keys.
    func forgetAbsent(model: String, keeping ids: Set<String>, fetchedBefore order: Int64) async throws -> [RecordKey]

    /// Marks every record and stored list as fetched long ago, keeping them: the server said it no
    /// longer keeps the changes since the live-updates cursor (`event: reset`), so what was stored
    /// may have missed some. A ``MonoRail/Configuration/cacheTimeToLive`` or a
    /// ``CachePolicy/cacheFirst(maxAge:)`` then asks the server again; an offline read still answers.
    /// The default does nothing: a cache that keeps no time of its own has none to change.
    func markStale() async throws

    /// Keeps records from eviction (`true`), or lets them go again (`false`).
    func setPinned(_ pinned: Bool, _ keys: [RecordKey]) async throws

    /// Forgets everything, so that none of it can be read back, from memory or from disk.
    func clear() async throws

    /// Waits until every write made so far is kept for good (on disk, for a cache that writes in
    /// the background). An app calls it before it quits; the default does nothing.
    func flush() async throws

    /// Whether the cache takes the records of JSON responses as they came (``StoredRecord/Format/json``)
    /// and gives them back so: nothing is converted on the way in. By default `false`: every record
    /// is given in MessagePack, for a cache that keeps ``StoredRecord/body`` alone.
    var acceptsJSON: Bool { get }

    /// Keeps what pushed changes brought — records, and records the server deleted (as
    /// ``forgetDeleted(_:)``) — with the live-updates cursor after them, together (in one
    /// transaction, where that means something): after a restart, the stream resumes from a cursor
    /// whose changes are all kept. By default the records are written and forgotten, and the cursor
    /// is not kept, so a restart starts the stream from now.
    func keepPushed(_ records: [StoredRecord], deleted: [RecordKey], cursor: LiveCursor?) async throws

    /// The cursor ``keepPushed(_:deleted:cursor:)`` kept last for a stream, by its path; `nil` when
    /// none is kept. ``clear()`` forgets it.
    func liveCursor(feed: String) async throws -> String?

    /// The highest ``StoredRecord/order`` or ``StoredQuery/order`` it held when it was opened: a
    /// store's requests are ordered after it, so what a later launch fetches is newer than what an
    /// earlier one kept, whatever the clock says. The default, `0`, suits a cache that keeps
    /// nothing across launches.
    var highestOrder: Int64 { get }
}

extension RecordCache {
    /// `false`: records are given in MessagePack.
    public var acceptsJSON: Bool { false }

    /// ``records(_:)``, put in the order of `keys`.
    public func records(inOrderOf keys: [RecordKey]) async throws -> [StoredRecord?] {
        let found = try await records(keys)
        return keys.map { found[$0] }
    }

    /// `0`: nothing was kept before this launch.
    public var highestOrder: Int64 { 0 }

    /// Writes the records and forgets the deleted ones; the cursor is not kept.
    public func keepPushed(_ records: [StoredRecord], deleted: [RecordKey], cursor: LiveCursor?) async throws {
        if !records.isEmpty { try await write(records, query: nil) }
        if !deleted.isEmpty { try await forgetDeleted(deleted) }
    }

    /// `nil`: no cursor is kept.
    public func liveCursor(feed: String) async throws -> String? { nil }

    /// Does nothing: the cache keeps each write before ``write(_:query:)`` returns.
    public func flush() async throws {}

    /// Does nothing: a cache that keeps no fetch times of its own has none to change.
    public func markStale() async throws {}
}

/// Where a store's live updates resume: the id of the last event merged from a stream.
public struct LiveCursor: Sendable, Hashable {
    /// The stream's path, ``LiveUpdatesConfiguration/path``.
    public var feed: String
    /// The `id` of the last event merged, sent as `Last-Event-ID` to resume.
    public var lastEventID: String

    /// Creates a cursor.
    public init(feed: String, lastEventID: String) {
        self.feed = feed
        self.lastEventID = lastEventID
    }
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

/// The answer to one read, as a cache keeps it: which records it held, in order, and which related
/// records came beside them, so that the read can be answered again without a request.
public struct StoredQuery: Sendable, Hashable {
    /// Which read.
    public var key: QueryKey
    /// The ids of the records, in response order.
    public var ids: [String]
    /// Side-loaded records that came with them (`?include=cars`).
    public var related: [RecordKey]
    /// When the request was sent, by the wall clock.
    public var fetchedAt: Date
    /// The request's place in the order of requests (``FetchStamp/order``).
    public var order: Int64
    /// The `ETag` of the response, for `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` of the response, for `If-Modified-Since`.
    public var lastModified: String?

    /// Creates a stored query.
    public init(
        key: QueryKey, ids: [String], related: [RecordKey] = [], fetchedAt: Date, order: Int64 = 0,
        etag: String? = nil, lastModified: String? = nil
    ) {
        self.key = key
        self.ids = ids
        self.related = related
        self.fetchedAt = fetchedAt
        self.order = order
        self.etag = etag
        self.lastModified = lastModified
    }

    /// When it was fetched, by the order and the wall clock.
    public var fetched: FetchStamp { FetchStamp(order: order, date: fetchedAt) }
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
