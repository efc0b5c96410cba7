public import Foundation
public import HTTPTypes
import MonoRailTransport

/// Where a record cache plugs into the action pipeline: asked before a read is sent, told what the
/// network answered once it merged.
///
/// The cache keeps response bodies as received, so an answer from it is located, decoded and
/// merged by the same code as a network answer: the instances are the same live ones, and a bad
/// stored body fails as a bad network body would. Set one with
/// ``MonoRail/Configuration/recordCache``; without one the stage is skipped.
public protocol RecordCache: Sendable {
    /// A stored answer for a read, or `nil` to send the request.
    func answer(_ action: ActionDescription) async throws -> CachedResponse?
    /// Keeps what the network answered `action`, once its records merged.
    func store(_ response: CachedResponse, for action: ActionDescription) async throws
}

/// A response body as a record cache keeps it.
public struct CachedResponse: Sendable {
    /// The status the server answered with.
    public var status: HTTPResponse.Status
    /// The response header fields: content type, ETag, `Link`, `Date`.
    public var headerFields: HTTPFields
    /// The body bytes, as received.
    public var body: Data
    /// When the response arrived.
    public var receivedAt: Date

    /// Creates a cached response.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields, body: Data, receivedAt: Date = Date()) {
        self.status = status
        self.headerFields = headerFields
        self.body = body
        self.receivedAt = receivedAt
    }
}

/// A record cache in memory: answers a read with the body the network gave the same read, for as
/// long as that body is younger than ``maxAge``. A create, save or delete forgets every body of its
/// model, since the record and the lists it is in may have changed.
///
/// ```swift
/// MonoRail.configure { $0.recordCache = InMemoryRecordCache(maxAge: .seconds(30)) }
/// ```
public final class InMemoryRecordCache: RecordCache {
    /// How long a body answers reads.
    public let maxAge: Duration
    private let entries = Locked<[Key: CachedResponse]>([:])

    private struct Key: Hashable {
        var model: String
        var path: String
        var query: [String: JSONValue]

        init(_ action: ActionDescription) {
            (model, path, query) = (action.model, action.path, action.query)
        }
    }

    /// Creates an empty cache.
    ///
    /// - Parameter maxAge: How long a body answers reads.
    public init(maxAge: Duration) {
        self.maxAge = maxAge
    }

    /// The number of bodies kept.
    public var count: Int { entries.withLock { $0.count } }

    /// The body the same read got, while it is younger than ``maxAge``.
    public func answer(_ action: ActionDescription) async throws -> CachedResponse? {
        guard action.verb.isRead else { return nil }
        let key = Key(action)
        let maxAge = Double(maxAge.components.seconds) + Double(maxAge.components.attoseconds) * 1e-18
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard Date().timeIntervalSince(entry.receivedAt) < maxAge else {
                entries[key] = nil
                return nil
            }
            return entry
        }
    }

    /// Keeps the body of a read; after a write, forgets every body of the model.
    public func store(_ response: CachedResponse, for action: ActionDescription) async throws {
        entries.withLock { entries in
            if action.verb.isRead {
                entries[Key(action)] = response
            } else {
                // A write may change the record and any list it is in.
                entries = entries.filter { $0.key.model != action.model }
            }
        }
    }
}
