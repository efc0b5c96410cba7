import Crypto
import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestServer
import Testing

/// Files travel in models and forms as `multipart/form-data`, checked by real parsers: the
/// reference server's streaming parser and Python's MIME parser.
@Suite("Uploads", .timeLimit(.minutes(5)))
struct UploadModelTests {
    static func randomData(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// Where a test's files go; removed after it.
    let files = TemporaryDirectory()

    @Test("a create answered by a record with no id merges into the instance (ApiModel's upload endpoint)")
    func answerWithoutID() async throws {
        try await withHarness { harness in
            let image = Self.randomData(20_000)
            let avatar = Avatar()
            avatar.file = FileUpload(fileName: "avatar.jpg", mimeType: "image/jpeg", data: image)
            try await avatar.create(in: harness.store)
            #expect(harness.journal.entries == ["POST /upload"])
            #expect(avatar.filename == "avatar.jpg")
            #expect(avatar.size == image.count)
            #expect(avatar.sha256 == Self.sha256(image))
            #expect(avatar.id == nil)
            #expect(!avatar.hasChanges)
            #expect(!avatar.hasErrors)
            #expect(harness.store.count == 0)
            // The server kept the bytes it answered for.
            let url = try #require(avatar.url)
            let api = APIClient(
                configuration: .init(baseURL: harness.server.baseURL, transport: MonoRail.defaultTransport))
            #expect(try await api.send(APIRequest(method: .get, path: APIPath(verbatim: url))).body == image)
        }
    }

    @Test("reads still need an id: a list or a fetch answered without one is a decoding failure")
    func readsNeedAnID() throws {
        let store = ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
        let list = #expect(throws: APIError.self) {
            try Avatar.merge(listBody: Data(#"{"uploads": [{"filename": "a.jpg"}]}"#.utf8), in: store)
        }
        #expect(list?.decodingFailure?.reason == "the record has no id")
        let one = #expect(throws: APIError.self) {
            try Avatar.merge(recordBody: Data(#"{"upload": {"filename": "a.jpg"}}"#.utf8), in: store)
        }
        #expect(one?.decodingFailure?.reason == "the record has no id")
    }

    @Test("a model with a FileUpload is sent as multipart once, then as JSON")
    func modelUpload() async throws {
        try await withHarness { harness in
            let photo = Self.randomData(70_000)
            let conductor = PhotoConductor()
            conductor.name = "Zoë"
            conductor.trainId = 1
            conductor.photo = FileUpload(fileName: #"Zoë "the" conductor\1.jpg"#, mimeType: "image/jpeg", data: photo)
            try await conductor.create(in: harness.store)
            let first = try #require(harness.journal.requests.first)
            #expect(first.contentType?.hasPrefix("multipart/form-data; boundary=") == true)

            // The server stored the bytes and answered with the file, which is now remote.
            let stored = try #require(conductor.photo)
            #expect(!stored.isLocal)
            #expect(stored.fileName == #"Zoë "the" conductor\1.jpg"#)
            #expect(stored.mimeType == "image/jpeg")
            #expect(stored.size == Int64(photo.count))
            #expect(!conductor.hasChanges)
            let record = try harness.server.store.find("conductors", id: "\(try #require(conductor.id))")
            #expect(record?["photo"]?["sha256"]?.stringValue == Self.sha256(photo))

            // The stored file downloads byte for byte.
            let url = try #require(stored.remoteURL)
            let api = APIClient(
                configuration: .init(baseURL: harness.server.baseURL, transport: MonoRail.defaultTransport))
            #expect(try await api.send(APIRequest(method: .get, path: APIPath(verbatim: url.path))).body == photo)

            // Saving again sends no file: JSON, and the photo is kept.
            conductor.name = "Zoë B."
            try await conductor.save()
            #expect(harness.journal.requests.last?.contentType == "application/json")
            #expect(conductor.photo?.remoteURL == url)
        }
    }

    @Test("a file streamed from disk, with upload progress")
    func streamedFromDisk() async throws {
        try await withHarness { harness in
            let bytes = Self.randomData(3 * 1024 * 1024 + 17)
            let file = files.path("big.bin")
            try bytes.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let conductor = PhotoConductor()
            conductor.name = "Disk"
            conductor.trainId = 1
            conductor.photo = try FileUpload(fileURL: file)
            let progress = ProgressLog()
            try await conductor.create(in: harness.store, uploadProgress: { progress.append($0) })
            let record = try harness.server.store.find("conductors", id: "\(try #require(conductor.id))")
            #expect(record?["photo"]?["sha256"]?.stringValue == Self.sha256(bytes))
            #expect(record?["photo"]?["file_name"]?.stringValue == file.lastPathComponent)
            #expect(record?["photo"]?["content_type"]?.stringValue == "application/octet-stream")
            let reports = progress.values
            #expect(reports.count > 2)
            let last = try #require(reports.last)
            #expect(last.completedBytes == last.totalBytes)
            #expect((last.totalBytes ?? 0) > Int64(bytes.count))
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        }
    }

    @Test("Python's MIME parser reads the body: names, file names with quotes and non-ASCII, bytes")
    func pythonParser() async throws {
        let inMemory = Self.randomData(3000)
        let onDisk = Self.randomData(200_000)
        let file = files.path("disk.bin")
        try onDisk.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartFormData()
        form.append("MonoRail Co. ✓", name: "train[company]")
        form.append(FileUpload(fileName: #"a "quoted" näme.txt"#, data: inMemory), name: "train[photo]")
        form.append(try FileUpload(fileURL: file, fileName: "東京 report.pdf", mimeType: "application/pdf"), name: "doc")
        form.append("", name: "empty")
        let bodyFile = files.path("body")
        #expect(FileManager.default.createFile(atPath: bodyFile.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: bodyFile) }
        let handle = try FileHandle(forWritingTo: bodyFile)
        for try await chunk in try form.body().chunks(size: 4096) { try handle.write(contentsOf: chunk) }
        try handle.close()

        let script = repositoryRoot.appendingPathComponent("Tests/MonoRailTests/Support/parse_multipart.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, bodyFile.path, form.contentType]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = await offPool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        #expect(process.terminationStatus == 0)
        let parts = try #require(try JSONParser().parse(data).arrayValue)
        #expect(parts.count == 4)
        #expect(parts[0]["name"] == "train[company]")
        #expect(parts[0]["filename"] == .null)
        #expect(parts[0]["sha256"]?.stringValue == Self.sha256(Data("MonoRail Co. ✓".utf8)))
        #expect(parts[1]["name"] == "train[photo]")
        #expect(parts[1]["filename"] == #"a "quoted" näme.txt"#)
        #expect(parts[1]["content_type"] == "application/octet-stream")
        #expect(parts[1]["sha256"]?.stringValue == Self.sha256(inMemory))
        #expect(parts[2]["filename"] == "東京 report.pdf")
        #expect(parts[2]["content_type"] == "application/pdf")
        #expect(parts[2]["sha256"]?.stringValue == Self.sha256(onDisk))
        #expect(parts[3]["size"] == 0)
    }

    @Test("the reference server's parser reads the same names and bytes")
    func serverParser() async throws {
        try await withHarness { harness in
            let bytes = Self.randomData(50_000)
            var form = MultipartFormData()
            form.append("ü", name: "title")
            form.append(
                FileUpload(fileName: #"x "y"; z\ä.bin"#, mimeType: "application/x-test", data: bytes), name: "file")
            let api = APIClient(
                configuration: .init(baseURL: harness.server.baseURL, transport: MonoRail.defaultTransport))
            let reply = try await api.send(APIRequest(method: .post, path: "/uploads", body: .multipart(form))).json()
            let upload = try #require(reply["uploads"]?[0])
            #expect(upload["filename"] == #"x "y"; z\ä.bin"#)
            #expect(upload["content_type"] == "application/x-test")
            #expect(upload["sha256"]?.stringValue == Self.sha256(bytes))
            #expect(reply["fields"]?["title"] == "ü")
        }
    }

    @Test("a 100 MB upload streams from disk: memory stays far below its size")
    func hundredMegabytes() async throws {
        let file = files.path("100mb.bin")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try FileHandle(forWritingTo: file)
        var hasher = SHA256()
        let block = Self.randomData(1 << 20)
        for index in 0..<100 {
            var chunk = block
            chunk[0] = UInt8(index)
            hasher.update(data: chunk)
            try writer.write(contentsOf: chunk)
        }
        try writer.close()
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        // `monorail upload` sends it in a process of its own, so its peak memory is the client's
        // alone, not the test run's; Python's parser answers in a third (the reference server
        // parses a byte at a time, slowly in debug builds).
        let parser = try PythonMultipartServer()
        defer { parser.stop() }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("monorail")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the monorail executable first")
        func upload(_ file: URL) async throws -> [String] {
            let process = Process()
            process.executableURL = binary
            process.arguments = [
                "upload", file.path, "--to", parser.baseURL.absoluteString + "/", "--mime-type", "application/x-big",
                "--peak-memory",
            ]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = await offPool {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                return data
            }
            #expect(process.terminationStatus == 0)
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        func peak(_ lines: [String]) throws -> Int {
            try #require(
                lines.last { $0.hasPrefix("peak resident memory: ") }.flatMap { Int($0.split(separator: " ")[3]) })
        }
        let lines = try await upload(file)
        #expect(lines.filter { $0.hasPrefix("uploaded ") }.count == 11)  // 0%, 10%, …, 100%
        let reply = try JSONParser().parse(Data((lines.first { $0.hasPrefix("[") } ?? "").utf8))
        #expect(reply[0]?["sha256"]?.stringValue == digest)
        #expect(reply[0]?["size"]?.intValue == 100 << 20)
        #expect(reply[0]?["content_type"] == "application/x-big")
        // The same command with a 3-byte file is the baseline: the runtime and its libraries.
        let small = files.path("small.bin")
        try Data("abc".utf8).write(to: small)
        defer { try? FileManager.default.removeItem(at: small) }
        let baseline = try peak(try await upload(small))
        let growth = try peak(lines) - baseline
        #expect(growth < 32 << 20, "uploading 100 MB took \(growth >> 20) MB more than uploading 3 bytes")
    }
}

/// `parse_multipart.py --serve`: Python's MIME parser behind a loopback HTTP server.
final class PythonMultipartServer {
    let baseURL: URL
    private let process: Process
    private let input: Pipe

    init() throws {
        let script = repositoryRoot.appendingPathComponent("Tests/MonoRailTests/Support/parse_multipart.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--serve"]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)), let url = URL(string: "http://127.0.0.1:\(port)")
        else {
            process.terminate()
            throw Failure("the Python multipart server did not start")
        }
        self.baseURL = url
        self.process = process
        self.input = input
    }

    /// Closes its input; it exits on its own, unwaited for (see ``offPool(_:)``).
    func stop() {
        try? input.fileHandleForWriting.close()
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Progress reports collected from any thread.
final class ProgressLog: Sendable {
    private let reports = Locked<[TransferProgress]>([])
    func append(_ progress: TransferProgress) { reports.withLock { $0.append(progress) } }
    var values: [TransferProgress] { reports.withLock { $0 } }
}
