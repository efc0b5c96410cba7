import Foundation
import TestServer
import Testing

@testable import MonoRailClient

/// The cursor's check without building (`skipValue`) against the parser that builds: the same texts
/// accepted and rejected — JSONTestSuite's files and thousands of damaged documents — and numbers read
/// as `Double(String)` reads them.
@Suite("JSON cursor")
struct JSONCursorTests {
    /// Whether the cursor accepts the text as one JSON value.
    static func skips(_ data: Data, maxDepth: Int = 512) -> Bool {
        data.withUnsafeBytes { raw in
            var cursor = JSONCursor(raw.bindMemory(to: UInt8.self), maxDepth: maxDepth)
            do throws(JSONSyntaxError) {
                cursor.skipWhitespace()
                try cursor.skipValue(depth: 0)
                cursor.skipWhitespace()
                return cursor.isAtEnd
            } catch {
                return false
            }
        }
    }

    static func parses(_ data: Data, maxDepth: Int = 512) -> Bool {
        (try? JSONParser(maxDepth: maxDepth).parse(data)) != nil
    }

    @Test("accepts and rejects every JSONTestSuite file as the parser does")
    func suite() throws {
        #expect(JSONParserTests.files.count == 318)
        for file in JSONParserTests.files {
            let data = try Data(contentsOf: JSONParserTests.suiteDirectory.appendingPathComponent(file))
            let parsed = Self.parses(data)
            #expect(Self.skips(data) == parsed, "\(file)")
            if file.hasPrefix("y_") { #expect(parsed, "\(file)") }
            if file.hasPrefix("n_") { #expect(!parsed, "\(file)") }
        }
    }

    @Test("accepts and rejects damaged documents as the parser does")
    func damaged() {
        let document = Array(
            #"""
            {"trains": [{"id": 1, "company": "Deutsche Bahn AG", "max_speed": 230.5, "tags": ["ice", "\u00e9\ud83d\ude80"],
              "in_service": true, "built_at": null, "note": "a \"quoted\"\\ line\n", "cars": [{"n": -0.5e-3}, {"n": 1E+2}]},
             {"id": 2, "company": "Ë🚆", "max_speed": 18446744073709551616, "number_of_cars": -9223372036854775808}]}
            """#.utf8)
        let alphabet =
            Array(#"{}[]":,\ -+.eE0123456789tfnulrsa"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xE2, 0xED, 0xF0, 0xFF]
        var generator = SplitMix(state: 0x4A53_4F4E)
        var accepted = 0
        for _ in 0..<5000 {
            var bytes = document
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[position] = alphabet.randomElement(using: &generator) ?? 0
                case 1: bytes.remove(at: position)
                case 2: bytes.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
                default: bytes.removeSubrange(position...)
                }
                if bytes.isEmpty { break }
            }
            let data = Data(bytes)
            let parsed = Self.parses(data)
            if parsed { accepted += 1 }
            #expect(Self.skips(data) == parsed, "\(String(decoding: bytes, as: UTF8.self))")
        }
        // Some damage leaves a valid document (a digit for a digit), most does not: both sides are tried.
        #expect(accepted > 100 && accepted < 4900)
    }

    @Test("checks nesting against the same limit")
    func depth() {
        for levels in [3, 4, 5] {
            let data = Data((String(repeating: "[", count: levels) + String(repeating: "]", count: levels)).utf8)
            #expect(Self.skips(data, maxDepth: 4) == Self.parses(data, maxDepth: 4))
            #expect(Self.skips(data, maxDepth: 4) == (levels <= 4))
        }
        let deep = Data(
            (String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)).utf8)
        #expect(!Self.skips(deep))
    }

    @Test("reads decimals as Double(String) does, to the last bit")
    func decimals() throws {
        var generator = SplitMix(state: 0x0D0B_1E)
        for _ in 0..<20_000 {
            let digits = (0..<Int.random(in: 1...21, using: &generator)).map { _ in
                String(Int.random(in: 0...9, using: &generator))
            }.joined()
            let integer = String(digits.drop { $0 == "0" }.prefix(Int.random(in: 0...8, using: &generator)))
            var text = (Bool.random(using: &generator) ? "-" : "") + (integer.isEmpty ? "0" : integer)
            text += "." + (digits.isEmpty ? "0" : digits)
            if Bool.random(using: &generator) { text += "e\(Int.random(in: -30...30, using: &generator))" }
            let value = try JSONParser().parse(Data(text.utf8))
            guard case .double(let double) = value else { continue }  // a whole number: an integer
            let expected = try #require(Double(text))
            #expect(double.bitPattern == expected.bitPattern, "\(text): \(double) ≠ \(expected)")
        }
    }
}
