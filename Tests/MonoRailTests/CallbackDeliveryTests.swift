import Foundation
import MonoRail
import MonoRailServer
import Testing

/// The callback style's closures run where `configuration.delivery` says.
@Suite("Callback delivery", .timeLimit(.minutes(1)))
struct CallbackDeliveryTests {
    /// Waits for a callback, which reports through `done`.
    static func callback(_ call: (@escaping @Sendable (Bool) -> Void) -> Void) async -> Bool {
        await withCheckedContinuation { continuation in
            call { value in continuation.resume(returning: value) }
        }
    }

    @Test("with .mainActor, success and failure run on the main actor")
    func delivery() async throws {
        try await withHarness { harness in
            let store = harness.store
            store.configure { $0.delivery = .mainActor }
            // `assumeIsolated` stops the test process if the closure is not on the main actor: the
            // main actor is not the main thread under every test runner, so no thread can be compared.
            let success = await Self.callback { done in
                Train.get(id: 1, in: store, success: { _ in done(MainActor.assumeIsolated { true }) })
            }
            let failure = await Self.callback { done in
                Train.get(
                    id: 404, in: store, success: { _ in done(false) },
                    failure: { _ in done(MainActor.assumeIsolated { true }) })
            }
            let train = try await Train.get(id: 1, in: store)
            let saved = await Self.callback { done in
                train.save(success: { _ in done(MainActor.assumeIsolated { true }) }, failure: { _ in done(false) })
            }
            #expect(success && failure && saved)
        }
    }
}
