import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// The examples of the article "Formats, uploads and files", compiled here and run where they do
/// not touch the default store (other suites own it); a test checks each one still reads as in the
/// article. ``readmeBlocks()`` serves every suite that checks README and article examples.
@Suite("README formats and uploads")
struct ReadmeFormatTests {
    /// Each README block of the section, as marked regions of this file read in order.
    static let blocks = [["FORMAT CONFIG"], ["FORMAT MODEL"], ["CODEC"], ["UPLOAD MODEL", "UPLOAD"], ["DOWNLOAD"]]

    /// Every Swift block of the README and of the DocC articles, normalised.
    static func readmeBlocks() throws -> [[String]] { try DocumentationBlocks.all() }

    @Test("the examples match the README")
    func matchesReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = try Self.readmeBlocks()
        for regions in Self.blocks {
            var code: [String] = []
            for region in regions {
                code += try #require(DocumentationBlocks.region(region, of: source), "no region \(region)")
            }
            #expect(blocks.contains(code), "README block \(regions) differs from the tested code")
        }
    }

    static func normalise(_ text: String) -> [String] { DocumentationBlocks.normalise(text) }

    // Compiled, not run: it changes the default store.
    func formatConfiguration() {
        // README FORMAT CONFIG BEGIN
        MonoRail.configure { $0.format = .messagePack }  // application/x-msgpack both ways
        // README FORMAT CONFIG END
    }

    @Test("the codec example round-trips")
    func codec() throws {
        struct Train: Codable, Equatable {
            var company: String
            var numberOfCars: Int
        }
        let original = Train(company: "MonoRail Co.", numberOfCars: 5)
        func example(_ train: Train) throws -> (Train, MessagePackValue) {
            // README CODEC BEGIN
            let bytes = try MessagePackEncoder(keyMapping: .snakeCase).encode(train)
            let copy = try MessagePackDecoder(keyMapping: .snakeCase).decode(Train.self, from: bytes)
            let tree = try MessagePackReader().read(bytes)  // MessagePackValue, ext and timestamps kept
            // README CODEC END
            return (copy, tree)
        }
        let (copy, tree) = try example(original)
        #expect(copy == original)
        #expect(tree["number_of_cars"] == 5)
    }

    // Compiled, not run: it uses the default store; UploadModelTests runs the same calls.
    func upload() async throws {
        // README UPLOAD BEGIN
        let conductor = try await Conductor.get(id: 1)
        conductor.photo = try FileUpload(fileURL: URL(fileURLWithPath: "/tmp/bill.jpg"), mimeType: "image/jpeg")
        // or FileUpload(fileName: "bill.jpg", mimeType: "image/jpeg", data: jpeg); the default type is
        // application/octet-stream
        try await conductor.save(uploadProgress: { print($0.completedBytes, "of", $0.totalBytes ?? 0) })
        print(conductor.photo?.remoteURL ?? "")  // /uploads/…
        // README UPLOAD END
    }

    @Test("the download and file cache example runs")
    func download() async throws {
        try await withHarness { harness in
            let bytes = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0) })
            var form = MultipartFormData()
            form.append(FileUpload(fileName: "x.bin", data: bytes), name: "file")
            let api = APIClient(
                configuration: .init(baseURL: harness.server.baseURL, transport: MonoRail.defaultTransport))
            let reply = try await api.send(APIRequest(method: .post, path: "/uploads", body: .multipart(form))).json()
            let id = try #require(reply["uploads"]?[0]?["stored_as"]?.stringValue)
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("monorail-readme-\(UUID())")
            defer { try? FileManager.default.removeItem(at: root) }
            let destination = root.appendingPathComponent("x.bin")
            let cachesURL = root
            // README DOWNLOAD BEGIN
            let download = try await api.download(
                "/uploads/\(id)", to: destination, resume: true,  // continues a partial file with Range
                options: RequestOptions(downloadProgress: { print($0.completedBytes) }))

            let cache = try FileCache(directory: cachesURL.appendingPathComponent("files"), maxBytes: 50 << 20)
            let avatar = try await cache.data(from: "/uploads/\(id)", using: api)
            // README DOWNLOAD END
            #expect(download.size == 5000)
            #expect(avatar == bytes)
        }
    }
}

/// The README's models, in a namespace of their own.
extension ReadmeFormatTests {
    // README FORMAT MODEL BEGIN
    @Resource
    final class Telemetry {
        var speed: Double?
        static func configure(_ configuration: inout MonoRail.Configuration) {
            configuration.format = .formURLEncoded  // telemetry[speed]=46.8, Rails bracket nesting
        }
    }
    // README FORMAT MODEL END

    // README UPLOAD MODEL BEGIN
    @Resource
    final class Conductor {
        var name: String?
        var photo: FileUpload?
    }
    // README UPLOAD MODEL END
}
