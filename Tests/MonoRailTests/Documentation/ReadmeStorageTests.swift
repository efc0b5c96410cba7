import Foundation
import MonoRail
import MonoRailSQLite
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// The example of the article "Caching, storage and offline", run against the reference server; a
/// test checks it still reads as in the article.
@Suite("README caching and storage")
struct ReadmeStorageTests {
    @Test("the example matches the README")
    func matchesReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = try ReadmeFormatTests.readmeBlocks()
        let region = source.components(separatedBy: "// README STORAGE BEGIN\n")[1]
            .components(separatedBy: "// README STORAGE END")[0]
        #expect(blocks.contains(ReadmeFormatTests.normalise(region)))
    }

    @Test("the example runs: policies, revalidation, fetchedAt and a wipe")
    func example() async throws {
        try await withTemporaryDirectory { folder in
            try await withHarness { harness in
                let configuration = harness.store.configuration
                // README STORAGE BEGIN
                let storage = try SQLiteStorage(path: folder.appendingPathComponent("app.sqlite").path)
                let store = ResourceStore(configuration: configuration, storage: storage)  // or MonoRail.configure

                let train = try await Train.get(id: 1, policy: .cacheFirst, in: store)  // the cache, else the network
                let trains = try await Train.get(policy: .networkFirst, in: store)  // the cache when the network fails
                let fresh = try await Train.get(id: 1, policy: .cacheFirst(maxAge: .seconds(60)), in: store)
                let cached = try await Train.get(id: 1, policy: .cacheOnly, in: store)  // no request; throws .notCached
                let answer = try await Train.response(policy: .staleWhileRevalidate, in: store)
                print(answer.source)  // cache: the list cached above, now …
                try await answer.revalidation?.value  // … and the same instances updated when the network answers
                if let fetchedAt = train.fetchedAt { print(fetchedAt) }  // when the request that fetched it was sent
                try await store.clear()  // sign-out: memory and disk
                // README STORAGE END
                #expect(trains.contains { $0 === train } && fresh === train && cached === train)
                #expect(answer.source == .cache && answer.value.contains { $0 === train })
                // Signed out: the instance the app still holds is emptied and deleted.
                #expect(train.isDeleted && train.company == nil && train.fetchedAt == nil)
                #expect(store.count == 0)
                await #expect(throws: APIError.self) { try await Train.get(id: 1, policy: .cacheOnly, in: store) }
                #expect(
                    harness.journal.entries == [
                        "GET /trains/1", "GET /trains", "GET /trains",
                    ])
            }
        }
    }
}
