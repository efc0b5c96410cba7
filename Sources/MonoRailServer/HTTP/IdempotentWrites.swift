import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient
import MonoRailTransport
import NIOCore

/// A write's response as its transaction makes it, so that it can be stored beside the effect.
struct WriteAnswer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: Data

    /// `body` in the negotiated format.
    init(_ status: HTTPResponse.Status, _ body: JSONValue, format: ResponseFormat = .json) {
        self.status = status
        self.headers = [.contentType: format.contentType]
        self.body = format.encode(body)
    }

    /// An answer with no body.
    init(status: HTTPResponse.Status) {
        self.status = status
        headers = HTTPFields()
        body = Data()
    }

    /// Rails answers 422 `{"errors": {…}}`; Django REST framework 400 `{field: [message]}`; ApiModel
    /// 400 `{"train": {"errors": {…}}}`.
    static func validation(
        _ error: RecordValidationError, envelope: ServerEnvelope, root: String, format: ResponseFormat
    ) -> WriteAnswer {
        let errors = JSONValue.object(error.messages.mapValues { .array($0.map(JSONValue.string)) })
        return switch envelope {
        case .bare: WriteAnswer(.badRequest, errors, format: format)
        case .apiModel: WriteAnswer(.badRequest, [root: ["errors": errors]], format: format)
        case .rails, .namespace, .objects, .jsonAPI:
            WriteAnswer(.unprocessableContent, ["errors": errors], format: format)
        }
    }

    /// The response as stored in the ledger.
    init(_ entry: IdempotencyEntry) {
        status = HTTPResponse.Status(code: entry.status)
        headers = HTTPFields()
        for (name, value) in entry.headers.sorted(by: { $0.key < $1.key }) {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        body = entry.body
    }

    /// Headers worth storing: the ones a repeat must see again.
    var storedHeaders: [String: String] {
        var stored: [String: String] = [:]
        for field in headers where [.contentType, .location, .eTag].contains(field.name) {
            stored[field.name.canonicalName] = field.value
        }
        return stored
    }

    var response: Response {
        Response(
            status: status, headers: headers,
            body: body.isEmpty ? ResponseBody() : .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

/// A write refused after part of it was carried out in its transaction: thrown, so that the
/// transaction writes nothing, and answered as it says.
struct RefusedWrite: Error {
    let answer: WriteAnswer
}

/// Carries out each write at most once per `Idempotency-Key`, as draft-ietf-httpapi-idempotency-
/// key-header describes: the key and the response are stored in the transaction of the write's
/// effect; a repeat gets the stored response and changes nothing; a key reused for another request
/// (method, path or attributes) is 422; a repeat while the first is still being carried out is 409;
/// an empty key, or one over 255 characters, is 400. A write without the header runs as before.
final class IdempotentWrites: Sendable {
    static let header = HTTPField.Name("Idempotency-Key")
    static let maxKeyLength = 255

    let store: RecordStore
    private let inFlight = Locked<Set<String>>([])

    init(store: RecordStore) {
        self.store = store
    }

    /// Reads the request's attributes with `read`, then runs `effect` on them in one transaction,
    /// once per key. The key counts as in flight from before the body is read until the answer is
    /// made.
    ///
    /// - Parameters:
    ///   - read: What the request asks to write, `nil` for a delete: with the method and the path,
    ///     what a repeat of the key must match.
    ///   - effect: The write; it throws to write nothing (a 404 is not stored).
    func run(
        _ request: Request, read: @autoclosure () async throws -> [String: JSONValue]?,
        _ effect: @escaping ([String: JSONValue]?, any SQLConnection) throws -> WriteAnswer
    ) async throws -> Response {
        guard let name = Self.header, let raw = request.headers[name] else {
            let attributes = try await read()
            return try store.transaction { try effect(attributes, $0) }.response
        }
        let key = try Self.key(from: raw)
        let began = inFlight.withLock { $0.insert(key).inserted }
        guard began else {
            throw APIProblem(.conflict, "a request with this Idempotency-Key is still being processed")
        }
        defer { _ = inFlight.withLock { $0.remove(key) } }
        let attributes = try await read()
        let fingerprint = Self.fingerprint(request, attributes: attributes)
        do {
            return try answer(key: key, fingerprint: fingerprint, request, attributes, effect).response
        } catch  where store.database.isConflict(error) {
            // Another process carried out the same key meanwhile (several servers on one
            // database): its entry is there now, and the repeat answers from it.
            return try answer(key: key, fingerprint: fingerprint, request, attributes, effect).response
        }
    }

    /// The stored answer to `key`, or `effect`'s, stored with it, in one transaction.
    private func answer(
        key: String, fingerprint: String, _ request: Request, _ attributes: [String: JSONValue]?,
        _ effect: ([String: JSONValue]?, any SQLConnection) throws -> WriteAnswer
    ) throws -> WriteAnswer {
        try store.transaction { db in
            if let stored = try IdempotencyLedger.entry(key, db: db) {
                guard stored.fingerprint == fingerprint else {
                    return WriteAnswer(
                        .unprocessableContent,
                        [
                            "error": "Unprocessable Content",
                            "message": "this Idempotency-Key was used for another request",
                        ])
                }
                return WriteAnswer(stored)
            }
            let answer = try effect(attributes, db)
            try IdempotencyLedger.insert(
                IdempotencyEntry(
                    key: key, method: request.method.rawValue, path: request.uri.path, fingerprint: fingerprint,
                    status: answer.status.code, headers: answer.storedHeaders, body: answer.body, createdAt: Date()),
                db: db)
            return answer
        }
    }

    /// The key of the header's value: a structured-field string (`"8e03…"`, RFC 8941), or the bare
    /// text many clients send.
    static func key(from value: String) throws -> String {
        var key = value.trimmingCharacters(in: .whitespaces)
        if key.count >= 2, key.hasPrefix("\""), key.hasSuffix("\"") {
            key = String(key.dropFirst().dropLast())
                .replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\\\", with: "\\")
        }
        guard !key.isEmpty, key.utf8.count <= maxKeyLength else {
            throw APIProblem(.badRequest, "Idempotency-Key must be 1 to \(maxKeyLength) characters")
        }
        return key
    }

    static func fingerprint(_ request: Request, attributes: [String: JSONValue]?) -> String {
        let body = attributes.map { String(decoding: JSONValue.object($0).jsonData(sortedKeys: true), as: UTF8.self) }
        return "\(request.method.rawValue) \(request.uri.path) \(body ?? "")"
    }
}
