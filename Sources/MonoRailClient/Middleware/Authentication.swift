public import Foundation
import HTTPTypes
import MonoRailTransport

/// An access token, and when it stops working. Its description never shows the token.
public struct AccessToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The token, sent as `Authorization: <scheme> <value>`.
    public var value: String
    /// When the server stops taking it, if known: a token this close to it is refreshed before it is
    /// sent (``Authentication/refreshLeeway``).
    public var expiresAt: Date?
    /// The authorization scheme. Default `"Bearer"`.
    public var scheme: String

    /// Creates a token.
    public init(_ value: String, expiresAt: Date? = nil, scheme: String = "Bearer") {
        self.value = value
        self.expiresAt = expiresAt
        self.scheme = scheme
    }

    /// The scheme, and the expiry when known; never the token.
    public var description: String {
        "\(scheme) token [REDACTED]" + (expiresAt.map { " expiring \($0)" } ?? "")
    }

    /// As ``description``.
    public var debugDescription: String { description }

    var fieldValue: String { "\(scheme) \(value)" }
}

/// Where an app's access tokens come from: its sign-in state, and the call that trades a refresh
/// token for a new access token.
///
/// ```swift
/// struct Session: AccessTokenSource {
///     let keychain: Keychain
///     func token() async throws -> AccessToken? { keychain.accessToken }
///     func refresh(after rejected: AccessToken) async throws -> AccessToken {
///         let fresh = try await authAPI.refresh(keychain.refreshToken)   // POST /oauth/token
///         keychain.accessToken = fresh
///         return fresh
///     }
/// }
/// ```
public protocol AccessTokenSource: Sendable {
    /// The token to send now, or `nil` when the user is signed out: requests then go without one.
    /// Asked once, then whenever ``Authentication/tokenDidChange()`` says the app changed it.
    func token() async throws -> AccessToken?

    /// A new token, after the server refused `rejected` with a `401` or it was about to expire.
    /// Called once for all the requests that need it at the same time. Throw when there is none to
    /// be had (the refresh token was refused: the user must sign in again).
    ///
    /// Requests this call makes through the same client go without the token and are not
    /// refreshed: a refresh that is itself answered `401` fails, and does not loop.
    func refresh(after rejected: AccessToken) async throws -> AccessToken
}

/// Tokens that refresh, on every request to the API: the access token from a ``AccessTokenSource`` is sent
/// to the API's origin only, and on a `401` one refresh is shared by every request in flight, each
/// then sent again once. Alamofire's `AuthenticationInterceptor` is the model.
///
/// ```swift
/// MonoRail.configure {
///     $0.apiRootURL = URL(string: "https://api.example.com")!
///     $0.authentication = Authentication(source: Session(keychain: keychain))
/// }
/// ```
///
/// - A token whose ``AccessToken/expiresAt`` is within ``refreshLeeway`` is refreshed before it is sent.
/// - A `401` answered to a token is refreshed once, and the request sent again with the new token;
///   requests that were answered `401` meanwhile wait for the same refresh. A request whose body
///   cannot be sent twice (a stream) returns its `401`.
/// - When the refresh fails, every waiting request fails with
///   ``APIError/Code/unauthorized``, its message saying why, and the source is asked for a token
///   again on the next request. The outbox of a store keeps its writes meanwhile and sends them
///   once the app signs in again and calls ``tokenDidChange()``.
/// - Requests to another origin (a CDN URL a record names), requests that set `Authorization`
///   themselves and anonymous requests (``RequestOptions/isAnonymous``) go without the token.
/// - Tokens never reach logs: ``AccessToken`` does not print them and the request log redacts
///   `Authorization`.
public final class Authentication: Sendable {
    /// Where tokens come from.
    public let source: any AccessTokenSource
    /// How long before its expiry a token is refreshed rather than sent. Default 30 seconds.
    public let refreshLeeway: Duration

    private struct State: Sendable {
        /// The token in use, once the source was asked.
        var token: AccessToken?
        var hasAsked = false
        /// The refresh under way, shared by every request that needs it, and the token it replaces.
        var refresh: (replacing: AccessToken, task: Task<AccessToken, any Error>)?
        /// The token whose refresh failed, and why.
        var failure: (rejected: AccessToken, error: any Error)?
        /// The token the last refresh brought.
        var refreshed: AccessToken?
        /// Incremented when the token changes: a refresh that ends after a newer change keeps that one.
        var generation = 0
        var observers: [WeakObserver] = []
    }

    private struct WeakObserver: Sendable {
        weak var observer: (any TokenObserver)?
    }

    private let state = Locked(State())

    /// Whether the current task runs inside a refresh: its own requests are not refreshed again.
    @TaskLocal private static var isRefreshing = false

    /// Creates the authentication.
    ///
    /// - Parameters:
    ///   - source: Where tokens come from.
    ///   - refreshLeeway: How long before its expiry a token is refreshed rather than sent.
    public init(source: any AccessTokenSource, refreshLeeway: Duration = .seconds(30)) {
        self.source = source
        self.refreshLeeway = refreshLeeway
    }

    /// Tells the authentication the source's token changed — the user signed in or out — so the
    /// next request asks the source again, and stores waiting for a token send their kept writes.
    public func tokenDidChange() {
        state.withLock { state in
            state.token = nil
            state.hasAsked = false
            state.failure = nil
            state.generation += 1
        }
        notifyObservers()
    }

    // MARK: - Sending

    /// Sends `request` with the token, and again once with a new one when it is answered `401`.
    func send(
        _ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata, next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        // The refresh's own requests go as the source makes them: with no token, never refreshed.
        guard request.headerFields[.authorization] == nil, !Self.isRefreshing, let token = try await currentToken()
        else { return try await next(request, body, metadata) }
        let answer = try await next(Self.authorized(request, with: token), body, metadata)
        guard answer.0.status == .unauthorized, body?.isReplayable ?? true else { return answer }
        let fresh = try await refreshed(after: token, refusal: answer, request: request)
        return try await next(Self.authorized(request, with: fresh), body, metadata)
    }

    private static func authorized(_ request: HTTPRequest, with token: AccessToken) -> HTTPRequest {
        var request = request
        request.headerFields[.authorization] = token.fieldValue
        return request
    }

    /// The token to send: the source's, asked once, refreshed first when it is about to expire.
    private func currentToken() async throws -> AccessToken? {
        let (known, hasAsked, generation, lastRefreshed) = state.withLock {
            ($0.token, $0.hasAsked, $0.generation, $0.refreshed)
        }
        var token = known
        if !hasAsked {
            token = try await source.token()
            state.withLock { state in
                guard state.generation == generation else { return }
                state.token = token
                state.hasAsked = true
            }
        }
        // A token a refresh just brought is sent until it expires, even inside the leeway: a server
        // whose tokens live shorter than the leeway would otherwise be asked for one per request.
        let margin = lastRefreshed == token ? 0 : Double(refreshLeeway.components.seconds)
        guard let token, let expiry = token.expiresAt, expiry.timeIntervalSinceNow < margin else { return token }
        return try await refreshed(after: token, refusal: nil, request: nil)
    }

    /// What a request answered `401` does next.
    private enum Replacement {
        /// Send again with this token: a refresh already brought it.
        case use(AccessToken)
        /// Wait for this refresh.
        case wait(Task<AccessToken, any Error>)
        /// The refresh of this token failed, and nothing changed since: fail the same way.
        case fail(any Error)
    }

    /// The token that replaces `rejected`: one a refresh already brought, or the result of the
    /// refresh under way, or of a new one.
    private func refreshed(
        after rejected: AccessToken, refusal: (HTTPResponse, Data)?, request: HTTPRequest?
    ) async throws -> AccessToken {
        let replacement = state.withLock { state -> Replacement in
            if let current = state.token, current != rejected { return .use(current) }
            if let refresh = state.refresh, refresh.replacing == rejected { return .wait(refresh.task) }
            if let failure = state.failure, failure.rejected == rejected { return .fail(failure.error) }
            let source = source
            let generation = state.generation
            let task = Task {
                try await Self.$isRefreshing.withValue(true) { try await source.refresh(after: rejected) }
            }
            state.refresh = (rejected, task)
            Task { [weak self] in await self?.settle(task, replacing: rejected, generation: generation) }
            return .wait(task)
        }
        do {
            switch replacement {
            case .use(let token): return token
            case .wait(let task): return try await task.value
            case .fail(let error): throw error
            }
        } catch {
            throw APIError(
                .unauthorized,
                "the access token was refused and could not be refreshed: \(Self.describe(error))",
                request: request, response: refusal?.0, rawBody: refusal?.1, underlyingError: error)
        }
    }

    /// Keeps what a refresh brought: the new token; or, when it failed, the failure, which every
    /// request refused the same token meets until the app changes the token.
    private func settle(_ task: Task<AccessToken, any Error>, replacing rejected: AccessToken, generation: Int) async {
        let result = await task.result
        let changed = state.withLock { state -> Bool in
            if state.refresh?.replacing == rejected { state.refresh = nil }
            guard state.generation == generation else { return false }
            switch result {
            case .success(let token):
                state.token = token
                state.refreshed = token
                state.hasAsked = true
                state.failure = nil
            case .failure(let error):
                state.token = nil
                state.hasAsked = false
                state.failure = (rejected, error)
            }
            state.generation += 1
            return true
        }
        if changed, case .success = result { notifyObservers() }
    }

    private static func describe(_ error: any Error) -> String {
        (error as? APIError)?.message ?? String(describing: error)
    }

    // MARK: - Observers

    /// Tells `observer` whenever a new token is to be had: after a refresh, or when the app says
    /// the token changed. Held weakly.
    package func addObserver(_ observer: any TokenObserver) {
        state.withLock { state in
            state.observers.removeAll { $0.observer == nil }
            guard !state.observers.contains(where: { $0.observer === observer }) else { return }
            state.observers.append(WeakObserver(observer: observer))
        }
    }

    private func notifyObservers() {
        let observers = state.withLock { $0.observers.compactMap(\.observer) }
        for observer in observers { observer.tokenDidChange() }
    }
}

/// Told when an ``Authentication`` has a new token: a store's outbox, waiting to send.
package protocol TokenObserver: AnyObject, Sendable {
    func tokenDidChange()
}

/// ``Authentication`` in the middle of an ``APIClient``'s chain, with the API's origin.
extension Authentication: Middleware {
    /// Sends `request` with the token, as an ``APIClient`` does for requests to its API's origin:
    /// in a client's ``APIClient/Configuration/middleware``, requests to other origins and anonymous
    /// requests pass by.
    public func intercept(
        _ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata, next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        try await send(request, body: body, metadata: metadata, next: next)
    }

    /// This authentication, for requests to `origin` only.
    func restricted(to origin: (scheme: String, authority: String)?) -> AuthenticationMiddleware {
        AuthenticationMiddleware(authentication: self, origin: origin)
    }
}

extension Middleware where Self == Authentication {
    /// Tokens that refresh, as a step of ``APIClient/Configuration/middleware``: the same as setting
    /// ``APIClient/Configuration/authentication``.
    ///
    /// ```swift
    /// MonoRail.configure { $0.middleware.append(.authentication(session)) }
    /// ```
    ///
    /// - Parameters:
    ///   - tokens: Where tokens come from.
    ///   - refreshLeeway: How long before its expiry a token is refreshed rather than sent.
    public static func authentication(
        _ tokens: some AccessTokenSource, refreshLeeway: Duration = .seconds(30)
    ) -> Authentication {
        Authentication(source: tokens, refreshLeeway: refreshLeeway)
    }
}

/// The earlier name of ``AccessTokenSource``.
@available(*, deprecated, renamed: "AccessTokenSource")
public typealias TokenSource = AccessTokenSource

struct AuthenticationMiddleware: Middleware {
    let authentication: Authentication
    /// The scheme and authority tokens are sent to.
    let origin: (scheme: String, authority: String)?

    func intercept(
        _ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata, next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        guard let origin, request.scheme?.lowercased() == origin.scheme.lowercased(),
            request.authority?.lowercased() == origin.authority.lowercased()
        else { return try await next(request, body, metadata) }
        return try await authentication.send(request, body: body, metadata: metadata, next: next)
    }
}
