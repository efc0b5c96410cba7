import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL database is and how to sign in, read from a connection URL as libpq reads
/// one: `postgres://user:password@host:5432/database?sslmode=disable`.
public struct PostgresLocation: Sendable, Hashable {
    /// The server's host name or address.
    public var host: String
    /// The server's port; 5432 unless the URL says.
    public var port: Int
    /// The role to sign in as.
    public var username: String
    /// The role's password, when the server asks for one.
    public var password: String?
    /// The database; the role's name when the URL names none, as libpq does.
    public var database: String
    /// Whether to speak TLS: libpq's `sslmode`.
    public var tls: TLSMode

    /// libpq's `sslmode` values this connection honours.
    public enum TLSMode: String, Sendable, Hashable {
        /// Plain TCP (the default: the reference server runs beside its database).
        case disable
        /// TLS without checking the server's certificate.
        case require
        /// TLS, checking the certificate and the host name.
        case verifyFull = "verify-full"
    }

    /// Reads a `postgres://` or `postgresql://` URL.
    ///
    /// - Throws: ``PostgresLocationError`` naming what is wrong: another scheme, no host, no user,
    ///   a port out of range, an `sslmode` it does not honour.
    public init(url text: String) throws {
        guard let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), ["postgres", "postgresql"].contains(scheme)
        else { throw PostgresLocationError("\"\(text)\" is not a postgres:// URL") }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresLocationError("the URL names no host (postgres://user@host/database)")
        }
        guard let username = components.user, !username.isEmpty else {
            throw PostgresLocationError("the URL names no user (postgres://user@host/database)")
        }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else { throw PostgresLocationError("port \(port) is out of range") }
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        guard let tls = TLSMode(rawValue: mode) else {
            throw PostgresLocationError(
                "sslmode=\(mode) is not supported: use disable, require or verify-full")
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.host = host
        self.port = port
        self.username = username.removingPercentEncoding ?? username
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = path.isEmpty ? self.username : (path.removingPercentEncoding ?? path)
        self.tls = tls
    }

    /// The URL without its password, for logs.
    public var redacted: String {
        "postgres://\(username)@\(host):\(port)/\(database)"
    }

    func configuration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch self.tls {
        case .disable:
            tls = .disable
        case .require:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            tls = .require(try NIOSSLContext(configuration: configuration))
        case .verifyFull:
            tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        return PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
    }
}

/// A PostgreSQL URL that cannot be used, and why.
public struct PostgresLocationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
