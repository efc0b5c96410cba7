import Foundation
import MonoRail
import MonoRailServer
import Testing

/// The README's model quick start, compiled and run against the reference server (Rails
/// conventions) and against a Django REST framework app (`.djangoREST`). It uses the default store,
/// as the README does, so the runs are serialized and no other test uses that store.
@Suite("README model quick start", .serialized, .timeLimit(.minutes(3)))
struct ModelQuickStartTests {
    static let readme = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("README.md")

    @Test("runs against the reference server")
    func reference() async throws {
        let server = try await ReferenceServer(schema: .trains, configuration: .init(port: 0)).start()
        defer { Task { await server.stop() } }
        MonoRail.configure { $0 = MonoRail.Configuration(retryPolicy: .none) }
        let output = try await quickStart(apiRootURL: server.baseURL)
        try #require(output.count >= 4)
        #expect(output[0] == "true")
        #expect(output[1] == "can't be blank")
        #expect(output.contains("MonoRail Co."))
        #expect(output.last == "deleted")
        #expect(server.journal.entries.filter { $0.hasPrefix("PUT /trains/") }.count == 1)
    }

    @Test("runs against Django REST framework with the .djangoREST preset")
    func django() async throws {
        let server = try await DjangoServer.start()
        defer { server.stop() }
        MonoRail.configure { $0 = MonoRail.Configuration(conventions: .djangoREST, retryPolicy: .none) }
        let output = try await quickStart(apiRootURL: server.baseURL)
        try #require(output.count >= 4)
        #expect(output[0] == "true")
        #expect(output[1] == "This field may not be null.")
        #expect(output.contains("MonoRail Co."))
        #expect(output.last == "deleted")
    }

    @Test("matches the README")
    func matchesReadme() throws {
        let readme = try String(contentsOf: Self.readme, encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        let block = try #require(blocks.first { $0.hasPrefix("import MonoRail\n\n@Resource") })
        let normalise: (String) -> [String] = { text in
            text.split(separator: "\n")
                .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
                .filter {
                    !$0.isEmpty && !$0.hasPrefix("//") && !$0.hasPrefix("import ") && !$0.contains("apiRootURL:")
                }
                .map { $0.replacingOccurrences(of: "print(", with: "record(") }
                .map { $0.replacingOccurrences(of: "QuickStart.", with: "") }
        }
        let models = source.components(separatedBy: "// README MODEL BEGIN\n")[1]
            .components(separatedBy: "// README MODEL END")[0]
        let body = source.components(separatedBy: "// README BEGIN\n")[1].components(separatedBy: "// README END")[0]
        #expect(normalise(models + body) == normalise(block))
    }

    func quickStart(apiRootURL: URL) async throws -> [String] {
        var output: [String] = []
        func record(_ item: Any) { output.append("\(item)") }
        // README BEGIN
        MonoRail.register(apiRootURL: apiRootURL)

        let train = QuickStart.Train()
        train.company = "MonoRail Co."
        train.numberOfCars = 5
        try await train.create()  // POST /trains  {"train": {"company": "MonoRail Co.", …}}

        let sameTrain = try await QuickStart.Train.get(id: train.id ?? 0)  // GET /trains/:id
        record(sameTrain === train)  // true: one live instance per record

        train.maxSpeed = 46.8
        try await train.save()  // PUT /trains/:id

        do {
            try await QuickStart.Train().create()  // no company
        } catch let error as APIError where error.code == .validationFailed {
            record(error.errors["company"].first ?? "")  // can't be blank
        }

        for aTrain in try await QuickStart.Train.get() {  // GET /trains
            record(aTrain.company ?? "")
        }

        try await train.delete()  // DELETE /trains/:id
        record(train.isDeleted ? "deleted" : "still there")
        // README END
        return output
    }
}

/// The README's model, in a namespace of its own.
enum QuickStart {
    // README MODEL BEGIN
    @Resource
    final class Train {
        var company: String?
        var numberOfCars: Int?
        var maxSpeed: Double?
    }
    // README MODEL END
}
