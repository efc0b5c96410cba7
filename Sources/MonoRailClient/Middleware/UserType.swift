import HTTPTypes

/// The signed-in user, as Objects' `UserType`: the header fields (`cookie`) sent with every request.
///
/// ```swift
/// struct Session: UserType {
///     var token: String
///     var cookie: [String: String] { ["Cookie": "session=\(token)"] }
/// }
/// MonoRail.configure { $0.middleware.append(.currentUser { await Session.current }) }
/// ```
public protocol UserType: Sendable {
    /// Header fields by name, added to each request that does not set them itself.
    var cookie: [String: String] { get }
}

extension Middleware where Self == HeadersMiddleware {
    /// Adds the current user's ``UserType/cookie`` to each request, asking `user` every time, so
    /// signing in or out takes effect on the next request (Objects' `DataManager.shared.currentUser`).
    /// No user, no fields; a name that is not a valid field name is skipped.
    public static func currentUser(_ user: @escaping @Sendable () async -> (any UserType)?) -> HeadersMiddleware {
        HeadersMiddleware {
            var fields = HTTPFields()
            for (name, value) in await user()?.cookie ?? [:] {
                guard let name = HTTPField.Name(name) else { continue }
                fields.append(HTTPField(name: name, value: value))
            }
            return fields
        }
    }
}
