import Foundation
import MonoRail
import MonoRailScaffold
import Testing

/// Documents no tool should choke on: every one gives models that compile or a clear failure, never
/// a crash or a hang.
@Suite("Scaffolding from hostile OpenAPI documents", .timeLimit(.minutes(5)))
struct OpenAPIHostileTests {
    /// A JSON response holding `schema`.
    static func returning(_ schema: JSONValue) -> JSONValue {
        ["responses": ["200": ["description": "", "content": ["application/json": ["schema": schema]]]]]
    }

    static func reference(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }

    static func document(paths: [String: JSONValue], schemas: [String: JSONValue], title: String = "Hostile")
        -> Data
    {
        let document: JSONValue = [
            "openapi": "3.1.0", "info": ["title": .string(title), "version": "1"],
            "paths": .object(paths), "components": ["schemas": .object(schemas)],
        ]
        return JSONWriter.serialize(document)
    }

    /// A collection and an item path answering records of `schema`.
    static func resource(_ path: String, _ schema: String) -> [String: JSONValue] {
        [
            path: ["get": returning(["type": "array", "items": reference(schema)])],
            path + "/{id}": ["get": returning(reference(schema))],
        ]
    }

    @Test("names that are no Swift names, keywords, clashes, cycles and unknown formats still give code that compiles")
    func names() async throws {
        let weird: JSONValue = [
            "type": "object",
            "properties": [
                "id": ["type": "integer"], "class": ["type": "string"], "model/authors": ["type": "string"],
                "2fa": ["type": "boolean"], "errors": ["type": "array", "items": ["type": "string"]],
                "first-name": ["type": "string"], "first_name": ["type": "string"], "größe": ["type": "number"],
                "self": ["type": "string"], "Type": ["type": "string"], "": ["type": "string"],
                "status": [
                    "type": "string",
                    "enum": ["non-fiction", "", "1", "rawValue", "default", "A b", "a_b", "A_B", "a var b"],
                ],
                "levels": ["type": "integer", "enum": [1, -2, 3], "default": 3],
                "mixed": ["enum": [1, "a"]],
                "node": Self.reference("Node"), "loop": Self.reference("Loop"), "ping": Self.reference("Ping"),
                "when": ["type": ["string", "null"], "format": "date-time"],
                "odd": ["type": "string", "format": "x-unknown", "default": "a \"quoted\" \\ line\nbreak"],
                "tags": ["type": "array", "items": ["type": "string"]],
                "error_id": ["type": "integer"], "class_room_id": ["type": "integer"],
            ],
        ]
        let schemas: [String: JSONValue] = [
            "class room": weird,
            "Node": ["type": "object", "properties": ["child": Self.reference("Node"), "name": ["type": "string"]]],
            "Loop": Self.reference("Loop"),
            "Ping": ["type": "object", "properties": ["pong": Self.reference("Pong")]],
            "Pong": ["type": "object", "properties": ["ping": Self.reference("Ping"), "at": ["type": "string"]]],
            "Error": ["type": "object", "properties": ["id": ["type": "integer"], "String": ["type": "string"]]],
            "Dangling": ["type": "object", "properties": ["gone": Self.reference("Nowhere")]],
        ]
        var paths = Self.resource("/class-rooms", "class room")
        paths.merge(Self.resource("/errors", "Error")) { $1 }
        paths.merge(Self.resource("/api/v2/danglings", "Dangling")) { $1 }
        let output = try Scaffold.models(
            fromOpenAPI: Self.document(paths: paths, schemas: schemas, title: "1 Wéird / API!"))
        let files = Dictionary(uniqueKeysWithValues: output.files.map { ($0.name, $0.contents) })
        #expect(
            Set(files.keys) == [
                "ClassRoom.swift", "ErrorModel.swift", "Dangling.swift", "Model1WeirdAPIConfiguration.swift",
            ])
        let room = try #require(files["ClassRoom.swift"])
        for line in [
            "var `class`: String?", "@Field(key: \"größe\") var groE: Double?",
            "@Field(key: \"model/authors\") var modelAuthors: String?",
            "@Field(key: \"2fa\") var _2fa: Bool?", "@Field(key: \"errors\") var errors2: [String] = []",
            "@References var error: ErrorModel?", "@Field(key: \"\") var value: String?",
            "var levels: Levels = .value3", "@References var classRoom: ClassRoom?", "case minus2 = -2",
            "case nonFiction = \"non-fiction\"",
            "case rawValueValue = \"rawValue\"", "case `default` = \"default\"", "case aVarB = \"a var b\"",
        ] {
            #expect(room.contains(line), "missing: \(line)\n\(room)")
        }
        #expect(try #require(files["Dangling.swift"]).contains("@Resource(path: \"/api/v2/danglings\")"))
        #expect(output.warnings.contains("ClassRoom.mixed is kept as JSONValue: its values are of mixed types"))
        #expect(
            output.warnings.contains(
                "Dangling.gone is kept as JSONValue: it refers to #/components/schemas/Nowhere, which the document does not have"
            ), "\(output.warnings)")
        let result = try await typecheck(files)
        #expect(result.status == 0, "\(result.output)\n\(files.values.joined(separator: "\n"))")
    }

    @Test(
        "what is not an OpenAPI 3 document in JSON is a clear failure",
        arguments: [
            ("", "empty"), ("openapi: 3.1.0\ninfo:\n  title: x\n", "YAML"), ("[1, 2]", "not JSON"),
            (#"{"swagger": "2.0"}"#, "Swagger 2.0"), (#"{"openapi": "2.0"}"#, "not an OpenAPI 3"),
            (#"{"openapi": "3.1.0", "paths": {"/a": {"get": {}}}}"#, "no resource"),
            (#"{"openapi": "3.1.0", "paths": []}"#, "no resource"), (#"{"openapi": 3}"#, "not an OpenAPI 3"),
            (#"{"openapi": "3.1.0""#, "not valid JSON"),
        ])
    func refused(document: String, reason: String) throws {
        let failure = try #require(throws: Scaffold.Failure.self) {
            try Scaffold.models(fromOpenAPI: Data(document.utf8))
        }
        #expect(failure.description.contains(reason), "\(failure)")
    }

    @Test("bytes that are not UTF-8, nesting 100,000 deep and a 65 MB body are refused, not a crash")
    func malformed() throws {
        var bytes = Data(#"{"openapi": "3.1.0", "info": {"title": ""#.utf8)
        bytes += Data([0xFF, 0xFE, 0xC0, 0x80])
        bytes += Data(#""}, "paths": {}}"#.utf8)
        #expect(throws: Scaffold.Failure.self) { try Scaffold.models(fromOpenAPI: bytes) }
        let deep = Data((#"{"openapi": "3.1.0", "paths": "# + String(repeating: "[", count: 100_000)).utf8)
        let failure = try #require(throws: Scaffold.Failure.self) { try Scaffold.models(fromOpenAPI: deep) }
        #expect(failure.description.contains("not valid JSON"))
        let huge = Data(count: 65 * 1024 * 1024)
        #expect(throws: Scaffold.Failure.self) { try Scaffold.models(fromOpenAPI: huge) }
    }

    @Test("$ref cycles and chains end: a self-reference, a two-step loop, a chain past the bound")
    func cycles() throws {
        var schemas: [String: JSONValue] = [
            "Self": Self.reference("Self"), "A": Self.reference("B"), "B": Self.reference("A"),
            "Record": [
                "type": "object",
                "properties": [
                    "me": Self.reference("Self"), "a": Self.reference("A"), "deep": Self.reference("Chain0"),
                    "all": ["allOf": [Self.reference("Record")]],
                ],
            ],
        ]
        for index in 0..<200 { schemas["Chain\(index)"] = Self.reference("Chain\(index + 1)") }
        let output = try Scaffold.models(
            fromOpenAPI: Self.document(paths: Self.resource("/records", "Record"), schemas: schemas))
        let record = try #require(output.files.first { $0.name == "Record.swift" }?.contents)
        #expect(record.contains("var me: JSONValue?"))
        #expect(record.contains("var deep: JSONValue?"))
    }

    @Test("lists inside {\"data\": […]} get the list key and the envelope's total in the conventions")
    func dataEnvelope() throws {
        let list: JSONValue = [
            "type": "object",
            "properties": [
                "data": ["type": "array", "items": Self.reference("Widget")], "total_count": ["type": "integer"],
            ],
        ]
        let widget: JSONValue = [
            "type": "object", "properties": ["id": ["type": "integer"], "name": ["type": "string"]],
        ]
        let listing: JSONValue = [
            "parameters": [["name": "page", "in": "query"], ["name": "per_page", "in": "query"]],
            "responses": Self.returning(list)["responses"] ?? nil,
        ]
        let output = try Scaffold.models(
            fromOpenAPI: Self.document(paths: ["/widgets": ["get": listing]], schemas: ["Widget": widget]))
        let configuration = try #require(output.files.first { $0.name == "HostileConfiguration.swift" }?.contents)
        #expect(configuration.contains(#"conventions.listKeys = ["results", "items", "data"]"#), "\(configuration)")
        #expect(
            configuration.contains(
                #"style: .pageNumbers(page: "page", size: "per_page"), totalCountKey: "total_count")"#))
    }

    @Test("10,000 schemas and 10,000 resources scaffold, one file each, in one pass")
    func many() throws {
        var schemas: [String: JSONValue] = [:]
        var paths: [String: JSONValue] = [:]
        for index in 0..<10_000 {
            schemas["Thing\(index)"] = [
                "type": "object", "properties": ["id": ["type": "integer"], "name": ["type": "string"]],
            ]
            paths["/things\(index)"] = [
                "get": Self.returning(["type": "array", "items": Self.reference("Thing\(index)")])
            ]
        }
        let output = try Scaffold.models(fromOpenAPI: Self.document(paths: paths, schemas: schemas))
        #expect(output.files.count == 10_001)
        #expect(Set(output.files.map(\.name)).count == 10_001)
    }
}
