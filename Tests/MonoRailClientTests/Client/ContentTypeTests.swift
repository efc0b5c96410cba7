import Foundation
import HTTPTypes
import MonoRailClient
import Testing

@Suite("Response content types")
struct ContentTypeTests {
    /// `{"id": 1}` in MessagePack: a fixmap of one pair.
    static let packed = Data([0x81, 0xA2, 0x69, 0x64, 0x01])
    static let json = Data(#"{"id": 1}"#.utf8)

    static func parse(_ body: Data, contentType: String) throws -> JSONValue {
        try ResponseDecoder().parse(
            body, response: HTTPResponse(status: .ok, headerFields: [.contentType: contentType]))
    }

    @Test(
        "JSON media types are read as JSON, whatever their case, blanks or parameters",
        arguments: [
            "application/json", "application/json; charset=utf-8", " Application/JSON ;charset=utf-8",
            "\tapplication/json\t", "text/json", "application/vnd.api+json", "APPLICATION/PROBLEM+JSON; q=1",
        ])
    func json(contentType: String) throws {
        #expect(try Self.parse(Self.json, contentType: contentType) == .object(["id": .int(1)]))
        #expect(!WireFormat.isMessagePack(contentType))
    }

    @Test(
        "MessagePack media types are read as MessagePack",
        arguments: [
            "application/x-msgpack", "APPLICATION/X-MSGPACK", "application/msgpack;\tq=1", " application/vnd.msgpack ",
        ])
    func messagePack(contentType: String) throws {
        #expect(WireFormat.isMessagePack(contentType))
        #expect(try Self.parse(Self.packed, contentType: contentType) == .object(["id": .int(1)]))
    }

    @Test(
        "other media types are a decoding error naming the type",
        arguments: [
            "text/plain", "application/jsonp", "application/json-seq", "application/x-msgpackx", "",
            ";application/json",
            "applicatión/json", "text/html; application/json",
        ])
    func other(contentType: String) throws {
        #expect(!WireFormat.isMessagePack(contentType))
        let error = #expect(throws: APIError.self) { try Self.parse(Self.json, contentType: contentType) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.message.contains("expected a JSON or MessagePack response, got \(contentType)") == true)
    }
}
