import Foundation
import HTTPTypes

@testable import MonoRail
@testable import MonoRailClient
@testable import MonoRailServer

/// Header values and route templates: whatever a server or a configuration holds.
enum HeaderFuzz {
    static func retryAfter(_ data: Data) {
        let value = String(decoding: data, as: UTF8.self)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        if let delay = RetryPolicy.retryAfterDelay(value, now: now), delay < .zero {
            fatalError("Retry-After \(value) gave a negative delay")
        }
        guard let field = HTTPField.Name("Retry-After").map({ HTTPField(name: $0, value: value) }) else { return }
        var response = HTTPResponse(status: .tooManyRequests)
        response.headerFields.append(field)
        var generator = SystemRandomNumberGenerator()
        let decision = RetryPolicy.default.decision(
            for: .response(response), attempt: 1, method: .get, bodyIsReplayable: true, now: now,
            using: &generator)
        if case .retry(let delay) = decision, delay < .zero || delay > RetryPolicy.default.maxDelay {
            fatalError("Retry-After \(value) gave a delay of \(delay)")
        }
    }

    static func contentType(_ data: Data) {
        let value = String(decoding: data, as: UTF8.self)
        if ResponseDecoder.isJSON(value), WireFormat.isMessagePack(value) {
            fatalError("\(value) is both JSON and MessagePack")
        }
        _ = UploadRoutes.parameter("boundary", in: value)
        _ = UploadRoutes.fileName(in: value)
        _ = MultipartReceiver.isMultipart(value)
    }

    /// The first line is the template; each further line `name=value` fills a placeholder.
    static func routeTemplate(_ data: Data) {
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first else { return }
        let template = RouteTemplate(String(first))
        var values: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            values[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        _ = template.placeholders
        guard let path = template.expand(values) else { return }
        // A value is one segment: none may add a slash, a query or a fragment of its own. (`:path` is
        // inserted as the path it is, so templates with it are not checked.)
        guard !template.placeholders.contains("path") else { return }
        func count(_ text: String, _ byte: Character) -> Int { text.utf8.count { $0 == byte.asciiValue } }
        for separator: Character in ["/", "?", "#"]
        where count(path.description, separator) != count(template.template, separator) {
            fatalError("\(values) added a '\(separator)' to \(template): \(path)")
        }
    }
}
