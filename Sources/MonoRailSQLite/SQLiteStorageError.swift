import Foundation

/// Why a `SQLiteStorage` file cannot be used, with what to do about it.
///
/// Opening never changes a file it refuses: the app decides. The usual recovery, for a cache, is
/// to move the file aside and start with an empty one — ``SQLiteStorage/moveAside(path:)``, or
/// `SQLiteStorage(path:recovery: .moveAside)` to do it as the store opens.
public struct SQLiteStorageError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the file.
    public enum Code: Sendable, Hashable {
        /// Not a SQLite database: random bytes, a truncated or damaged file.
        case unreadable
        /// A SQLite database of another app or library: MonoRail will not write into it.
        case foreign
        /// Written by a newer version of MonoRail, whose tables this one does not know.
        case newerSchema
        /// The file or its directory cannot be opened or created: permissions, a full disk.
        case cannotOpen
        /// Reading or writing an open store failed.
        case failed
    }

    /// What is wrong.
    public let code: Code
    /// The file.
    public let path: String
    /// What happened, in words.
    public let message: String
    /// The SQLite or file-system error behind it.
    public let underlyingError: (any Error)?

    init(_ code: Code, path: String, _ message: String, underlyingError: (any Error)? = nil) {
        self.code = code
        self.path = path
        self.message = message
        self.underlyingError = underlyingError
    }

    /// The code, the file and the message.
    public var description: String {
        "SQLiteStorageError.\(code) (\(path)): \(message)" + (underlyingError.map { " — \($0)" } ?? "")
    }
}
