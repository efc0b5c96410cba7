import Foundation
import MonoRail
import TestServer
import Testing

/// The client layer's quick start (the article "Using the client layer"), compiled and run against
/// the test server. The only difference from the article is the base URL; a test checks the two
/// stay the same otherwise.
@Suite("Client layer quick start", .timeLimit(.minutes(5)))
struct QuickStartTests {
    static let article = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/MonoRailClient/Documentation.docc/ClientLayer.md")

    @Test("runs against a real server")
    func runs() async throws {
        let server = try await TestServer.shared()
        let output = try await quickStart(baseURL: server.baseURL)
        #expect(output.validationMessages == ["Company can't be blank"])
        #expect(output.companyErrors == ["can't be blank"])
        #expect(output.createdID != nil)
        #expect(output.listed >= 1)
    }

    @Test("matches the article")
    func matchesArticle() throws {
        let readme = try String(contentsOf: Self.article, encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        let quickStart = try #require(blocks.first { $0.hasPrefix("import MonoRail\n") && $0.contains("APIClient(") })
        let normalise: (String) -> [String] = { text in
            text.split(separator: "\n")
                .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
                .filter { !$0.isEmpty && !$0.hasPrefix("//") && !$0.hasPrefix("import ") && !$0.contains("baseURL:") }
                .map { $0.replacingOccurrences(of: "print(", with: "record(") }
        }
        let expected = normalise(quickStart)
        let body = source.components(separatedBy: "// ARTICLE BEGIN\n")[1].components(separatedBy: "// ARTICLE END")[0]
        #expect(normalise(body) == expected)

        let repositoryBlock = try #require(blocks.first { $0.hasPrefix("struct TrainsRepository") })
        let repositorySource = source.components(separatedBy: "// ARTICLE REPOSITORY BEGIN\n")[1]
            .components(separatedBy: "// ARTICLE REPOSITORY END")[0]
        #expect(normalise(repositorySource) == normalise(repositoryBlock))
    }

    @Test("the repository example lists trains")
    func repository() async throws {
        let server = try await TestServer.shared()
        let client = APIClient(baseURL: server.baseURL, transport: MonoRail.defaultTransport)
        _ = try await quickStart(baseURL: server.baseURL)
        let trains = try await ReadmeExample.TrainsRepository(client: client).trains(of: "MonoRail Co.").value
        #expect(!trains.isEmpty)
        #expect(trains.allSatisfy { $0.company == "MonoRail Co." })
    }

    struct Output {
        var createdID: Int?
        var listed = 0
        var companyErrors: [String] = []
        var validationMessages: [String] = []
    }

    func quickStart(baseURL: URL) async throws -> Output {
        var output = Output()
        func record(_ items: Any...) {
            if let messages = items.first as? [String] {
                if messages.first?.hasPrefix("Company") == true {
                    output.validationMessages = messages
                } else {
                    output.companyErrors = messages
                }
            } else if let count = items.first as? Int {
                output.listed = count
                output.createdID = items.last as? Int
            }
        }
        // ARTICLE BEGIN
        struct Train: Codable, Sendable {
            var id: Int?
            var company: String
            var numberOfCars: Int  // "number_of_cars" on the wire
            var builtAt: Date?  // ISO 8601, with or without fractional seconds, or Rails' format
        }

        let api = APIClient(
            configuration: .init(
                baseURL: baseURL,
                transport: MonoRail.defaultTransport,
                middleware: [.headers([.authorization: "Bearer my-token"])]
            ))

        // POST /trains  {"train": {"company": "MonoRail Co.", "number_of_cars": 5}}
        let train: Train = try await api.post(
            "/trains", body: Train(company: "MonoRail Co.", numberOfCars: 5), root: "train")

        // GET /trains?company=MonoRail%20Co.  →  {"trains": [...]}
        let trains: [Train] = try await api.get("/trains", parameters: ["company": "MonoRail Co."], root: "trains")
        record(trains.count, train.id ?? 0)

        // A 422 comes back typed, readable per field and as sentences.
        do {
            let _: Train = try await api.post("/trains", body: Train(company: "", numberOfCars: 1), root: "train")
        } catch let error as APIError where error.code == .validationFailed {
            record(error.errors["company"])  // ["can't be blank"]
            record(error.errors.fullMessages)  // ["Company can't be blank"]
        }
        // ARTICLE END
        return output
    }
}

/// The article's repository example, in a namespace of its own so its `Train` is the article's.
enum ReadmeExample {
    struct Train: Codable, Sendable {
        var id: Int?
        var company: String
        var numberOfCars: Int
    }

    // ARTICLE REPOSITORY BEGIN
    struct TrainsRepository: Repository {
        let client: APIClient
        func trains(of company: String) -> RequestHandle<[Train]> {
            request(.get, "/trains", parameters: ["company": .string(company)], root: "trains")
        }
    }
    // ARTICLE REPOSITORY END
}
