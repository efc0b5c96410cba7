import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Testing

@Suite("Downloads and the file cache")
struct FileCacheTests {
    let files = TemporaryDirectory()

    /// A new directory, removed after the test.
    func directory() -> URL {
        files.path("cache-\(UUID().uuidString)")
    }

    // The fallback never applies: the name is a plain word.
    static func url(_ name: String) -> URL { URL(string: "http://example.test/files/\(name)") ?? URL(filePath: name) }

    /// Uploads bytes to the reference server and returns the path it serves them at.
    static func upload(_ bytes: Data, to harness: TestAPI) async throws -> (APIClient, String) {
        let api = APIClient(configuration: .init(baseURL: harness.server.baseURL, transport: MonoRail.defaultTransport))
        var form = MultipartFormData()
        form.append(FileUpload(fileName: "file.bin", data: bytes), name: "file")
        let reply = try await api.send(APIRequest(method: .post, path: "/uploads", body: .multipart(form))).json()
        return (api, try #require(reply["uploads"]?[0]?["url"]?.stringValue))
    }

    @Test(
        "download to a file with progress, streamed past the body limit, then resume a partial file",
        arguments: ["AsyncHTTPClient", "URLSession"])
    func download(transportName: String) async throws {
        try await withHarness { harness in
            let bytes = UploadModelTests.randomData(300_000)
            let (_, path) = try await Self.upload(bytes, to: harness)
            // Bodies are collected up to 64 KB here: only a streamed download can bring 300 KB.
            let transport: any Transport =
                transportName == "URLSession" ? URLSessionTransport.shared : MonoRail.defaultTransport
            let api = APIClient(
                configuration: .init(
                    baseURL: harness.server.baseURL, transport: transport, maxResponseBodySize: 64 << 10))
            let tooLarge = await #expect(throws: APIError.self) {
                try await api.send(APIRequest(method: .get, path: APIPath(verbatim: path)))
            }
            #expect(tooLarge?.code == .responseTooLarge)

            let destination = directory().appendingPathComponent("out/file.bin")
            let progress = ProgressLog()
            let first = try await api.download(
                APIPath(verbatim: path), to: destination,
                options: RequestOptions(downloadProgress: { progress.append($0) }))
            #expect(try Data(contentsOf: destination) == bytes)
            #expect(first.size == 300_000)
            #expect(first.resumedFrom == 0)
            #expect(progress.values.last?.completedBytes == 300_000)
            #expect(progress.values.count > 1)

            // Cut the file short and resume: only the rest is sent.
            try bytes.prefix(120_000).write(to: destination)
            let resumed = try await api.download(APIPath(verbatim: path), to: destination, resume: true)
            #expect(resumed.resumedFrom == 120_000)
            #expect(resumed.response.status.code == 206)
            #expect(try Data(contentsOf: destination) == bytes)

            // A missing file is a typed error and leaves the destination as it was, with no
            // temporary file behind.
            let error = await #expect(throws: APIError.self) {
                try await api.download("/uploads/\(UUID().uuidString)", to: destination)
            }
            #expect(error?.statusCode == 404)
            #expect(try Data(contentsOf: destination) == bytes)
            let leftovers = try FileManager.default.contentsOfDirectory(
                atPath: destination.deletingLastPathComponent().path)
            #expect(leftovers == ["file.bin"])
        }
    }

    @Test("least recently used out first, within the size bound")
    func eviction() throws {
        let cache = try FileCache(directory: directory(), maxBytes: 1000)
        try cache.store(Data(repeating: 1, count: 400), for: Self.url("a"))
        try cache.store(Data(repeating: 2, count: 400), for: Self.url("b"))
        #expect(cache.data(for: Self.url("a")) == Data(repeating: 1, count: 400))  // a is now the newest
        try cache.store(Data(repeating: 3, count: 400), for: Self.url("c"))
        #expect(cache.data(for: Self.url("b")) == nil)
        #expect(cache.urlsByLastUse == [Self.url("a"), Self.url("c")])
        #expect(cache.totalBytes == 800)
        // Too large for the whole cache: not stored, nothing evicted.
        try cache.store(Data(count: 1001), for: Self.url("huge"))
        #expect(cache.data(for: Self.url("huge")) == nil)
        #expect(cache.count == 2)
        // Replacing an entry frees its old file.
        try cache.store(Data(repeating: 4, count: 100), for: Self.url("a"))
        #expect(cache.totalBytes == 500)
        let files = try FileManager.default.contentsOfDirectory(atPath: cache.directory.path)
        #expect(files.filter { $0 != "index.json" }.count == 2)
    }

    @Test("entries, ETags and their order survive a restart; files are the owner's only")
    func restart() throws {
        let directory = self.directory()
        do {
            let cache = try FileCache(directory: directory, maxBytes: 10_000)
            try cache.store(Data("one".utf8), for: Self.url("1"), etag: "\"e1\"")
            try cache.store(Data("two".utf8), for: Self.url("2"))
            _ = cache.data(for: Self.url("1"))  // 1 is now the most recently used
        }
        let reopened = try FileCache(directory: directory, maxBytes: 10_000)
        #expect(reopened.urlsByLastUse == [Self.url("2"), Self.url("1")])
        #expect(reopened.data(for: Self.url("2")) == Data("two".utf8))
        #expect(reopened.etag(for: Self.url("1")) == "\"e1\"")
        let file = try #require(reopened.fileURL(for: Self.url("1")))
        let fileMode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(fileMode?.intValue == 0o600)
        let index = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent("index.json").path)
        #expect((index[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let directoryMode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions]
        #expect((directoryMode as? NSNumber)?.intValue == 0o700)
    }

    @Test("a corrupt index or file is ignored and replaced")
    func corruption() throws {
        let directory = self.directory()
        do {
            let cache = try FileCache(directory: directory, maxBytes: 10_000)
            try cache.store(Data("alpha".utf8), for: Self.url("a"))
            try cache.store(Data("beta".utf8), for: Self.url("b"))
            // A damaged file: dropped on read, so the next use fetches it again.
            let file = try #require(cache.fileURL(for: Self.url("b")))
            try Data("b".utf8).write(to: file)
            #expect(cache.data(for: Self.url("b")) == nil)
            #expect(cache.count == 1)
            try cache.store(Data("beta 2".utf8), for: Self.url("b"))
            #expect(cache.data(for: Self.url("b")) == Data("beta 2".utf8))
        }
        // An index naming a file outside the cache: the entry is dropped and the file left alone.
        let outside = self.directory()
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: outside.appendingPathComponent("victim"))
        let hostile =
            #"{"clock":1,"entries":{"http://x/y":{"file":"../\#(outside.lastPathComponent)/victim","size":4,"lastUse":1}}}"#
        try Data(hostile.utf8).write(to: directory.appendingPathComponent("index.json"))
        #expect(try FileCache(directory: directory, maxBytes: 10_000).count == 0)
        #expect(try Data(contentsOf: outside.appendingPathComponent("victim")) == Data("keep".utf8))
        // A damaged index: the cache starts empty and deletes the files it no longer knows.
        try Data("{not json".utf8).write(to: directory.appendingPathComponent("index.json"))
        let reopened = try FileCache(directory: directory, maxBytes: 10_000)
        #expect(reopened.count == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["index.json"])
        try reopened.store(Data("again".utf8), for: Self.url("a"))
        #expect(reopened.data(for: Self.url("a")) == Data("again".utf8))
    }

    @Test("concurrent readers and writers keep the cache whole")
    func concurrency() async throws {
        let cache = try FileCache(directory: directory(), maxBytes: 20_000)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for round in 0..<40 {
                        let key = Self.url("k\((worker + round) % 12)")
                        let value = Data(repeating: UInt8(worker), count: 500 + round * 10)
                        try cache.store(value, for: key)
                        if let read = cache.data(for: key) {
                            // Whole files only: every byte is one writer's.
                            #expect(Set(read).count == 1)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(cache.totalBytes <= 20_000)
        let reopened = try FileCache(directory: cache.directory, maxBytes: 20_000)
        #expect(reopened.count == cache.count)
        for url in reopened.urlsByLastUse {
            let data = try #require(reopened.data(for: url))
            #expect(Set(data).count == 1)
        }
    }

    @Test("a named file's name goes with its file: names never outgrow the files kept")
    func namesFollowFiles() async throws {
        try await withHarness { harness in
            let (api, first) = try await Self.upload(UploadModelTests.randomData(600), to: harness)
            let (_, second) = try await Self.upload(UploadModelTests.randomData(600), to: harness)
            let directory = self.directory()
            let cache = try FileCache(directory: directory, maxBytes: 1000)
            _ = try await cache.file(APIPath(verbatim: first), named: "train/1/photo", using: api)
            _ = try await cache.file(APIPath(verbatim: second), named: "train/2/photo", using: api)
            // The second file evicted the first, and the first's name with it.
            #expect(cache.count == 1)
            let index = try Data(contentsOf: directory.appendingPathComponent("index.json"))
            let names = (try JSONSerialization.jsonObject(with: index) as? [String: Any])?["names"]
            #expect(
                names as? [String: String] == [
                    "train/2/photo": try api.url(for: APIPath(verbatim: second)).absoluteString
                ])
            // Reopened, the name still finds its file with no request.
            let requests = harness.journal.count
            let reopened = try FileCache(directory: directory, maxBytes: 1000)
            _ = try await reopened.file(APIPath(verbatim: second), named: "train/2/photo", using: api)
            #expect(harness.journal.count == requests)
        }
    }

    @Test("revalidated with the ETag: a 304 keeps the cached copy")
    func revalidation() async throws {
        let uploads = directory()
        try await withHarness(server: .init(uploadsDirectory: uploads)) { harness in
            let bytes = UploadModelTests.randomData(10_000)
            let (api, path) = try await Self.upload(bytes, to: harness)
            let cache = try FileCache(directory: directory(), maxBytes: 1 << 20)
            harness.journal.reset()
            #expect(try await cache.data(from: APIPath(verbatim: path), using: api) == bytes)
            let url = try api.url(for: APIPath(verbatim: path))
            let etag = try #require(cache.etag(for: url))
            #expect(try await cache.data(from: APIPath(verbatim: path), using: api) == bytes)
            #expect(harness.journal.requests.map(\.ifNoneMatch) == [nil, etag])
            // The server lost the file: the error says so rather than serving a stale copy.
            let stored = uploads.appendingPathComponent(
                String(path.split(separator: "/").last ?? ""))
            try FileManager.default.removeItem(at: stored)
            let error = await #expect(throws: APIError.self) {
                try await cache.data(from: APIPath(verbatim: path), using: api)
            }
            #expect(error?.statusCode == 404)
        }
    }
}
