public import Foundation
import MonoRailTransport

/// An on-disk cache of downloaded files (images, documents) keyed by URL, bounded in size, least
/// recently used out first (Objects' file caching).
///
/// ```swift
/// let cache = try FileCache(directory: cachesURL.appendingPathComponent("files"), maxBytes: 50 << 20)
/// let avatar = try await cache.data(from: "/uploads/\(id)", using: api)  // revalidated with its ETag
/// ```
///
/// - It survives restarts: an index beside the files records each URL's file, size, `ETag` and
///   last use, written atomically after every store or removal. Reads only reorder it in memory
///   (a hit costs no write); the order is written with the next change, by ``flush()``, or when
///   the cache is released.
/// - It is safe under concurrent use from any task: one lock guards the index, and files are
///   written to a temporary name and renamed, so a reader never sees half a file.
/// - Files and the directory are readable by the owner only (0600 and 0700).
/// - Damage is survivable: an unreadable index starts an empty cache (files it no longer names are
///   deleted), and a file whose size does not match its entry is dropped and fetched again.
public final class FileCache: Sendable {
    struct Entry: Codable, Sendable {
        var file: String
        var size: Int64
        var etag: String?
        var lastUse: Int64
    }

    struct Index: Codable, Sendable {
        var entries: [String: Entry] = [:]
        /// The URL each named file holds (``file(_:named:using:options:)``), by name.
        var names: [String: String] = [:]
        /// A use counter rather than a clock, so the order survives clock changes and restarts.
        var clock: Int64 = 0
        /// Whether reads changed the order since the index was last written.
        var isDirty = false
        var totalBytes: Int64 { entries.values.reduce(0) { $0 + $1.size } }

        private enum CodingKeys: String, CodingKey { case entries, names, clock }

        init() {}

        /// Drops a URL's entry and the names that hold it, so names never outgrow the files kept.
        mutating func forget(_ key: String) -> Entry? {
            names = names.filter { $0.value != key }
            return entries.removeValue(forKey: key)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            entries = try container.decode([String: Entry].self, forKey: .entries)
            // An index written before names were kept has none.
            names = try container.decodeIfPresent([String: String].self, forKey: .names) ?? [:]
            clock = try container.decode(Int64.self, forKey: .clock)
        }
    }

    /// Where the files are.
    public let directory: URL
    /// The most bytes kept; older entries are removed to make room.
    public let maxBytes: Int64
    private let index: Locked<Index>
    private var indexURL: URL { directory.appendingPathComponent("index.json") }

    /// Opens (or creates) a cache in a directory.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` with ``/MonoRailClient/APIError/Code/invalidRequest`` when the directory cannot be created.
    public init(directory: URL, maxBytes: Int64) throws {
        self.directory = directory
        self.maxBytes = maxBytes
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw APIError(.invalidRequest, "cannot create the file cache at \(directory.path)", underlyingError: error)
        }
        let indexURL = directory.appendingPathComponent("index.json")
        var loaded =
            (try? Data(contentsOf: indexURL)).flatMap { try? JSONDecoder().decode(Index.self, from: $0) } ?? Index()
        // Entries whose file is gone, damaged or not one of ours (a name that is no UUID could point
        // outside the directory) are dropped; files no entry names are deleted.
        loaded.entries = loaded.entries.filter {
            UUID(uuidString: $0.value.file) != nil
                && Self.fileSize(directory.appendingPathComponent($0.value.file)) == $0.value.size
        }
        loaded.names = loaded.names.filter { loaded.entries[$0.value] != nil }
        let named = Set(loaded.entries.values.map(\.file))
        let present = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in present where name != "index.json" && !named.contains(name) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        self.index = Locked(loaded)
        index.withLock { save($0) }
    }

    /// The number of files kept.
    public var count: Int { index.withLock { $0.entries.count } }

    /// The bytes kept.
    public var totalBytes: Int64 { index.withLock { $0.totalBytes } }

    /// The cached bytes for a URL, marking them as just used; `nil` when absent or damaged.
    public func data(for url: URL) -> Data? {
        lookUp(url, reading: true)?.data
    }

    /// The `ETag` stored with a URL's bytes.
    public func etag(for url: URL) -> String? {
        index.withLock { $0.entries[url.absoluteString]?.etag }
    }

    /// The cached file for a URL on disk, for APIs that want a path; do not modify it.
    public func fileURL(for url: URL) -> URL? {
        lookUp(url, reading: false).map { directory.appendingPathComponent($0.entry.file) }
    }

    /// Stores bytes for a URL, replacing what was there, then evicts the least recently used
    /// entries until the cache fits. Bytes larger than the whole cache are not stored.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` with ``/MonoRailClient/APIError/Code/invalidRequest`` when the file cannot be written.
    public func store(_ data: Data, for url: URL, etag: String? = nil) throws {
        guard Int64(data.count) <= maxBytes else { return }
        let name = UUID().uuidString.lowercased()
        let target = directory.appendingPathComponent(name)
        let temporary = directory.appendingPathComponent(".\(name).partial")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw APIError(.invalidRequest, "cannot write to the file cache at \(directory.path)")
        }
        do {
            try FileManager.default.moveItem(at: temporary, to: target)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw APIError(
                .invalidRequest, "cannot write to the file cache at \(directory.path)", underlyingError: error)
        }
        let removed: [String] = index.withLock { index in
            var removed: [String] = []
            if let old = index.entries[url.absoluteString] { removed.append(old.file) }
            index.clock += 1
            index.entries[url.absoluteString] = Entry(
                file: name, size: Int64(data.count), etag: etag, lastUse: index.clock)
            var total = index.totalBytes
            while total > maxBytes, let oldest = index.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                _ = index.forget(oldest.key)
                total -= oldest.value.size
                removed.append(oldest.value.file)
            }
            save(index)
            index.isDirty = false
            return removed
        }
        for file in removed { try? FileManager.default.removeItem(at: directory.appendingPathComponent(file)) }
    }

    /// Forgets a URL and deletes its file.
    public func remove(_ url: URL) {
        let file = index.withLock { index -> String? in
            let removed = index.forget(url.absoluteString)?.file
            save(index)
            index.isDirty = false
            return removed
        }
        if let file { try? FileManager.default.removeItem(at: directory.appendingPathComponent(file)) }
    }

    /// Forgets every URL and deletes every file, partial writes included: ``ResourceStore/clear()``
    /// calls it for sign-out.
    public func removeAll() {
        index.withLock { index in
            index.entries = [:]
            index.names = [:]
            save(index)
            index.isDirty = false
            let present = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in present where name != "index.json" {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            }
        }
    }

    /// The URLs kept, least recently used first.
    public var urlsByLastUse: [URL] {
        index.withLock { $0.entries.sorted { $0.value.lastUse < $1.value.lastUse }.compactMap { URL(string: $0.key) } }
    }

    // MARK: Fetching

    /// The bytes at a path of an API: fetched and kept on first use, then revalidated with
    /// `If-None-Match` when the server gave an `ETag` (a `304` keeps the cached copy). When the
    /// request fails and a copy is kept, the copy is returned.
    ///
    /// A URL another origin serves goes without the app's credentials
    /// (``/MonoRailClient/RequestOptions/isAnonymous``): a file URL is often the server's data, and a
    /// CDN must not see the app's tokens.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` when nothing is cached and the request fails.
    public func data(
        from path: APIPath, using client: APIClient, options: RequestOptions = RequestOptions()
    ) async throws -> Data {
        let url = try client.url(for: path)
        return try await fetch(url, cached: lookUp(url, reading: true), using: client, options: options)
    }

    /// The file one owner keeps under a name — a record's image (Objects' `file(name:url:)`):
    /// the kept copy when there is one, with no request, since a file that changes is given a new
    /// URL; else fetched as ``data(from:using:options:)`` fetches, and kept. When the name held
    /// another URL before, that file is dropped (unless another name holds it), so a record keeps one
    /// copy of its image however often the image changes.
    ///
    /// ```swift
    /// let avatar = try await cache.file(user.avatarPath, named: "user/7/avatar", using: api)
    /// ```
    ///
    /// ``ResourceModel/file(name:url:)-(_,String?)`` calls it with the record's store and a name of its own.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` when nothing is kept and the request fails.
    public func file(
        _ path: APIPath, named name: String, using client: APIClient, options: RequestOptions = RequestOptions()
    ) async throws -> Data {
        let url = try client.url(for: path)
        let data: Data
        if let kept = lookUp(url, reading: true)?.data {
            data = kept
        } else {
            data = try await fetch(url, cached: nil, using: client, options: options)
        }
        let key = url.absoluteString
        let replaced: String? = index.withLock { index in
            // Names hold only files kept: one too large for the cache is served, not named.
            guard index.entries[key] != nil, index.names[name] != key else { return nil }
            let previous = index.names.updateValue(key, forKey: name)
            let dropped = previous.flatMap {
                index.names.values.contains($0) ? nil : index.entries.removeValue(forKey: $0)?.file
            }
            save(index)
            index.isDirty = false
            return dropped
        }
        if let replaced { try? FileManager.default.removeItem(at: directory.appendingPathComponent(replaced)) }
        return data
    }

    /// Fetches a URL, revalidating the cached copy when there is one with an `ETag`.
    private func fetch(
        _ url: URL, cached: (entry: Entry, data: Data?)?, using client: APIClient, options: RequestOptions
    ) async throws -> Data {
        var request = APIRequest(method: .get, path: APIPath(verbatim: url.absoluteString), options: options)
        request.headers[.accept] = "*/*"
        if client.configuration.baseURL.map({ !isSameOrigin($0, url) }) ?? true {
            request.options.isAnonymous = true
        }
        if let etag = cached?.entry.etag { request.headers[.ifNoneMatch] = etag }
        do {
            let response = try await Exchange(client: client).send(request)
            if response.response.status == .notModified {
                guard let data = cached?.data else {
                    throw APIError(
                        .inconsistentResponse, "the server answered 304 Not Modified for a file the cache lost",
                        request: response.request, response: response.response)
                }
                return data
            }
            try store(response.body, for: url, etag: response.response.headerFields[.eTag])
            return response.body
        } catch let error as APIError {
            if let data = cached?.data, error.statusCode == 304 || error.statusCode == nil { return data }
            throw error
        }
    }

    // MARK: Internals

    /// The entry for a URL, marked as just used, with its bytes when `reading`; a file that is gone
    /// or whose size is wrong drops the entry. Without `reading` only the size is checked, so asking
    /// for a path does not read the file.
    private func lookUp(_ url: URL, reading: Bool) -> (entry: Entry, data: Data?)? {
        let key = url.absoluteString
        guard let entry = index.withLock({ $0.entries[key] }) else { return nil }
        let file = directory.appendingPathComponent(entry.file)
        let data = reading ? try? Data(contentsOf: file) : nil
        let size = reading ? data.map { Int64($0.count) } : Self.fileSize(file)
        guard size == entry.size else {
            // Damaged or removed behind our back: forget it so it is fetched again.
            index.withLock { index in
                if index.entries[key]?.file == entry.file {
                    _ = index.forget(key)
                    save(index)
                    index.isDirty = false
                }
            }
            try? FileManager.default.removeItem(at: file)
            return nil
        }
        index.withLock { index in
            guard index.entries[key]?.file == entry.file else { return }
            index.clock += 1
            index.entries[key]?.lastUse = index.clock
            index.isDirty = true
        }
        return (entry, data)
    }

    /// Writes the order reads have changed since the last write.
    public func flush() {
        index.withLock { index in
            guard index.isDirty else { return }
            save(index)
            index.isDirty = false
        }
    }

    deinit { flush() }

    /// Writes the index atomically; called with the lock held so writes stay in order.
    private func save(_ index: Index) {
        guard let data = try? JSONEncoder().encode(index) else { return }
        let temporary = directory.appendingPathComponent(".index-\(UUID().uuidString).partial")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else { return }
        if rename(temporary.path, indexURL.path) != 0 { try? FileManager.default.removeItem(at: temporary) }
    }

    private static func fileSize(_ url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        return (attributes[.size] as? NSNumber)?.int64Value
    }
}
