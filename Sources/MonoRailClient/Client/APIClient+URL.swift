public import Foundation
import HTTPTypes

extension APIClient {
    /// The full URL for a path and query: the base URL's path followed by `path`, or `path` itself
    /// when it is an absolute URL.
    ///
    /// ```swift
    /// // baseURL "http://127.0.0.1:3000/api/v1"
    /// client.url(for: "/trains", query: ["tags": ["a"]])  // http://127.0.0.1:3000/api/v1/trains?tags%5B%5D=a
    /// ```
    ///
    /// - Throws: ``APIError`` with code ``APIError/Code/invalidRequest`` when no URL can be made.
    public func url(for path: APIPath, query: [String: JSONValue] = [:]) throws -> URL {
        let (scheme, authority, fullPath) = try components(for: path, query: query)
        guard let url = URL(string: "\(scheme)://\(authority)\(fullPath)") else {
            throw APIError(.invalidRequest, "cannot build a URL from \(path)")
        }
        return url
    }

    func components(for path: APIPath, query: [String: JSONValue]) throws -> (String, String, String) {
        let text = path.encoded
        if text.hasPrefix("http://") || text.hasPrefix("https://") {
            guard let absolute = URL(string: text), let scheme = absolute.scheme, let host = absolute.host else {
                throw APIError(.invalidRequest, "\(text) is not a usable URL")
            }
            let authority = absolute.port.map { "\(host):\($0)" } ?? host
            // `path(percentEncoded:)` keeps a trailing slash and the encoding as sent; `path` drops both.
            let encodedPath = absolute.path(percentEncoded: true)
            var rest = encodedPath.isEmpty ? "/" : encodedPath
            if let existing = absolute.query { rest += "?" + existing }
            return (scheme, authority, QueryEncoder.appending(query, to: rest))
        }
        guard let baseURL = configuration.baseURL else {
            throw APIError(.invalidRequest, "no base URL is configured, so \(text) cannot be sent")
        }
        guard let base else {
            throw APIError(.invalidRequest, "the base URL \(baseURL) has no scheme or host")
        }
        let relative = text.hasPrefix("/") ? text : "/" + text
        return (base.scheme, base.authority, QueryEncoder.appending(query, to: base.path + relative))
    }

    static func baseComponents(_ url: URL?) -> (scheme: String, authority: String, path: String)? {
        guard let url, let scheme = url.scheme, let host = url.host else { return nil }
        let authority = url.port.map { "\(host):\($0)" } ?? host
        var path = url.path(percentEncoded: true)
        while path.hasSuffix("/") { path.removeLast() }
        return (scheme, authority, path)
    }
}
