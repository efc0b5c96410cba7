import Foundation
import InMemoryTracing
import MonoRail
import MonoRailSQLite
import MonoRailServer
import Tracing

/// `monorail demo --trace`: one read and one offline write, and the span trees they made — the app's
/// actions, their request attempts, the server's requests and SQL — from a tracer kept in memory.
struct TraceWalkthrough {
    let directory: URL
    let tracer = InMemoryTracer()

    func run() async throws {
        let database = directory.appendingPathComponent("demo.sqlite").path
        var serverConfiguration = ReferenceServer.Configuration(
            host: "127.0.0.1", port: 0, databasePath: database, uploadsDirectory: directory)
        serverConfiguration.tracer = tracer
        var server = try await ReferenceServer(schema: .trains, configuration: serverConfiguration).start()
        var configuration = MonoRail.Configuration(apiRootURL: server.baseURL)
        configuration.storage = try SQLiteStorage(path: directory.appendingPathComponent("app.sqlite").path)
        configuration.writePolicy = .queuedWhenOffline
        // The stopped server refuses at once; a busy machine must not turn that into a late answer.
        configuration.offlineDeadline = .seconds(30)
        configuration.tracer = tracer
        var retries = RetryPolicy.default
        retries.baseDelay = .milliseconds(50)
        configuration.retryPolicy = retries
        let store = ResourceStore(configuration: configuration)
        print("MonoRail demo --trace")
        print("Reference server: \(server.baseURL.absoluteString), tracing into the same in-memory tracer")

        print("")
        print("1. A read: Train.get(id: 1)")
        let train = try await Train.get(id: 1, in: store)
        await settled(server)
        printTrees()

        print("")
        print("2. An offline write: the server stops, train.save() is kept in the outbox")
        serverConfiguration.port = server.port
        await server.stop()
        train.maxSpeed = 80
        try await train.save()
        printTrees()

        print("")
        print("3. The server is back: the outbox sends the write, in a trace of its own linked to the save")
        server = try await ReferenceServer(schema: .trains, configuration: serverConfiguration).start()
        try await store.outbox.flush()
        await settled(server)
        printTrees()
        await server.stop()
    }

    /// Waits until the server's spans have ended: a request's span ends once its response is
    /// written, a moment after the app has read it.
    private func settled(_ server: RunningReferenceServer) async {
        for _ in 0..<100 where !tracer.activeSpans.isEmpty {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Prints each trace finished since the last call, as a tree.
    private func printTrees() {
        let spans = tracer.popFinishedSpans()
        var traces: [String] = []
        for span in spans where !traces.contains(span.traceID) { traces.append(span.traceID) }
        for trace in traces {
            let members = spans.filter { $0.traceID == trace }
            let ids = Set(members.map(\.spanID))
            let roots = members.filter { $0.parentSpanID.map { !ids.contains($0) } ?? true }
            print("")
            for root in roots.sorted(by: Self.started) { printTree(root, in: members, depth: 0) }
        }
    }

    private func printTree(_ span: FinishedInMemorySpan, in spans: [FinishedInMemorySpan], depth: Int) {
        let indent = String(repeating: "   ", count: depth)
        let milliseconds =
            Double(span.endInstant.nanosecondsSinceEpoch - span.startInstant.nanosecondsSinceEpoch) / 1e6
        var line = "   \(indent)\(depth == 0 ? "" : "└─ ")\(span.operationName)"
        line += " (\(span.kind), \(String(format: "%.1f", milliseconds)) ms)"
        let shown = Self.shownAttributes.compactMap { key in span.attributes.get(key).map { "\(key)=\(Self.text($0))" }
        }
        if !shown.isEmpty { line += " " + shown.joined(separator: " ") }
        let events = span.events.map(\.name)
        if !events.isEmpty { line += " [" + events.joined(separator: ", ") + "]" }
        if !span.links.isEmpty { line += " ← linked to the span that kept the write" }
        print(line)
        for child in spans.filter({ $0.parentSpanID == span.spanID }).sorted(by: Self.started) {
            printTree(child, in: spans, depth: depth + 1)
        }
    }

    private static let shownAttributes = [
        "monorail.response.source", "monorail.outbox.outcome", "http.response.status_code",
        "http.request.resend_count", "error.type", "db.system.name",
    ]

    private static func started(_ first: FinishedInMemorySpan, _ second: FinishedInMemorySpan) -> Bool {
        first.startInstant.nanosecondsSinceEpoch < second.startInstant.nanosecondsSinceEpoch
    }

    private static func text(_ attribute: SpanAttribute) -> String {
        switch attribute {
        case .string(let text): text
        case .int64(let number): "\(number)"
        default: "\(attribute)"
        }
    }
}
