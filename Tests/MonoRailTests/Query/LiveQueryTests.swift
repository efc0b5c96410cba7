import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import Testing

/// Live queries against the reference server: membership and order kept true by local changes,
/// with the server's journal showing no request beyond the changes' own.
@Suite("Live queries", .timeLimit(.minutes(5)))
struct LiveQueryTests {
    @Test("creates, records first seen elsewhere, edits in and out of the filter, and deletes, with no extra request")
    func membership() async throws {
        try await withHarness { harness in
            let store = harness.store
            let trains = try await Train.query(
                where: ["company": "MonoRail Co."], order: [.descending("max_speed")], in: store)
            #expect(trains.instances.map(\.id) == [1])
            #expect(harness.journal.entries.last?.contains("company=MonoRail") == true)
            #expect(harness.journal.entries.last?.contains("order=-max_speed") == true)
            harness.journal.reset()

            // A create here joins in its place: faster than train 1 (46.8), so first.
            let fast = Train()
            fast.company = "MonoRail Co."
            fast.maxSpeed = 120
            try await fast.create(in: store)
            #expect(trains.instances.map(\.id) == [fast.id, 1])
            #expect(harness.journal.entries == ["POST /trains"])

            // Created through another store: joins once this store sees it in any response.
            let other = ResourceStore(configuration: store.configuration)
            let elsewhere = Train()
            elsewhere.company = "MonoRail Co."
            elsewhere.maxSpeed = 80
            try await elsewhere.create(in: other)
            let elsewhereID = try #require(elsewhere.id)
            #expect(trains.instances.count == 2)
            harness.journal.reset()
            let seen = try await Train.get(id: elsewhereID, in: store)
            #expect(trains.instances.map(\.id) == [fast.id, seen.id, 1])
            #expect(harness.journal.count == 1)

            // An edit that moves a record out leaves at once, saved or not; one that moves it in joins.
            harness.journal.reset()
            let first = try #require(store.instance(of: Train.self, id: 1))
            first.company = "Elsewhere"
            #expect(trains.instances.map(\.id) == [fast.id, seen.id])
            try await first.save()
            #expect(trains.instances.map(\.id) == [fast.id, seen.id])
            let second = try await Train.get(id: 2, in: store)
            second.company = "MonoRail Co."
            #expect(trains.instances.map(\.id) == [second.id, fast.id, seen.id])  // 300 km/h
            // An edit of the sort key moves it.
            second.maxSpeed = 10
            #expect(trains.instances.map(\.id) == [fast.id, seen.id, second.id])
            second.revert()
            #expect(trains.instances.map(\.id) == [fast.id, seen.id])

            // A delete leaves.
            try await fast.delete()
            #expect(trains.instances.map(\.id) == [seen.id])
            #expect(
                harness.journal.entries == [
                    "PUT /trains/1", "GET /trains/2", "DELETE /trains/\(fast.id?.description ?? "")",
                ])

            // What the server answers agrees.
            try await trains.refresh()
            #expect(trains.instances.map(\.id) == [seen.id])
        }
    }

    @Test("IN and ranges, sent in brackets and evaluated here")
    func conditions() async throws {
        try await withHarness { harness in
            let store = harness.store
            let trains = try await Train.query(
                where: ["company": ["MonoRail Co.", "Deutsche Bahn AG"], "max_speed": .between(40, 200)],
                order: [.ascending("max_speed")], in: store)
            #expect(trains.instances.map(\.id) == [1])
            let line = try #require(harness.journal.entries.last)
            #expect(line.contains("company%5B%5D=Deutsche") && line.contains("max_speed%5Bgte%5D=40"), "\(line)")
            let made = Train()
            made.company = "Deutsche Bahn AG"
            made.maxSpeed = 150
            try await made.create(in: store)
            #expect(trains.instances.map(\.id) == [1, made.id])
            made.maxSpeed = 201
            #expect(trains.instances.map(\.id) == [1])
            made.maxSpeed = 200
            #expect(trains.instances.map(\.id) == [1, made.id])
            made.company = "SNCF"
            #expect(trains.instances.map(\.id) == [1])
            try await trains.refresh()
            #expect(trains.instances.map(\.id) == [1])

            let open = try await Train.query(where: ["max_speed": .greaterThan(46.8)], in: store)
            #expect(open.instances.map(\.id) == [2, made.id])
        }
    }

    @Test("a key the query cannot evaluate makes it refetch after a change, once")
    func refetches() async throws {
        try await withHarness { harness in
            let store = harness.store
            // `q` is the reference server's search: no field of Train.
            let found = try await Train.query(where: ["q": "Mono"], in: store)
            #expect(found.instances.map(\.id) == [1])
            let made = Train()
            made.company = "Monorail Two"
            try await made.create(in: store)
            // The create is followed by one refetch, in the background.
            for _ in 0..<200 where found.instances.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(found.instances.map(\.id) == [1, made.id])
            try await Task.sleep(for: .milliseconds(100))
            #expect(harness.journal.entries.filter { $0.hasPrefix("GET /trains?q=") }.count == 2)
        }
    }

    @Test("iterating gives the list now, then each change")
    func snapshots() async throws {
        try await withHarness { harness in
            let store = harness.store
            let trains = try await Train.query(where: ["company": "MonoRail Co."], in: store)
            var iterator = trains.makeAsyncIterator()
            #expect(await iterator.next()?.map(\.id) == [1])
            let made = Train()
            made.company = "MonoRail Co."
            try await made.create(in: store)
            #expect(await iterator.next()?.map(\.id) == [1, made.id])
            try await made.delete()
            #expect(await iterator.next()?.map(\.id) == [1])
        }
    }

    @Test("Train.updates() tells records first seen in a response as created")
    func updatesTellCreates() async throws {
        try await withHarness { harness in
            let store = harness.store
            let updates = Train.updates(in: store)
            var iterator = updates.makeAsyncIterator()
            _ = try await Train.get(id: 1, in: store)
            let first = await iterator.next()
            #expect(first?.kind == .created && first?.instance.id == 1)
            let train = try #require(store.instance(of: Train.self, id: 1))
            train.maxSpeed = 50
            #expect(await iterator.next()?.kind == .edited)
            try await train.save()
            try await train.delete()
            var kinds: [ResourceUpdate<Train>.Kind] = []
            while let next = await iterator.next() {
                kinds.append(next.kind)
                if next.kind == .deleted { break }
            }
            #expect(kinds.last == .deleted)
            #expect(!kinds.contains(.created))
        }
    }

    @Test("one response that moves, adds and removes many records reorders the query in one step")
    func bigMerge() async throws {
        try await withHarness { harness in
            let store = harness.store
            let ids = try LivePagingTests.addTrains(60, to: harness) { Double($0) }
            let trains = try await Train.query(
                where: ["max_speed": .atMost(500)], order: [.descending("max_speed")], in: store)
            #expect(trains.instances.count == 62)
            var snapshots = trains.makeAsyncIterator()
            _ = await snapshots.next()
            // On the server: every speed reversed, a third pushed out of the range, and 30 new ones.
            let server = harness.server.store
            let resource = try #require(server.schema.resource(plural: "trains"))
            for (index, id) in ids.enumerated() {
                let speed: JSONValue = index % 3 == 0 ? 900 : .double(Double(500 - index))
                _ = try server.update(resource, id: String(id), attributes: ["max_speed": speed])
            }
            try LivePagingTests.addTrains(30, to: harness) { Double(400 + $0) }
            harness.journal.reset()
            _ = try await Train.get(in: store)  // another screen's list
            #expect(harness.journal.count == 1)
            let records = trains.instances
            let speeds = records.compactMap(\.maxSpeed)
            #expect(speeds == speeds.sorted(by: >))
            #expect(records.count == 62 - 20 + 30)
            #expect(Set(records.map(ObjectIdentifier.init)).count == records.count)
            #expect(!records.contains { ($0.maxSpeed ?? 0) > 500 })
            // Observers heard of it once.
            #expect(await snapshots.next()?.count == 72)
        }
    }

    @Test("a response that moves many records of a query sorted by text keeps it in order")
    func bigMergeByText() async throws {
        try await withHarness { harness in
            let store = harness.store
            let ids = try LivePagingTests.addTrains(40, to: harness)
            let trains = try await Train.query(order: [.ascending("company"), .descending("id")], in: store)
            #expect(trains.instances.count == 42)
            let server = harness.server.store
            let resource = try #require(server.schema.resource(plural: "trains"))
            for (index, id) in ids.enumerated() {
                let company = "Line \(String(UnicodeScalar(UInt8(65 + (index * 7) % 26))))"
                _ = try server.update(resource, id: String(id), attributes: ["company": .string(company)])
            }
            _ = try await Train.get(in: store)
            let records = trains.instances
            #expect(records.count == 42)
            for (earlier, later) in zip(records, records.dropFirst()) {
                let (a, b) = (earlier.company ?? "", later.company ?? "")
                let (first, second) = (Int(earlier.id?.description ?? "") ?? 0, Int(later.id?.description ?? "") ?? 0)
                #expect(a < b || (a == b && first > second), "\(a) \(first), \(b) \(second)")
            }
            // Ties broken by the second key, descending ids: checked on the ints.
            let lineA = records.filter { $0.company == "Line A" }.compactMap { Int($0.id?.description ?? "") }
            #expect(lineA == lineA.sorted(by: >) && lineA.count >= 2)
        }
    }

    @Test("large responses where more records leave than join keep the query equal to the sorted filter")
    func bigMergeMostlyLeaving() async throws {
        try await withHarness { harness in
            let store = harness.store
            let ids = try LivePagingTests.addTrains(80, to: harness) { Double(100 + $0) }
            let trains = try await Train.query(
                where: ["max_speed": .atLeast(100)], order: [.descending("max_speed")], in: store)
            #expect(trains.instances.count == 81)  // and a seeded train
            let server = harness.server.store
            let resource = try #require(server.schema.resource(plural: "trains"))
            /// The trains of the store the query should hold, fastest first (every speed differs).
            func expected(_ all: [Train]) -> [ResourceID?] {
                all.filter { ($0.maxSpeed ?? 0) >= 100 }.sorted { ($0.maxSpeed ?? 0) > ($1.maxSpeed ?? 0) }.map(\.id)
            }

            // One response larger than the query: half fall out of the range, a quarter move, five join.
            for (index, id) in ids.enumerated() where index % 4 != 3 {
                let speed = index % 4 == 2 ? 300 + Double(index) : 50 + Double(index) / 10
                _ = try server.update(resource, id: String(id), attributes: ["max_speed": .double(speed)])
            }
            try LivePagingTests.addTrains(5, to: harness) { 200 + Double($0) * 7 }
            let all = try await Train.get(in: store)
            #expect(trains.instances.count == 46)
            #expect(trains.instances.map(\.id) == expected(all))

            // One response smaller than the query: 30 members move, through a field the filter does not read.
            let moving = trains.instances.prefix(30).compactMap { $0.id.flatMap { Int($0.description) } }
            for (index, id) in moving.enumerated() {
                _ = try server.update(
                    resource, id: String(id),
                    attributes: ["max_speed": .double(1000 - Double(index) * 3), "company": "Moved"])
            }
            _ = try await Train.get(where: ["company": "Moved"], in: store)
            #expect(trains.instances.count == 46)
            #expect(trains.instances.map(\.id) == expected(try await Train.get(policy: .cacheOnly, in: store)))
        }
    }

    @Test("a query answers from the record cache's stored list with a cache policy, then stays live")
    func cachedList() async throws {
        try await withHarness { harness in
            let store = harness.store
            let first = try await Train.query(where: ["company": "MonoRail Co."], in: store)
            #expect(first.instances.map(\.id) == [1])
            harness.journal.reset()
            let cached = try await Train.query(where: ["company": "MonoRail Co."], policy: .cacheOnly, in: store)
            #expect(cached.instances.map(\.id) == [1])
            #expect(harness.journal.count == 0)
            let made = Train()
            made.company = "MonoRail Co."
            try await made.create(in: store)
            #expect(cached.instances.map(\.id) == [1, made.id])
            #expect(harness.journal.entries == ["POST /trains"])
        }
    }
}
