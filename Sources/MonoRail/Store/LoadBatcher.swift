import MonoRailTransport

/// Gathers the `get(id:)` calls of one model that arrive together, so that a store whose
/// conventions coalesce loads sends one `GET /cars?id[]=1&id[]=2` for them (Ember Data's
/// `coalesceFindRequests`).
///
/// The first call opens a batch and waits for the conventions' ``CoalescedLoads/window``, letting
/// the calls made alongside it join; then the batch is fetched and each caller gets its record or
/// the error for its id.
final class LoadBatcher: Sendable {
    private struct Waiter {
        let id: ResourceID
        let continuation: CheckedContinuation<any ResourceModel, any Error>
    }

    private let open = Locked<[ObjectIdentifier: [Waiter]]>([:])

    func get<Model: ResourceModel>(
        _ type: Model.Type, id: ResourceID, window: Duration, in store: ResourceStore
    ) async throws -> Model {
        let key = ObjectIdentifier(type)
        let instance = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<any ResourceModel, any Error>) in
            let opens = open.withLock { batches in
                defer { batches[key, default: []].append(Waiter(id: id, continuation: continuation)) }
                return batches[key] == nil
            }
            guard opens else { return }
            Task {
                // Cancellation cannot reach this task; the sleep only ends early if it is.
                try? await Task.sleep(for: window)
                let waiters = open.withLock { $0.removeValue(forKey: key) } ?? []
                let found: [IdentityMap.Key.Normalized: Model]
                do {
                    found = try await Model.fetch(waiters.map(\.id), in: store)
                } catch {
                    // One record failed the batch: each caller asks again for its own, so each gets
                    // its own answer, as without batching.
                    for waiter in waiters {
                        Task {
                            do {
                                waiter.continuation.resume(
                                    returning: try await Model.response(id: waiter.id, in: store).value)
                            } catch {
                                waiter.continuation.resume(throwing: error)
                            }
                        }
                    }
                    return
                }
                for waiter in waiters {
                    if let instance = found[IdentityMap.Key.Normalized(waiter.id)] {
                        waiter.continuation.resume(returning: instance)
                    } else {
                        waiter.continuation.resume(
                            throwing: APIError(
                                .inconsistentResponse,
                                "the server gave no \(Model.resourceSchema.typeName) \(waiter.id.debugText)"))
                    }
                }
            }
        }
        guard let typed = instance as? Model else {
            throw APIError(.inconsistentResponse, "a batch answered with another model")
        }
        return typed
    }
}
