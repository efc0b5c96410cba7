import Foundation
import Logging
import MonoRailServer
import NIOCore
import PostgresNIO

/// One connection's turn in a read or a write transaction: the store's statements, their `?`
/// placeholders numbered as PostgreSQL wants them, run one after another.
final class PostgresSession: SQLConnection {
    private let connection: PostgresConnection
    private let logger: Logger
    private(set) var committedActions: [@Sendable () -> Void] = []
    /// Whether a statement went out on the connection: before one, a connection found closed can
    /// be swapped for a new one with nothing lost.
    private var hasSent = false

    /// The first statement found the connection closed (the server restarted, or closed it while
    /// it sat in the pool): nothing was done on it.
    struct StaleConnection: Error, CustomStringConvertible {
        /// The error the statement met; `nil` when the connection was seen closed before it was sent.
        var underlying: (any Error)?

        var description: String {
            underlying.map { "the database closed the connection: \($0)" } ?? "the database closed the connection"
        }
    }

    init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    var dialect: SQLDialect { .postgres }

    func fetchAll(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let value): bindings.append(ByteBuffer(bytes: value))
            }
        }
        let query = PostgresQuery(unsafeSQL: Self.numberingPlaceholders(sql), binds: bindings)
        // A query sent on a connection already closed is never answered (PostgresNIO 1.33 waits).
        if !hasSent, connection.isClosed { throw StaleConnection(underlying: nil) }
        let result: PostgresQueryResult
        do {
            result = try connection.query(query, logger: logger).wait()
        } catch {
            let wasFirst = !hasSent
            hasSent = true
            if wasFirst, connection.isClosed { throw StaleConnection(underlying: error) }
            throw error
        }
        hasSent = true
        return try result.rows.map { row in
            SQLRow(try row.map { cell in (cell.columnName, try Self.value(of: cell)) })
        }
    }

    func afterCommit(_ action: @escaping @Sendable () -> Void) {
        committedActions.append(action)
    }

    /// A cell in the storage classes the store uses: integers and booleans as integers, floating
    /// point as reals, `bytea` as data, anything else as its text.
    static func value(of cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
        case .float4, .float8: return .real(try cell.decode(Double.self))
        case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea: return .blob(try cell.decode(Data.self))
        case .void: return .null
        default: return .text(try cell.decode(String.self))
        }
    }

    /// `?` → `$1`, `$2`, … outside quoted text and identifiers, where a `?` is itself.
    static func numberingPlaceholders(_ sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 8)
        var number = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
                result.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                result.append(character)
            } else if character == "?" {
                number += 1
                result += "$\(number)"
            } else {
                result.append(character)
            }
        }
        return result
    }
}
