import Foundation
import HTTPTypes
import MonoRailTransport

/// Shares one in-flight request between concurrent identical GETs.
///
/// Identical means same method, URL and header fields, so two users' requests with different
/// credentials are never merged. The shared request is cancelled only when every caller waiting for
/// it has been cancelled; a caller that is cancelled while others still wait gets the shared result.
actor RequestCoalescer {
    private struct Entry {
        let token: UUID
        let task: Task<(HTTPResponse, Data), any Error>
        var waiters: Int
    }

    private var entries: [String: Entry] = [:]

    /// The number of requests in flight, for tests.
    var inFlightCount: Int { entries.count }

    static func key(for request: HTTPRequest) -> String {
        var key = "\(request.method.rawValue) \(request.scheme ?? "")://\(request.authority ?? "")\(request.path ?? "")"
        for field in request.headerFields.sorted(by: {
            ($0.name.canonicalName, $0.value) < ($1.name.canonicalName, $1.value)
        }) {
            key += "\n\(field.name.canonicalName):\(field.value)"
        }
        return key
    }

    func run(
        key: String,
        operation: @escaping @Sendable () async throws -> (HTTPResponse, Data)
    ) async throws -> (HTTPResponse, Data) {
        let entry: Entry
        if var existing = entries[key] {
            existing.waiters += 1
            entries[key] = existing
            entry = existing
        } else {
            let token = UUID()
            let task = Task { [weak self] in
                do {
                    let exchange = try await operation()
                    await self?.finish(key: key, token: token)
                    return exchange
                } catch {
                    await self?.finish(key: key, token: token)
                    throw error
                }
            }
            entry = Entry(token: token, task: task, waiters: 1)
            entries[key] = entry
        }
        let token = entry.token
        return try await withTaskCancellationHandler {
            try await entry.task.value
        } onCancel: {
            Task { await self.leave(key: key, token: token) }
        }
    }

    private func finish(key: String, token: UUID) {
        if entries[key]?.token == token {
            entries[key] = nil
        }
    }

    private func leave(key: String, token: UUID) {
        guard var entry = entries[key], entry.token == token else { return }
        entry.waiters -= 1
        if entry.waiters == 0 {
            entry.task.cancel()
            entries[key] = nil
        } else {
            entries[key] = entry
        }
    }
}
