public import Logging
import MonoRailTransport

/// Captures log records in memory.
public final class LogCapture: Sendable {
    /// One record logged.
    public struct Record: Sendable {
        /// Its level.
        public var level: Logger.Level
        /// Its message.
        public var message: String
        /// Its metadata, each value as text.
        public var metadata: [String: String]
    }

    private let records = Locked<[Record]>([])

    /// Creates an empty capture.
    public init() {}

    /// Every record so far.
    public var all: [Record] { records.withLock { $0 } }

    /// Adds a record.
    public func append(_ record: Record) { records.withLock { $0.append(record) } }

    /// A logger whose records this captures, from `level` up.
    public func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "test") { _ in CaptureHandler(capture: self) }
        logger.logLevel = level
        return logger
    }

    struct CaptureHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let flattened = (event.metadata ?? [:]).mapValues { "\($0)" }
            capture.append(Record(level: event.level, message: "\(event.message)", metadata: flattened))
        }
    }
}
