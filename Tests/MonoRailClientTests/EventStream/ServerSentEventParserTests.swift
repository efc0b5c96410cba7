import Foundation
import MonoRailClient
import Testing

@Suite("Server-Sent Events, as the WHATWG EventSource specification reads them")
struct ServerSentEventParserTests {
    /// Everything `text` gives, fed whole, then fed in chunks of every size from 1 to 7 bytes: each
    /// way must give the same outputs.
    func parse(_ text: String, maxEventSize: Int = 1 << 20) -> [String] {
        parse(Data(text.utf8), maxEventSize: maxEventSize)
    }

    func parse(_ bytes: Data, maxEventSize: Int = 1 << 20) -> [String] {
        var whole = ServerSentEventParser(maxEventSize: maxEventSize)
        let expected = whole.parse(bytes).map(Self.describe)
        for size in 1...7 {
            var parser = ServerSentEventParser(maxEventSize: maxEventSize)
            var outputs: [String] = []
            var start = bytes.startIndex
            while start < bytes.endIndex {
                let end = min(start + size, bytes.endIndex)
                outputs += parser.parse(bytes[start..<end]).map(Self.describe)
                start = end
            }
            #expect(outputs == expected, "fed \(size) bytes at a time")
        }
        return expected
    }

    static func describe(_ output: ServerSentEventParser.Output) -> String {
        switch output {
        case .event(let event): "\(event.type)[\(event.id ?? "-")] \(event.text)"
        case .lastEventID(let id): "id \(id)"
        case .retry(let delay): "retry \(delay)"
        case .failure(let error): "failure \(error.code)"
        }
    }

    @Test("the specification's examples: data lines joined, ids kept, the last event unended and dropped")
    func specificationExamples() {
        #expect(parse("data: YHOO\ndata: +2\ndata: 10\n\n") == ["message[-] YHOO\n+2\n10"])
        #expect(
            parse(": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n") == [
                "message[1] first event", "message[] second event",
            ])
        #expect(parse("data\n\ndata\ndata\n\ndata:") == ["message[-] ", "message[-] \n"])
        #expect(parse("data:test\n\ndata: test\n\n") == ["message[-] test", "message[-] test"])
    }

    @Test("event names, ids that outlive their event, an id with NUL ignored, unknown fields and comments passed over")
    func fields() {
        #expect(
            parse("event: updated\nid: 7\nfoo: bar\n: heartbeat\ndata: {}\n\ndata: next\n\nid: 8\0x\ndata: still 7\n\n")
                == ["updated[7] {}", "message[7] next", "message[7] still 7"])
        // An empty event name is the default one.
        #expect(parse("event:\ndata: a\n\n") == ["message[-] a"])
    }

    @Test("an id with no data moves the cursor without an event; retry takes digits only")
    func cursorsAndRetry() {
        #expect(parse("retry: 1500\nid: 42\n\n") == ["retry 1.5 seconds", "id 42"])
        #expect(parse("retry: 1.5\nretry: -1\nretry:\ndata: x\n\n") == ["message[-] x"])
        // A blank line that changes nothing says nothing.
        #expect(parse("id: 3\n\n\n\n") == ["id 3"])
        #expect(parse("retry: 99999999999999999999999\n") == ["retry 86400.0 seconds"])
    }

    @Test("CR, LF and CRLF end lines, even split across chunks; a leading byte order mark is skipped")
    func lineEnds() {
        #expect(parse("data: a\r\ndata: b\rdata: c\n\r\n") == ["message[-] a\nb\nc"])
        #expect(parse("data: a\r\r") == ["message[-] a"])
        #expect(parse("\u{FEFF}data: bom\n\n") == ["message[-] bom"])
        // Only at the start: later, it is text.
        #expect(parse("data: x\n\n\u{FEFF}data: y\n\n") == ["message[-] x"])
    }

    @Test("an event larger than the limit is dropped and reported once; the stream goes on")
    func oversizedEvents() {
        let long = String(repeating: "x", count: 5000)
        #expect(
            parse("data: \(long)\ndata: more\n\ndata: fine\n\n", maxEventSize: 1024) == [
                "failure responseTooLarge", "message[-] fine",
            ])
        // Many short lines add up.
        let lines = String(repeating: "data: 0123456789\n", count: 200)
        #expect(
            parse(lines + "\ndata: after\n\n", maxEventSize: 1024) == ["failure responseTooLarge", "message[-] after"])
        // No line end at all: reported once, however long it goes on.
        var parser = ServerSentEventParser(maxEventSize: 1024)
        var failures = 0
        for _ in 0..<1000 {
            failures += parser.parse(Data(repeating: UInt8(ascii: "y"), count: 10_000)).count
        }
        #expect(failures == 1)
        #expect(parser.parse(Data("\n\ndata: back\n\n".utf8)).map(Self.describe) == ["message[-] back"])
    }

    @Test("a line that is not UTF-8 drops its event, reported; the stream goes on")
    func invalidUTF8() {
        var bytes = Data("id: 1\ndata: ".utf8)
        bytes += [0xFF, 0xFE, 0x41]
        bytes += Data("\ndata: rest\n\ndata: ok\n\n".utf8)
        #expect(parse(bytes) == ["failure decodingFailed", "message[1] ok"])
    }
}
