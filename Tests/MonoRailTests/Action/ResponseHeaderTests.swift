import Foundation
import Testing

@testable import MonoRail

@Suite("Reading Link and Date header fields")
struct ResponseHeaderTests {
    @Test("an IMF-fixdate reads as its instant; anything else is nil, never an error")
    func httpDate() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        for bad in [
            "", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Nov 19x4 08:49:37 GMT", "Sün, 06 Nov 1994 08:49:37 GMT", String(repeating: "9", count: 100_000),
        ] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad.prefix(40))")
        }
    }

    @Test("dates are written as IMF-fixdates that read back to the second")
    func httpDateFormat() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777.9)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 GMT")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let seconds = Double(Int64.random(in: -2_000_000_000...8_000_000_000, using: &generator))
            let date = Date(timeIntervalSince1970: seconds)
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date, "\(seconds)")
        }
    }

    @Test("Link relations by rel, relative targets resolved, commas inside targets and quotes kept")
    func links() throws {
        let base = try #require(URL(string: "https://api.example.com/trains?page=2"))
        let relations = LinkHeader.relations(
            [
                #"<https://api.example.com/trains?page=3&ids=1,2>; rel="next", </trains?page=1>; rel="prev first""#,
                #"<https://api.example.com/trains?page=9>; title="a, b"; REL=last"#,
            ], base: base)
        #expect(relations["next"]?.absoluteString == "https://api.example.com/trains?page=3&ids=1,2")
        #expect(relations["prev"]?.absoluteString == "https://api.example.com/trains?page=1")
        #expect(relations["first"] == relations["prev"])
        #expect(relations["last"]?.absoluteString == "https://api.example.com/trains?page=9")
        #expect(relations.count == 4)
    }

    @Test("malformed links are skipped, and the first link of a relation wins")
    func malformedLinks() {
        let relations = LinkHeader.relations(
            [
                "garbage", "<unterminated; rel=next", "<https://a.example/1>; rel", "<https://a.example/2>",
                #"<https://a.example/3>; rel="next""#, #"<https://a.example/4>; rel="next""#, ",,,", "<>",
            ], base: nil)
        #expect(relations == ["next": URL(string: "https://a.example/3")].compactMapValues { $0 })
    }
}
