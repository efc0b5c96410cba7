import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// What a record cache is given: the in-memory cache keeps a JSON record's text as it came, SQLite
/// keeps MessagePack in its file; either way a record reads back as its response gave it.
@Suite("Stored records in the form the cache takes", .timeLimit(.minutes(5)))
struct StoredFormatTests {
    enum Kind: String, CaseIterable, Sendable {
        case memory, sqlite
    }

    /// The records of `GET /trains` and the trains embedded records of it, as the response held them.
    static func served(_ harness: TestAPI) async throws -> [RecordKey: JSONValue] {
        let body = try await APIClient(baseURL: harness.baseURL).send(APIRequest(method: .get, path: "/trains")).body
        guard case .object(let envelope) = try JSONParser().parse(body), case .array(let trains)? = envelope["trains"]
        else {
            Issue.record("GET /trains is not {\"trains\": [...]}")
            return [:]
        }
        var records: [RecordKey: JSONValue] = [:]
        for train in trains {
            guard case .object(let fields) = train, let id = fields["id"] else { continue }
            records[RecordKey(model: "train", id: id.description)] = train
            if case .object(let conductor)? = fields["conductor"], let id = conductor["id"] {
                records[RecordKey(model: "conductor", id: id.description)] = .object(conductor)
            }
        }
        return records
    }

    /// What the values of a stored record are, whatever its format.
    static func values(of record: StoredRecord) throws -> JSONValue {
        switch record.format {
        case .json: try JSONParser().parse(record.body)
        case .messagePack: try MessagePackReader().readJSON(record.body)
        }
    }

    @Test("a JSON answer is kept as the cache takes it and reads back as the network gave it", arguments: Kind.allCases)
    func roundTrip(_ kind: Kind) async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("cache.sqlite").path
            try await withReferenceServer(schema: .trains) { harness in
                let memory = InMemoryRecordCache()
                let cache: any RecordCache = kind == .memory ? memory : try SQLiteStorage(path: path)
                let online = try await Spec.Train.get(
                    in: ResourceStore(configuration: harness.store.configuration, storage: cache))
                try await cache.flush()
                // SQLite is read from the file, as a later launch reads it.
                let reading: any RecordCache = kind == .memory ? memory : try SQLiteStorage(path: path)

                let served = try await Self.served(harness)
                let stored = try await reading.records(Array(served.keys))
                #expect(stored.count == served.count)
                for (key, record) in stored {
                    #expect(record.format == (kind == .memory ? .json : .messagePack), "\(key)")
                    #expect(try Self.values(of: record) == served[key], "\(key)")
                }
                if kind == .memory, let record = stored.values.first {
                    // The text itself, not a rendering of it: found byte for byte in the response.
                    let body = try await APIClient(baseURL: harness.baseURL).send(
                        APIRequest(method: .get, path: "/trains")
                    ).body
                    #expect(body.range(of: record.body) != nil)
                }

                let offline = try await Spec.Train.get(
                    policy: .cacheOnly, in: ResourceStore(configuration: harness.store.configuration, storage: reading))
                #expect(offline.map(\.id) == online.map(\.id))
                #expect(offline.map(\.company) == online.map(\.company))
                #expect(offline.map(\.numberOfCars) == online.map(\.numberOfCars))
                #expect(offline.map(\.builtAt) == online.map(\.builtAt))
                #expect(offline.map { $0.cars.map(\.occupancy) } == online.map { $0.cars.map(\.occupancy) })
                #expect(offline.map { $0.conductor?.name } == online.map { $0.conductor?.name })
            }
        }
    }

    @Test("a damaged JSON record is a decoding error naming the cache, not a quiet empty answer")
    func damagedJSON() async throws {
        try await withReferenceServer(schema: .trains) { harness in
            let cache = InMemoryRecordCache()
            let key = RecordKey(model: "train", id: "1")
            try await cache.write(
                [StoredRecord(key: key, body: Data(#"{"id": 1, "company": "#.utf8), fetchedAt: Date(), format: .json)],
                query: nil)
            let store = ResourceStore(configuration: harness.store.configuration, storage: cache)
            let error = await #expect(throws: APIError.self) {
                try await Spec.Train.get(id: 1, policy: .cacheOnly, in: store)
            }
            #expect(error?.code == .decodingFailed)
            #expect(error?.message.contains("not JSON") == true, "\(String(describing: error))")
        }
    }
}
