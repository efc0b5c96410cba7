import Foundation
import HTTPTypes
import Hummingbird
import MonoRailTransport
import NIOCore

enum Routes {
    static func install(on router: Router<BasicRequestContext>, state: ServerState) {
        // Describes the request it received, so tests can assert on what went over the wire.
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            router.on("/echo", method: method) { request, context in
                try await echo(request, context: context)
            }
            router.on("/echo/**", method: method) { request, context in
                try await echo(request, context: context)
            }
        }

        // Answers with whatever the query asks for: status, content type, body, delay, Retry-After.
        router.on("/respond", method: .get) { request, _ in try await respond(request) }
        router.on("/respond", method: .post) { request, _ in try await respond(request) }
        router.on("/respond", method: .put) { request, _ in try await respond(request) }

        // Counts requests per key, after an optional delay.
        router.get("/count/:key") { request, context in
            let key = context.parameters.get("key") ?? ""
            let delay = request.uri.queryParameters.get("delay_ms", as: Int.self) ?? 0
            let count = state.increment(key)
            if delay > 0 { try await Task.sleep(for: .milliseconds(delay)) }
            return json(["key": .string(key), "count": .int(count)])
        }

        // Fails the first `fail` requests per key with `status`, then succeeds.
        for method in [HTTPRequest.Method.get, .post, .put] {
            router.on("/flaky/:key", method: method) { request, context in
                let key = context.parameters.get("key") ?? ""
                let fail = request.uri.queryParameters.get("fail", as: Int.self) ?? 1
                let status = request.uri.queryParameters.get("status", as: Int.self) ?? 503
                let count = state.increment(key)
                _ = try await request.body.collect(upTo: 1 << 20)
                if count <= fail {
                    var headers: HTTPFields = [.contentType: "application/json"]
                    if let retryAfter = request.uri.queryParameters.get("retry_after") {
                        headers[.retryAfter] = String(retryAfter)
                    }
                    return Response(
                        status: .init(code: status), headers: headers,
                        body: .init(byteBuffer: ByteBuffer(string: #"{"error":"try again"}"#)))
                }
                return json(["key": .string(key), "attempts": .int(count)])
            }
        }

        // Streams `chunks` chunks, one every `interval_ms`; notes when the client goes away.
        router.get("/stream/:key") { request, context in
            let key = context.parameters.get("key") ?? ""
            let chunks = request.uri.queryParameters.get("chunks", as: Int.self) ?? 10
            let interval = request.uri.queryParameters.get("interval_ms", as: Int.self) ?? 100
            state.increment(key)
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: ResponseBody { writer in
                    do {
                        for _ in 0..<chunks {
                            try await writer.write(ByteBuffer(repeating: 0x61, count: 1024))
                            try await Task.sleep(for: .milliseconds(interval))
                        }
                        try await writer.finish(nil)
                    } catch {
                        state.aborted.withLock { _ = $0.insert(key) }
                        throw error
                    }
                })
        }

        // Promises `length` bytes, sends `sent`, then drops the connection.
        router.get("/truncated") { request, _ in
            let length = request.uri.queryParameters.get("length", as: Int.self) ?? 1000
            let sent = request.uri.queryParameters.get("sent", as: Int.self) ?? 100
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(contentLength: length) { writer in
                    try await writer.write(ByteBuffer(string: String(repeating: " ", count: sent)))
                    throw ConnectionDropped()
                })
        }

        // Returns `bytes` bytes of JSON-ish filler.
        router.get("/big") { request, _ in
            let bytes = request.uri.queryParameters.get("bytes", as: Int.self) ?? 1024
            var buffer = ByteBuffer()
            buffer.writeString("\"")
            buffer.writeRepeatingByte(0x61, count: max(0, bytes - 2))
            buffer.writeString("\"")
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: buffer))
        }

        // Redirects to `to` with `status`.
        router.on("/redirect", method: .get) { request, _ in redirect(request) }
        router.on("/redirect", method: .post) { request, _ in redirect(request) }

        // Reports the id it was given, decoded, and the raw path, for path-encoding tests.
        router.get("/trains/:id") { request, context in
            json([
                "train": [
                    "id": .string(decoded(context.parameters.get("id"))),
                    "raw_path": .string(request.uri.path),
                ]
            ])
        }
        // A tiny trains collection for the README's quick start: index with a company filter, and
        // create with Rails-style validation.
        router.get("/trains") { request, _ in
            let company = request.uri.queryParameters.get("company").map { String($0) }
            let trains = state.trains.withLock { $0 }
                .compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
                .filter { company == nil || $0["company"] as? String == company }
            return jsonObject(["trains": trains], status: .ok)
        }
        router.post("/trains") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
                var train = object["train"] as? [String: Any]
            else {
                return jsonObject(["error": "Bad Request"], status: .badRequest)
            }
            guard let company = train["company"] as? String, !company.isEmpty else {
                return jsonObject(["errors": ["company": ["can't be blank"]]], status: .unprocessableContent)
            }
            let id = state.trains.withLock { $0.count + 1 }
            train["id"] = id
            let stored = (try? JSONSerialization.data(withJSONObject: train)) ?? Data()
            state.trains.withLock { $0.append(stored) }
            return jsonObject(["train": train], status: .created)
        }
        router.get("/trains/:id/cars") { request, context in
            json([
                "cars": [], "raw_path": .string(request.uri.path), "id": .string(decoded(context.parameters.get("id"))),
            ])
        }
    }

    struct ConnectionDropped: Error {}

    /// Route parameters arrive percent-encoded; Rails would decode them.
    static func decoded(_ parameter: String?) -> String {
        guard let parameter else { return "" }
        return parameter.removingPercentEncoding ?? parameter
    }

    static func redirect(_ request: Request) -> Response {
        let target = request.uri.queryParameters.get("to") ?? "/echo"
        let status = request.uri.queryParameters.get("status", as: Int.self) ?? 302
        return Response(status: .init(code: status), headers: [.location: String(target)])
    }

    static func echo(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 512 * 1024 * 1024)
        var headers: [String: JSONValueLite] = [:]
        for field in request.headers {
            if case .string(let existing) = headers[field.name.canonicalName] {
                headers[field.name.canonicalName] = .string(existing + ", " + field.value)
            } else {
                headers[field.name.canonicalName] = .string(field.value)
            }
        }
        var query: [String: JSONValueLite] = [:]
        for (name, value) in request.uri.queryParameters {
            let key = String(name).removingPercentEncoding ?? String(name)
            if case .array(let existing) = query[key] {
                query[key] = .array(existing + [.string(String(value))])
            } else if let existing = query[key] {
                query[key] = .array([existing, .string(String(value))])
            } else {
                query[key] = .string(String(value))
            }
        }
        var checksum: UInt64 = 0xcbf2_9ce4_8422_2325
        body.withUnsafeReadableBytes { bytes in
            for byte in bytes {
                checksum = (checksum ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        let text = body.readableBytes <= 64 * 1024 ? String(buffer: body) : ""
        return json([
            "method": .string(request.method.rawValue),
            "path": .string(request.uri.path),
            "raw_query": .string(request.uri.query ?? ""),
            "query": .object(query),
            "headers": .object(headers),
            "body": .string(text),
            "body_length": .int(body.readableBytes),
            "body_fnv1a": .string(String(checksum, radix: 16)),
        ])
    }

    static func respond(_ request: Request) async throws -> Response {
        _ = try await request.body.collect(upTo: 1 << 20)
        let parameters = request.uri.queryParameters
        let status = parameters.get("status", as: Int.self) ?? 200
        let delay = parameters.get("delay_ms", as: Int.self) ?? 0
        if delay > 0 { try await Task.sleep(for: .milliseconds(delay)) }
        var headers = HTTPFields()
        let contentType = parameters.get("content_type").map { String($0) } ?? "application/json"
        if !contentType.isEmpty { headers[.contentType] = contentType }
        if let retryAfter = parameters.get("retry_after") { headers[.retryAfter] = String(retryAfter) }
        if let name = parameters.get("header_name"), let value = parameters.get("header_value"),
            let field = HTTPField.Name(String(name))
        {
            headers[field] = String(value)
        }
        let body = parameters.get("body").map { String($0) } ?? ""
        return Response(
            status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func jsonObject(_ value: [String: Any], status: HTTPResponse.Status) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: value)) ?? Data("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func json(_ value: JSONValueLite) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: value.serialized)))
    }
}

/// Just enough JSON for the server's answers, so the test server does not depend on the code under test.
indirect enum JSONValueLite: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByStringLiteral {
    case string(String)
    case int(Int)
    case array([JSONValueLite])
    case object([String: JSONValueLite])

    init(dictionaryLiteral elements: (String, JSONValueLite)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
    init(arrayLiteral elements: JSONValueLite...) { self = .array(elements) }
    init(stringLiteral value: String) { self = .string(value) }

    var serialized: String {
        switch self {
        case .int(let int): return String(int)
        case .string(let string):
            let data = try? JSONSerialization.data(withJSONObject: [string], options: [.fragmentsAllowed])
            let text = data.map { String(decoding: $0, as: UTF8.self) } ?? "[\"\"]"
            return String(text.dropFirst().dropLast())
        case .array(let elements): return "[" + elements.map(\.serialized).joined(separator: ",") + "]"
        case .object(let members):
            return "{"
                + members.keys.sorted().map { key in
                    JSONValueLite.string(key).serialized + ":" + (members[key]?.serialized ?? "null")
                }.joined(separator: ",") + "}"
        }
    }
}
