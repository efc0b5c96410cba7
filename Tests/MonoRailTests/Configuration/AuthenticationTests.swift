import Foundation
import Logging
import MonoRail
import MonoRailServer
import MonoRailTesting
import TestModels
import TestServer
import Testing

/// An app's sign-in as apps write one: tokens held in memory, refreshed at the reference server's
/// `POST /oauth/token` through the store's own client.
final class TestSession: AccessTokenSource {
    private let tokens: Locked<(access: String, refresh: String)?>
    private let refreshes = Locked(0)
    /// The client the refresh is sent with: the store's, set once the store exists.
    let client = Locked<APIClient?>(nil)
    /// How long a refresh takes, so that requests pile up behind it.
    let delay: Duration
    /// The expiry the source reports for its token, when it knows one.
    let expiresAt = Locked<Date?>(nil)
    /// How long a refreshed token lives, when the server says.
    let refreshedLifetime = Locked<TimeInterval?>(nil)

    init(_ tokens: (access: String, refresh: String)?, delay: Duration = .milliseconds(50)) {
        self.tokens = Locked(tokens)
        self.delay = delay
    }

    /// How many refreshes the authentication asked for.
    var refreshCount: Int { refreshes.withLock { $0 } }
    var accessToken: String? { tokens.withLock { $0?.access } }
    var refreshToken: String? { tokens.withLock { $0?.refresh } }

    func signIn(_ pair: (access: String, refresh: String)?) { tokens.withLock { $0 = pair } }

    func token() async throws -> AccessToken? {
        let expiry = expiresAt.withLock { $0 }
        return tokens.withLock { $0 }.map { AccessToken($0.access, expiresAt: expiry) }
    }

    func refresh(after rejected: AccessToken) async throws -> AccessToken {
        refreshes.withLock { $0 += 1 }
        try await Task.sleep(for: delay)
        guard let client = client.withLock({ $0 }), let refresh = refreshToken else {
            throw APIError(.unauthorized, "signed out")
        }
        let answer: JSONValue = try await client.post(
            "/oauth/token", body: ["grant_type": "refresh_token", "refresh_token": .string(refresh)] as JSONValue)
        guard let access = answer["access_token"]?.stringValue, let next = answer["refresh_token"]?.stringValue else {
            throw APIError(.decodingFailed, "no token in \(answer)")
        }
        tokens.withLock { $0 = (access, next) }
        let expiry = refreshedLifetime.withLock { $0 }.map { Date().addingTimeInterval($0) }
        expiresAt.withLock { $0 = expiry }
        return AccessToken(access, expiresAt: expiry)
    }
}

@Suite("Tokens that refresh", .timeLimit(.minutes(5)))
struct AuthenticationTests {
    /// A reference server whose access tokens expire, a signed-in session, and a store using it.
    ///
    /// - Parameter asMiddleware: Whether the authentication is given as SPEC §9 writes it,
    ///   `$0.middleware.append(.authentication(tokens))`, rather than `$0.authentication = …`.
    func withTokens(
        asMiddleware: Bool = false,
        configure: (inout MonoRail.Configuration) -> Void = { _ in },
        _ body: (TestAPI, TokenIssuer, TestSession, Authentication) async throws -> Void
    ) async throws {
        let issuer = TokenIssuer(lifetime: .seconds(600))
        let session = TestSession(issuer.signIn(username: "reader", password: "secret"))
        try await withHarness(server: .init(expiringTokens: issuer)) {
            if asMiddleware {
                $0.middleware.append(.authentication(session))
            } else {
                $0.authentication = Authentication(source: session)
            }
            configure(&$0)
        } _: { api in
            session.client.withLock { $0 = api.store.client }
            let authentication = try #require(api.store.configuration.authentication)
            try await body(api, issuer, session, authentication)
        }
    }

    @Test("the access token goes to the API's origin, and nowhere else", arguments: [false, true])
    func origin(asMiddleware: Bool) async throws {
        try await withTokens(asMiddleware: asMiddleware) { api, _, session, _ in
            let train = try await Train.get(id: 1, in: api.store)
            #expect(train.company == "MonoRail Co.")
            let token = try #require(session.accessToken)
            #expect(api.journal.requests.last?.authorization == "Bearer \(token)")

            let elsewhere = try await TestServer.shared()
            let echoed: JSONValue = try await api.store.client.send(
                APIRequest(method: .get, path: APIPath(verbatim: "\(elsewhere.baseURL)/echo"))
            ).decode()
            #expect(echoed["headers"]?["authorization"] == nil)
            #expect(echoed["path"] == "/echo")
            let anonymous = try await #require(throws: APIError.self) {
                try await api.store.client.send(
                    APIRequest(method: .get, path: "/trains/1", options: RequestOptions(isAnonymous: true)))
            }
            #expect(anonymous.code == .unauthorized)
            #expect(anonymous.message == "the server answered 401 Unauthorized: Not authenticated")
            #expect(api.journal.requests.last?.authorization == nil)
        }
    }

    @Test("32 requests refused at once share one refresh, and each is sent again once")
    func oneRefresh() async throws {
        try await withTokens { api, issuer, session, _ in
            issuer.expireAccessTokens()
            api.journal.reset()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<32 {
                    group.addTask {
                        if index.isMultiple(of: 4) {
                            let train = Train()
                            train.company = "Refreshed \(index)"
                            try await train.create(in: api.store)
                        } else {
                            let _: JSONValue = try await api.store.client.get("/trains/\(index % 2 + 1)?n=\(index)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(session.refreshCount == 1)
            #expect(issuer.refreshCount == 1)
            let entries = api.journal.entries
            #expect(entries.filter { $0 == "POST /oauth/token" }.count == 1)
            #expect(entries.count == 32 * 2 + 1)
            let fresh = try #require(session.accessToken)
            // Each request went twice, the second time with the fresh token. Under load a first
            // attempt can reach the server after another's second, so the order is not asserted.
            let sent = api.journal.requests.filter { $0.line != "POST /oauth/token" }
            let again = sent.filter { $0.authorization == "Bearer \(fresh)" }
            #expect(again.count == 32)
            #expect(
                Dictionary(grouping: again, by: \.line).mapValues(\.count)
                    == Dictionary(grouping: sent, by: \.line).mapValues { $0.count / 2 })
        }
    }

    @Test("a refresh that is itself refused fails every waiting request as unauthorized, once, with no loop")
    func refusedRefresh() async throws {
        try await withTokens { api, issuer, session, _ in
            issuer.expireAccessTokens()
            issuer.revokeRefreshTokens()
            api.journal.reset()
            let errors = await withTaskGroup(of: APIError?.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        do {
                            let _: JSONValue = try await api.store.client.get("/trains/1?n=\(index)")
                            return nil
                        } catch {
                            return error as? APIError
                        }
                    }
                }
                return await group.reduce(into: [APIError?]()) { $0.append($1) }
            }
            #expect(errors.count == 8)
            for error in errors {
                #expect(error?.code == .unauthorized)
                #expect(error?.statusCode == 401)
                #expect(error?.message.hasPrefix("the access token was refused and could not be refreshed") == true)
                #expect(error?.message.contains("Refresh token refused") == true, "\(error?.message ?? "")")
            }
            #expect(session.refreshCount == 1)
            #expect(api.journal.entries.filter { $0 == "POST /oauth/token" }.count == 1)

            // Still signed out: the next request meets the same failure without refreshing again.
            let again = try await #require(throws: APIError.self) { try await Train.get(id: 2, in: api.store) }
            #expect(again.code == .unauthorized)
            #expect(session.refreshCount == 1)
        }
    }

    @Test("a token about to expire is refreshed before it is sent")
    func expiring() async throws {
        try await withTokens { api, issuer, session, authentication in
            session.expiresAt.withLock { $0 = Date().addingTimeInterval(5) }
            api.journal.reset()
            _ = try await Train.get(id: 1, in: api.store)
            #expect(session.refreshCount == 1)
            #expect(api.journal.entries == ["POST /oauth/token", "GET /trains/1"])
            #expect(issuer.refreshCount == 1)

            // Tokens that live shorter than the leeway are used until they expire, not refreshed per request.
            session.refreshedLifetime.withLock { $0 = 5 }
            session.expiresAt.withLock { $0 = Date().addingTimeInterval(5) }
            authentication.tokenDidChange()
            for id in [1, 2, 1, 2] { _ = try await Train.get(id: id, in: api.store) }
            #expect(session.refreshCount == 2)
        }
    }

    @Test(
        "kept writes wait through a 401 — not refused — and go once the app signs in again", arguments: [false, true])
    func outboxWaits(asMiddleware: Bool) async throws {
        try await withTokens(asMiddleware: asMiddleware) {
            $0.writePolicy = .queued
            $0.allowsQueuedWritesLostOnQuit = true
            $0.outboxLimits.concurrentWrites = 1
        } _: { api, issuer, session, authentication in
            let train = try await Train.get(id: 1, in: api.store)
            let other = try await Train.get(id: 2, in: api.store)
            issuer.expireAccessTokens()
            issuer.revokeRefreshTokens()
            let events = api.store.outbox.events
            api.journal.reset()
            train.company = "Written while signed out"
            try await train.save()
            other.company = "Also while signed out"
            try await other.save()
            var waited: APIError?
            for await event in events {
                if case .waitingForToken(_, let error) = event {
                    waited = error
                    break
                }
                if case .parked = event { break }
            }
            #expect(waited?.code == .unauthorized)
            #expect(api.store.outbox.pendingCount == 2)
            // The first 401 stops the run: the other write is not sent to meet it too.
            try await Task.sleep(for: .milliseconds(300))
            #expect(api.journal.entries.filter { $0.hasPrefix("PUT /trains/") }.count == 1, "\(api.journal.entries)")
            #expect(api.store.outbox.parked.isEmpty)
            #expect(train.rejection == nil)
            #expect(train.hasPendingChanges)
            #expect((try api.server.store.find("trains", id: "1"))?["company"] == "MonoRail Co.")

            // No retry on its own while there is no token.
            let sent = api.journal.count
            try await Task.sleep(for: .milliseconds(1500))
            #expect(api.journal.count == sent)

            session.signIn(issuer.signIn(username: "reader", password: "secret"))
            authentication.tokenDidChange()
            #expect(try await eventually { api.store.outbox.pendingCount == 0 })
            #expect((try api.server.store.find("trains", id: "1"))?["company"] == "Written while signed out")
            #expect((try api.server.store.find("trains", id: "2"))?["company"] == "Also while signed out")
            #expect(!train.hasPendingChanges)
        }
    }

    @Test("tokens never reach the logs, even at trace level")
    func logs() async throws {
        let capture = LogCapture()
        try await withTokens {
            $0.logger = capture.logger(level: .trace)
            $0.requestLogLevel = .info
        } _: { api, issuer, session, _ in
            let first = try #require(session.accessToken)
            let firstRefresh = try #require(session.refreshToken)
            issuer.expireAccessTokens()
            _ = try await Train.get(id: 1, in: api.store)
            let second = try #require(session.accessToken)
            let secondRefresh = try #require(session.refreshToken)
            let text = capture.all.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            #expect(!capture.all.isEmpty)
            for secret in [first, firstRefresh, second, secondRefresh] {
                #expect(!text.contains(secret))
            }
            #expect("\(AccessToken(second))".contains(second) == false)
        }
    }
}
