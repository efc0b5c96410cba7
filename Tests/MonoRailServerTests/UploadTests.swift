import Crypto
import Foundation
import MonoRail
import MonoRailServer
import MonoRailTesting
import Testing

/// Builds a multipart/form-data body by hand: the client's own multipart encoder is a later issue.
func multipartBody(boundary: String, parts: [(disposition: String, contentType: String?, data: Data)]) -> Data {
    var body = Data()
    for part in parts {
        body.append(Data("--\(boundary)\r\nContent-Disposition: \(part.disposition)\r\n".utf8))
        if let contentType = part.contentType { body.append(Data("Content-Type: \(contentType)\r\n".utf8)) }
        body.append(Data("\r\n".utf8))
        body.append(part.data)
        body.append(Data("\r\n".utf8))
    }
    body.append(Data("--\(boundary)--\r\n".utf8))
    return body
}

@Suite("Reference server: uploads", .timeLimit(.minutes(5)))
struct UploadTests {
    let files = TemporaryDirectory()

    @Test("a multi-MB file streamed from disk is stored byte for byte, with its SHA-256")
    func largeUpload() async throws {
        let directory = files.path("uploads")
        try await withServer(configuration: .init(uploadsDirectory: directory)) { _, client in
            var generator = SystemRandomNumberGenerator()
            var payload = Data(count: 6 * 1024 * 1024)
            payload.withUnsafeMutableBytes { bytes in
                for index in bytes.bindMemory(to: UInt64.self).indices {
                    bytes.bindMemory(to: UInt64.self)[index] = generator.next()
                }
            }
            let boundary = "monorail-\(UUID().uuidString)"
            let body = multipartBody(
                boundary: boundary,
                parts: [
                    (#"form-data; name="title""#, nil, Data("Holiday".utf8)),
                    (
                        #"form-data; name="image"; filename="a \"quoted\" name.bin"; filename*=UTF-8''Z%C3%BCrich%20%E2%9C%93.bin"#,
                        "application/x-test", payload
                    ),
                ])
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "monorail-body-\(UUID().uuidString)")
            try body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let response = try await client.send(
                APIRequest(
                    method: .post, path: "/uploads",
                    body: .raw(try .file(at: file), contentType: "multipart/form-data; boundary=\(boundary)")))
            #expect(response.statusCode == 201)
            let json = try response.json()
            let upload = try #require(json["uploads"]?[0])
            let expected = SHA256.hash(data: payload).map { String(format: "%02x", $0) }.joined()
            #expect(upload["sha256"]?.stringValue == expected)
            #expect(upload["size"]?.intValue == payload.count)
            #expect(upload["filename"] == "Zürich ✓.bin")
            #expect(upload["content_type"] == "application/x-test")
            #expect(json["fields"]?["title"] == "Holiday")
            let stored = directory.appendingPathComponent(upload["stored_as"]?.stringValue ?? "")
            #expect(try Data(contentsOf: stored) == payload)
            let permissions = try FileManager.default.attributesOfItem(atPath: stored.path)[.posixPermissions] as? Int
            #expect(permissions == 0o600)
        }
    }

    @Test("a server's own uploads folder goes when it stops; one it was given stays, and two servers share none")
    func uploadsFolders() async throws {
        func upload(to client: APIClient) async throws {
            var form = MultipartFormData()
            form.append(FileUpload(fileName: "a.bin", data: Data("abc".utf8)), name: "file")
            let response = try await client.send(APIRequest(method: .post, path: "/uploads", body: .multipart(form)))
            #expect(response.statusCode == 201)
        }
        func holdsFiles(_ folder: URL) -> Bool {
            !((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).isEmpty
        }
        let defaults = ReferenceServer.Configuration()
        var own: [URL] = []
        for _ in 0..<2 {
            try await withServer(configuration: defaults) { server, client in
                try await upload(to: client)
                #expect(holdsFiles(server.uploadsDirectory))
                own.append(server.uploadsDirectory)
            }
        }
        #expect(own.count == 2 && own[0] != own[1])
        #expect(own.allSatisfy { !FileManager.default.fileExists(atPath: $0.path) })
        let given = files.path("given")
        try await withServer(configuration: .init(uploadsDirectory: given)) { server, client in
            #expect(server.uploadsDirectory == given)
            try await upload(to: client)
        }
        #expect(holdsFiles(given))
    }

    @Test("a quoted file name is read with its escapes")
    func quotedName() {
        #expect(UploadTestsSupport.fileName(#"form-data; name="f"; filename="a \"b\".txt""#) == #"a "b".txt"#)
    }

    @Test("bad multipart bodies are 400s, with a JSON error")
    func badBodies() async throws {
        try await withServer(configuration: .init()) { _, client in
            let noBoundary = await #expect(throws: APIError.self) {
                try await client.send(
                    APIRequest(
                        method: .post, path: "/uploads",
                        body: .raw(.data(Data("x".utf8)), contentType: "multipart/form-data")))
            }
            #expect(noBoundary?.statusCode == 400)
            let truncated = Data(
                "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\nhalf a fi".utf8)
            let cut = await #expect(throws: APIError.self) {
                try await client.send(
                    APIRequest(
                        method: .post, path: "/uploads",
                        body: .raw(.data(truncated), contentType: "multipart/form-data; boundary=b")))
            }
            #expect(cut?.statusCode == 400)
            #expect(cut?.parsedBody?["error"] == "Bad Request")
            // multipart-kit trapped on a byte above 0x7F in a header name, ending the server.
            var hostile = Data("--b\r\nContent-Disposition: form-data; name=\"f\"\r\nX-".utf8)
            hostile += [0xC3, 0xA9] + Data(": 1\r\n\r\nvalue\r\n--b--\r\n".utf8)
            let refused = await #expect(throws: APIError.self) {
                try await client.send(
                    APIRequest(
                        method: .post, path: "/uploads",
                        body: .raw(.data(hostile), contentType: "multipart/form-data; boundary=b")))
            }
            #expect(refused?.statusCode == 400)
            // The server is still there, and near misses of the delimiter (`CRLF--a`, `CRLF-`) are content.
            let nearMiss = Data(
                "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\nx\r\n--a\r\n-\r\n--b--\r\n"
                    .utf8)
            let response = try await client.send(
                APIRequest(
                    method: .post, path: "/uploads",
                    body: .raw(.data(nearMiss), contentType: "multipart/form-data; boundary=b")))
            let stored = try response.json()
            #expect(stored["uploads"]?[0]?["size"] == 9, "\(stored)")
        }
    }
}
