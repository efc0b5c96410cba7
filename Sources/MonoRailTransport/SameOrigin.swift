package import Foundation

/// Whether two URLs share scheme, host and port. Transports drop credentials on redirects that fail
/// this check (SPEC §8), so every transport applies the same rule.
package func isSameOrigin(_ a: URL, _ b: URL) -> Bool {
    a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
        && a.port == b.port
}
