import Foundation
import MonoRail
import TestModels
import Testing

/// One table of envelope cases, read by `APIClient`'s decoding and by models: both go through
/// `ResponseLocator`, so both must give the same record or the same kind of error.
@Suite("Envelope rules: one table for APIClient and models")
struct EnvelopeRuleTests {
    /// What reading a body must give: the ids found, or an error code.
    enum Outcome: Equatable, CustomStringConvertible {
        case ids([Int])
        case error(APIError.Code)

        var description: String {
            switch self {
            case .ids(let ids): "ids \(ids)"
            case .error(let code): "error \(code)"
            }
        }
    }

    struct Case: CustomStringConvertible, Sendable {
        var body: String
        var namespace: String? = nil
        var expected: Outcome

        var description: String { "\(namespace.map { "[\($0)] " } ?? "")\(body)" }
    }

    static let recordCases: [Case] = [
        Case(body: #"{"train": {"id": 1}}"#, expected: .ids([1])),
        Case(body: #"{"id": 2, "company": "DB"}"#, expected: .ids([2])),
        Case(body: #"{"train": {"id": 3}, "cars": [{"id": 30}]}"#, expected: .ids([3])),
        Case(body: #"{"data": {"train": {"id": 4}}}"#, namespace: "data", expected: .ids([4])),
        Case(body: #"{"a": {"b": {"id": 5}}}"#, namespace: "a.b", expected: .ids([5])),
        Case(body: #"{"train": {"id": 6}}"#, namespace: "data", expected: .error(.decodingFailed)),
        Case(body: #"{"errors": {"company": ["can't be blank"]}}"#, expected: .error(.validationFailed)),
        Case(body: #"{"train": {"errors": {"company": ["is taken"]}}}"#, expected: .error(.validationFailed)),
        Case(
            body: #"{"data": {"errors": ["the depot is closed"]}}"#, namespace: "data",
            expected: .error(.validationFailed)),
        // A record that happens to carry an `errors` member is still a record.
        Case(body: #"{"id": 8, "errors": {"company": ["stale"]}}"#, expected: .ids([8])),
        Case(body: #"{"train": {"company": "x"}}"#, expected: .error(.decodingFailed)),
        Case(body: #"[{"id": 9}]"#, expected: .error(.decodingFailed)),
    ]

    static let listCases: [Case] = [
        Case(body: #"[{"id": 1}, {"id": 2}]"#, expected: .ids([1, 2])),
        Case(body: #"{"trains": [{"id": 3}], "cars": []}"#, expected: .ids([3])),
        Case(body: #"{"data": [{"id": 4}]}"#, namespace: "data", expected: .ids([4])),
        Case(body: #"{"data": {"trains": [{"id": 5}]}}"#, namespace: "data", expected: .ids([5])),
        Case(body: #"[{"id": 6}]"#, namespace: "data", expected: .error(.decodingFailed)),
        Case(body: #"{"errors": {"base": ["not allowed"]}}"#, expected: .error(.validationFailed)),
        Case(body: #"{"trains": {"id": 7}}"#, expected: .error(.decodingFailed)),
        Case(body: #"{"cars": [{"id": 8}]}"#, expected: .error(.decodingFailed)),
        Case(body: #"{"trains": [{"id": 9}, {"company": "nine"}]}"#, expected: .error(.decodingFailed)),
    ]

    struct Row: Decodable { var id: Int }

    static func outcome(_ body: () throws -> [Int]) -> Outcome {
        do {
            return .ids(try body())
        } catch let error as APIError {
            return .error(error.code)
        } catch {
            Issue.record("not an APIError: \(error)")
            return .ids([])
        }
    }

    static func client(_ namespace: String?) -> APIClient {
        APIClient(
            configuration: .init(baseURL: URL(string: "http://127.0.0.1:9"), envelope: .init(rootNamespace: namespace)))
    }

    static func store(_ namespace: String?) -> ResourceStore {
        ResourceStore(
            configuration: .init(
                apiRootURL: URL(string: "http://127.0.0.1:9"), conventions: .init(rootNamespace: namespace)))
    }

    static func response(_ body: Data, _ client: APIClient, contentType: String = "application/json") -> APIResponse {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = contentType
        return APIResponse(
            request: HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: "/trains"), response: head,
            body: body, decoder: client.responseDecoder, roots: [])
    }

    @Test("a record body", arguments: recordCases)
    func record(_ row: Case) throws {
        let body = Data(row.body.utf8)
        let client = Self.client(row.namespace)
        let viaClient = Self.outcome {
            [try client.responseDecoder.decode(Row.self, from: body, roots: ["train"]).value.id]
        }
        let viaModel = Self.outcome {
            [try Train.merge(recordBody: body, in: Self.store(row.namespace)).id?.intValue ?? -1]
        }
        #expect(viaClient == row.expected, "APIClient: \(row)")
        #expect(viaModel == row.expected, "model: \(row)")
    }

    @Test("a list body, as JSON and as MessagePack", arguments: listCases)
    func list(_ row: Case) throws {
        let body = Data(row.body.utf8)
        let packed = MessagePackWriter.serialize(try JSONParser().parse(body))
        let client = Self.client(row.namespace)
        let viaClient = Self.outcome {
            try client.responseDecoder.decode([Row].self, from: body, roots: ["trains"]).value.map(\.id)
        }
        let viaModel = Self.outcome {
            try Train.merge(listBody: body, in: Self.store(row.namespace)).map { $0.id?.intValue ?? -1 }
        }
        let viaPackedModel = Self.outcome {
            try Train.merge(listBody: packed, contentType: "application/x-msgpack", in: Self.store(row.namespace))
                .map { $0.id?.intValue ?? -1 }
        }
        #expect(viaClient == row.expected, "APIClient: \(row)")
        #expect(viaModel == row.expected, "model: \(row)")
        #expect(viaPackedModel == row.expected, "model, MessagePack: \(row)")
    }

    @Test("side-loads are the members beside the root, for the client and for models")
    func sideloads() throws {
        let body = Data(#"{"train": {"id": 1}, "conductors": [{"id": 5, "name": "Ada", "train_id": 1}]}"#.utf8)
        let envelope = try Self.client(nil).responseDecoder.decode(Row.self, from: body, roots: ["train"])
        #expect(Array(envelope.sideloaded.keys) == ["conductors"])
        let located = try ResponseLocator().locate(in: try JSONParser().parse(body), roots: ["train"], shape: .object)
        #expect(located.path == "$.train")
        #expect(located.root == "train")
        #expect(located.sideloaded.keys.sorted() == ["conductors"])
    }

    @Test("parsing and locating are one call, and its errors carry the request, the response and both bodies")
    func parseAndLocate() throws {
        let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1", path: "/trains/1")
        let head = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"])
        func response(_ body: String) -> APIResponse {
            APIResponse(
                request: request, response: head, body: Data(body.utf8),
                decoder: ResponseDecoder(envelope: .init(rootNamespace: "data")))
        }
        let located = try response(#"{"data": {"train": {"id": 1}}}"#).locate(
            with: ResponseLocator(rootNamespace: "data"), roots: ["train"], shape: .object)
        #expect(located.path == "$.data.train")
        #expect(located.value == .object(["id": .int(1)]))

        let errors = #expect(throws: APIError.self) {
            try response(#"{"data": {"errors": {"name": ["is taken"]}}}"#).locate(
                with: ResponseLocator(rootNamespace: "data"), roots: ["train"], shape: .object)
        }
        #expect(errors?.code == .validationFailed)
        #expect(errors?.request == request)
        #expect(errors?.response?.status == .ok)
        #expect(errors?.rawBody == Data(#"{"data": {"errors": {"name": ["is taken"]}}}"#.utf8))
        #expect(errors?.parsedBody?["data"]?["errors"] != nil)

        let noNamespace = #expect(throws: APIError.self) {
            try response(#"{"train": {"id": 1}}"#).locate(
                with: ResponseLocator(rootNamespace: "data"), roots: ["train"], shape: .object, typeName: "Train")
        }
        #expect(noNamespace?.code == .decodingFailed)
        #expect(noNamespace?.request == request)
        #expect(noNamespace?.parsedBody == .object(["train": .object(["id": .int(1)])]))

        let notJSON = #expect(throws: APIError.self) {
            try response("{").locate(with: ResponseLocator(), roots: ["train"])
        }
        #expect(notJSON?.code == .decodingFailed)
        #expect(notJSON?.rawBody == Data("{".utf8))
        #expect(notJSON?.request == request)
    }

    @Test("a fixed root is required for models: a bare record is refused")
    func fixedRoot() throws {
        var conventions = ServerConventions.objects
        conventions.routes = .rails
        let store = ResourceStore(
            configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9"), conventions: conventions))
        #expect(try Train.merge(recordBody: Data(#"{"object": {"id": 1}}"#.utf8), in: store).id == .int(1))
        let error = #expect(throws: APIError.self) {
            try Train.merge(recordBody: Data(#"{"id": 1}"#.utf8), in: store)
        }
        #expect(error?.code == .decodingFailed)
        #expect(error?.decodingFailure?.reason.contains("\"object\"") == true, "\(String(describing: error))")
    }

    @Test("with the errors member switched off, an errors-only body is read as it is")
    func errorsMemberOff() throws {
        let locator = ResponseLocator(treatsErrorsMemberAsFailure: false)
        let body = try JSONParser().parse(Data(#"{"errors": {"company": ["can't be blank"]}}"#.utf8))
        #expect(try locator.locate(in: body, roots: ["train"]).value == body)
        #expect(throws: APIError.self) { try ResponseLocator().locate(in: body, roots: ["train"]) }
        // Models read the switch from the client configuration: the body is then a record with no id.
        var configuration = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"))
        configuration.client.envelope.treatsErrorsMemberAsFailure = false
        let data = Data(#"{"errors": {"company": ["can't be blank"]}}"#.utf8)
        let error = #expect(throws: APIError.self) {
            try Train.merge(recordBody: data, in: ResourceStore(configuration: configuration))
        }
        #expect(error?.code == .decodingFailed)
        let strict = #expect(throws: APIError.self) {
            try Train.merge(
                recordBody: data, in: ResourceStore(configuration: .init(apiRootURL: URL(string: "http://127.0.0.1:9")))
            )
        }
        #expect(strict?.code == .validationFailed)
    }
}
