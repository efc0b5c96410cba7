import Foundation
import MonoRailClient
import Testing

/// nst/JSONTestSuite (MIT, commit 1ef36fa; copied into `Fixtures/JSONTestSuite` with its licence):
/// `y_` files must parse, `n_` files must be rejected, `i_` files may go either way but must never crash.
@Suite("JSON parser")
struct JSONParserTests {
    static let suiteDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/JSONTestSuite/test_parsing")

    static let files: [String] =
        ((try? FileManager.default.contentsOfDirectory(atPath: suiteDirectory.path)) ?? []).filter {
            $0.hasSuffix(".json")
        }.sorted()

    @Test("JSONTestSuite is present")
    func suiteIsPresent() {
        #expect(Self.files.count == 318, "expected the 318 JSONTestSuite files at \(Self.suiteDirectory.path)")
    }

    @Test("accepts every y_ file", arguments: files.filter { $0.hasPrefix("y_") })
    func accepts(file: String) throws {
        let data = try Data(contentsOf: Self.suiteDirectory.appendingPathComponent(file))
        #expect(throws: Never.self) { try JSONParser().parse(data) }
    }

    @Test("rejects every n_ file with a syntax error", arguments: files.filter { $0.hasPrefix("n_") })
    func rejects(file: String) throws {
        let data = try Data(contentsOf: Self.suiteDirectory.appendingPathComponent(file))
        #expect(throws: JSONSyntaxError.self) { try JSONParser().parse(data) }
    }

    @Test("survives every i_ file", arguments: files.filter { $0.hasPrefix("i_") })
    func survives(file: String) throws {
        let data = try Data(contentsOf: Self.suiteDirectory.appendingPathComponent(file))
        _ = try? JSONParser().parse(data)
    }

    @Test("keeps integers and doubles apart, including the Int64 bounds")
    func numbers() throws {
        let value = try JSONParser().parse(
            Data(
                #"[1, -0, 9223372036854775807, -9223372036854775808, 9223372036854775808, 1.5, 1e2, 18446744073709551616]"#
                    .utf8))
        #expect(
            value == [
                .int(1), .int(0), .int(.max), .int(.min), .uint(9_223_372_036_854_775_808), 1.5, 100.0,
                .double(18_446_744_073_709_551_616),
            ])
    }

    @Test("decodes escapes and surrogate pairs")
    func escapes() throws {
        let value = try JSONParser().parse(Data(#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude80""#.utf8))
        #expect(value == .string("a\"\\/\u{8}\u{c}\n\r\té🚀"))
    }

    @Test("bounds nesting depth with a typed error instead of overflowing the stack")
    func depth() {
        let deep = Data((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        #expect(throws: JSONSyntaxError.self) { try JSONParser().parse(deep) }
        let fine = Data((String(repeating: "[", count: 500) + String(repeating: "]", count: 500)).utf8)
        #expect(throws: Never.self) { try JSONParser().parse(fine) }
    }

    @Test("reports the byte offset of a syntax error")
    func offset() {
        #expect(throws: JSONSyntaxError(offset: 8, reason: "expected ',' or '}' in an object")) {
            try JSONParser().parse(Data(#"{"a": 1 "b": 2}"#.utf8))
        }
    }

    @Test("round-trips through the writer")
    func roundTrip() throws {
        let value: JSONValue = ["a": [1, 2.5, "x\n\"y\"", nil, true], "b": ["c": "é🚀\u{1}"]]
        let text = value.description
        #expect(try JSONParser().parse(Data(text.utf8)) == value)
    }
}
