import Foundation
import MonoRail
import MonoRailServer
import Testing

@testable import MonoRailServerPostgres

@Suite("PostgreSQL statements and values")
struct PostgresSessionTests {
    @Test("? becomes $1, $2, … outside quoted text and identifiers")
    func placeholders() {
        #expect(
            PostgresSession.numberingPlaceholders(#"SELECT '?', "a?b", 'it''s ?' FROM t WHERE x = ? AND y IN (?, ?)"#)
                == #"SELECT '?', "a?b", 'it''s ?' FROM t WHERE x = $1 AND y IN ($2, $3)"#)
        #expect(PostgresSession.numberingPlaceholders("SELECT 1") == "SELECT 1")
    }

    @Test("every column type the store writes reads back as it was written", .timeLimit(.minutes(1)))
    func values() async throws {
        let location = try await PostgresTestDatabase.make()
        let schema = try ValueDecoder().decode(
            ServerSchema.self,
            from: Data(
                #"""
                {"resources": [{"name": "gauge", "fields": [
                    {"name": "label", "type": "string"}, {"name": "count", "type": "integer"},
                    {"name": "ratio", "type": "float"}, {"name": "on", "type": "boolean"},
                    {"name": "seen_at", "type": "datetime"}, {"name": "extra", "type": "json"}]}]}
                """#.utf8))
        try schema.validate()
        let store = try RecordStore(schema: schema, location: location)
        defer { store.close() }
        let gauges = try #require(schema.resource(plural: "gauges"))
        let created = try store.create(
            gauges,
            attributes: [
                "label": .string("ünï ' \" ?"), "count": .int(Int64.max), "ratio": .double(-0.25), "on": .bool(true),
                "seen_at": .string("2026-11-27T10:00:00Z"), "extra": ["a": [1, 2], "b": JSONValue.null],
            ])
        let id = try #require(created["id"]?.intValue)
        let read = try #require(try store.find(gauges, id: String(id)))
        for (name, value) in [
            ("label", JSONValue.string("ünï ' \" ?")), ("count", .int(Int64.max)), ("ratio", .double(-0.25)),
            ("on", .bool(true)), ("seen_at", .string("2026-11-27T10:00:00.000Z")),
            ("extra", ["a": [1, 2], "b": JSONValue.null]),
        ] {
            #expect(read[name] == value, "\(name)")
            #expect(created[name] == value, "\(name) as the create answered")
        }
        #expect(try store.list(gauges, filters: ["on": "true", "count": String(Int64.max)]).total == 1)
        #expect(try store.list(gauges, filters: ["count": "not a number"]).total == 0)
        #expect(try store.list(gauges, filters: ["q": "ÜNÏ"]).total == 1)
    }

    @Test("a postgres:// URL given as a SQLite path is refused, naming the way to use it, not made a file")
    func urlAsPath() throws {
        let error = #expect(throws: SchemaError.self) {
            _ = try ReferenceServer(
                schema: .trains, configuration: .init(databasePath: "postgres://monorail:secret@db.example/app"))
        }
        #expect(error?.description.contains("RecordStore(schema:location:)") == true)
        #expect(error?.description.contains("secret") == false)
        #expect(!FileManager.default.fileExists(atPath: "postgres:"))
    }
}
