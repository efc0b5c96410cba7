import Foundation

extension APIError {
    /// The longest reason taken from an error body into a message: a server's sentence, not a page.
    package static let maximumReasonLength = 300

    /// The sentence an error body gives as its reason, in the shapes servers use: FastAPI's
    /// `{"detail": "Not authenticated"}`, RFC 9457 problem details (`detail`, else `title`), Express,
    /// NestJS and Spring's `{"message": "…"}`, and `{"error": "…"}` or `{"error": {"message": "…"}}`.
    /// `nil` when the body holds none of these as a string.
    package static func reason(in body: JSONValue) -> String? {
        guard case .object(let object) = body else { return nil }
        let candidates: [JSONValue?] = [
            object["detail"], object["message"], object["error"]?["message"], object["error"], object["title"],
        ]
        for case .string(let text)? in candidates {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { continue }
            return trimmed.count > maximumReasonLength ? trimmed.prefix(maximumReasonLength) + "…" : trimmed
        }
        return nil
    }
}
