package import Foundation

/// One value of a column or an argument, in the storage classes SQLite and PostgreSQL share:
/// booleans are integers 0 and 1, dates are ISO 8601 text.
package enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The value as an integer, when it is one (a PostgreSQL `bool` reads as 0 or 1).
    package var integer: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The value as text, when it is text.
    package var text: String? {
        if case .text(let value) = self { value } else { nil }
    }

    /// An integer as its digits, text as it is: how ids travel in paths and in the change log.
    package var idText: String? {
        switch self {
        case .integer(let value): String(value)
        case .text(let value): value
        default: nil
        }
    }
}
