public import Foundation
public import HTTPTypes
public import MonoRailTransport

/// When and how soon to try a failed request again.
///
/// The defaults follow RFC 9110: only idempotent methods are retried (§9.2.2), on 408, 429, 500, 502,
/// 503 and 504 and on timeouts and lost connections, at most 3 attempts in all, with exponential
/// backoff (250 ms, 500 ms, 1 s, … capped at 30 s) and jitter, and a server's `Retry-After` (§10.2.3,
/// seconds or an HTTP date) is honoured. A body that cannot be replayed is never sent twice.
///
/// ```swift
/// configuration.retryPolicy = .default
/// configuration.retryPolicy = .none
/// var patient = RetryPolicy.default; patient.maxAttempts = 5
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included. 1 means no retries.
    public var maxAttempts: Int
    /// Methods that may be retried.
    public var retryableMethods: Set<HTTPRequest.Method>
    /// Status codes that may be retried.
    public var retryableStatuses: Set<Int>
    /// Transport failures that may be retried.
    public var retryableErrors: Set<TransportError.Code>
    /// The delay before the first retry.
    public var baseDelay: Duration
    /// The factor between one delay and the next.
    public var multiplier: Double
    /// The longest delay; a `Retry-After` beyond it stops retrying instead.
    public var maxDelay: Duration
    /// The fraction of each delay that is random, from 0 (none) to 1 (full jitter).
    public var jitter: Double
    /// Whether `Retry-After` sets the delay.
    public var honorsRetryAfter: Bool

    /// Creates a policy.
    public init(
        maxAttempts: Int = 3,
        retryableMethods: Set<HTTPRequest.Method> = [.get, .head, .put, .delete, .options, .trace],
        retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
        retryableErrors: Set<TransportError.Code> = [.timedOut, .cannotConnect, .connectionClosed],
        baseDelay: Duration = .milliseconds(250),
        multiplier: Double = 2,
        maxDelay: Duration = .seconds(30),
        jitter: Double = 0.5,
        honorsRetryAfter: Bool = true
    ) {
        self.maxAttempts = maxAttempts
        self.retryableMethods = retryableMethods
        self.retryableStatuses = retryableStatuses
        self.retryableErrors = retryableErrors
        self.baseDelay = baseDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.jitter = min(1, max(0, jitter))
        self.honorsRetryAfter = honorsRetryAfter
    }

    /// The defaults described above.
    public static let `default` = RetryPolicy()
    /// Never retry.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// What happened on an attempt.
    public enum Outcome: Sendable {
        /// A response arrived.
        case response(HTTPResponse)
        /// The transport failed.
        case failure(any Error)
    }

    /// What to do next.
    public enum Decision: Sendable, Hashable {
        /// Try again after the delay.
        case retry(after: Duration)
        /// Stop and report the outcome.
        case stop
    }

    /// Decides whether attempt number `attempt` should be followed by another.
    ///
    /// A pure function of its inputs: give it a seeded generator and a fixed `now` to test it.
    ///
    /// - Parameters:
    ///   - outcome: The response or error of the attempt.
    ///   - attempt: The attempt just made, starting at 1.
    ///   - method: The request method.
    ///   - bodyIsReplayable: Whether the body can be sent again (`true` when there is none).
    ///   - now: The current time, for `Retry-After` dates.
    ///   - generator: The source of jitter.
    /// - Returns: ``Decision/retry(after:)`` or ``Decision/stop``.
    public func decision(
        for outcome: Outcome,
        attempt: Int,
        method: HTTPRequest.Method,
        bodyIsReplayable: Bool,
        now: Date = Date(),
        using generator: inout some RandomNumberGenerator
    ) -> Decision {
        guard attempt < maxAttempts, bodyIsReplayable, retryableMethods.contains(method) else { return .stop }
        switch outcome {
        case .response(let response):
            guard retryableStatuses.contains(response.status.code) else { return .stop }
            if honorsRetryAfter, let value = response.headerFields[.retryAfter] {
                guard let delay = Self.retryAfterDelay(value, now: now) else { return backoff(attempt, &generator) }
                return delay <= maxDelay ? .retry(after: delay) : .stop
            }
            return backoff(attempt, &generator)
        case .failure(let error):
            guard let transportError = error as? TransportError, retryableErrors.contains(transportError.code) else {
                return .stop
            }
            return backoff(attempt, &generator)
        }
    }

    private func backoff(_ attempt: Int, _ generator: inout some RandomNumberGenerator) -> Decision {
        let exponent = pow(multiplier, Double(attempt - 1))
        let base = min(maxDelay, baseDelay * exponent)
        // One draw from the generator, mapped straight to [0, 1): no rejection loop, so a scripted
        // generator gives a predictable delay.
        let random = Double(generator.next() >> 11) * 0x1p-53
        return .retry(after: base * (1 - jitter) + base * (jitter * random))
    }

    /// Parses `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3).
    public static func retryAfterDelay(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return .seconds(seconds) }
        // An HTTP date is ASCII, and Foundation's DateFormatter traps on some non-ASCII text.
        guard trimmed.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: trimmed) else { return nil }
        // Capped at a million years, far past any maxDelay, so that a date in the year 10^11 stays a
        // number of milliseconds an Int64 holds.
        let seconds = min(max(0, date.timeIntervalSince(now)), 31_556_952_000_000)
        return .milliseconds(Int64(seconds * 1000))
    }
}
