import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient
import MonoRailTransport
import NIOCore

/// Access tokens that expire and refresh tokens that trade for new ones, as an OAuth 2 server hands
/// them out: the reference server's ``ReferenceServer/Configuration/expiringTokens``.
///
/// `POST /oauth/token` with `{"grant_type": "password", "username": …, "password": …}` or
/// `{"grant_type": "refresh_token", "refresh_token": …}` answers
/// `{"access_token", "token_type": "Bearer", "expires_in", "refresh_token"}`; a refresh token is
/// used once (each answer brings the next). A wrong password or refresh token is a `401`. Every other
/// request needs `Authorization: Bearer <access token>` that has not expired, or gets a `401` saying
/// why, with `WWW-Authenticate: Bearer error="invalid_token"`.
public final class TokenIssuer: Sendable {
    /// How long an access token lasts.
    public let lifetime: Duration
    /// The users who may sign in, by name, with their passwords.
    let users: [String: String]

    private struct State: Sendable {
        var access: [String: ContinuousClock.Instant] = [:]
        var refresh: Set<String> = []
        var issued = 0
        var refreshed = 0
    }

    private let state = Locked(State())

    /// Creates an issuer.
    ///
    /// - Parameters:
    ///   - lifetime: How long an access token lasts.
    ///   - users: The users who may sign in, by name, with their passwords.
    public init(lifetime: Duration = .seconds(300), users: [String: String] = ["reader": "secret"]) {
        self.lifetime = lifetime
        self.users = users
    }

    /// How many token pairs it handed out, by sign-in and by refresh.
    public var issuedCount: Int { state.withLock { $0.issued } }
    /// How many of those answered a refresh token.
    public var refreshCount: Int { state.withLock { $0.refreshed } }

    /// Ends every access token handed out so far, as time would: the next request with one is a `401`.
    public func expireAccessTokens() {
        state.withLock { $0.access.removeAll() }
    }

    /// Refuses every refresh token handed out so far, as a server does after the user signs out
    /// elsewhere: the next refresh is a `401`.
    public func revokeRefreshTokens() {
        state.withLock { $0.refresh.removeAll() }
    }

    /// Signs a user in, as `POST /oauth/token` with the password grant does, for tests and tools.
    public func signIn(username: String, password: String) -> (access: String, refresh: String)? {
        guard users[username] == password else { return nil }
        return issue(refreshing: false)
    }

    private func issue(refreshing: Bool) -> (access: String, refresh: String) {
        let access = "at-" + UUID().uuidString
        let refresh = "rt-" + UUID().uuidString
        let expiry = ContinuousClock.now + lifetime
        state.withLock { state in
            state.access[access] = expiry
            state.refresh.insert(refresh)
            state.issued += 1
            if refreshing { state.refreshed += 1 }
        }
        return (access, refresh)
    }

    /// Why `header` does not authorize a request, or `nil` when it does.
    func refusal(of header: String?) -> String? {
        guard let header, header.hasPrefix("Bearer ") else { return "Not authenticated" }
        let token = String(header.dropFirst("Bearer ".count))
        guard let expiry = state.withLock({ $0.access[token] }) else { return "Token expired or unknown" }
        return expiry > .now ? nil : "Token expired"
    }

    /// Answers `POST /oauth/token`.
    func grant(_ body: JSONValue) -> Response {
        let pair: (access: String, refresh: String)?
        switch body["grant_type"]?.stringValue {
        case "password":
            guard let username = body["username"]?.stringValue, let password = body["password"]?.stringValue else {
                return JSONResponse.make(.badRequest, ["error": "invalid_request"])
            }
            pair = signIn(username: username, password: password)
        case "refresh_token":
            guard let refresh = body["refresh_token"]?.stringValue,
                state.withLock({ $0.refresh.remove(refresh) }) != nil
            else {
                pair = nil
                break
            }
            pair = issue(refreshing: true)
        default:
            return JSONResponse.make(.badRequest, ["error": "unsupported_grant_type"])
        }
        guard let pair else {
            return JSONResponse.make(.unauthorized, ["error": "invalid_grant", "detail": "Refresh token refused"])
        }
        return JSONResponse.make(
            .ok,
            [
                "access_token": .string(pair.access), "token_type": "Bearer",
                "expires_in": .int(lifetime.components.seconds), "refresh_token": .string(pair.refresh),
            ])
    }
}

/// Guards every request with a ``TokenIssuer``'s access tokens and answers `POST /oauth/token`.
struct ExpiringTokenMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let issuer: TokenIssuer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if request.uri.path == "/oauth/token" {
            guard request.method == .post else { return JSONResponse.make(.methodNotAllowed, ["error": "use POST"]) }
            let body: JSONValue
            do {
                let buffer = try await request.body.collect(upTo: 64 * 1024)
                body = try JSONParser().parse(Data(buffer.readableBytesView))
            } catch {
                return JSONResponse.make(.badRequest, ["error": "invalid_request"])
            }
            return issuer.grant(body)
        }
        if let refusal = issuer.refusal(of: request.headers[.authorization]) {
            var response = JSONResponse.make(.unauthorized, ["error": "Unauthorized", "detail": .string(refusal)])
            response.headers[.wwwAuthenticate] = #"Bearer error="invalid_token""#
            return response
        }
        return try await next(request, context)
    }
}
