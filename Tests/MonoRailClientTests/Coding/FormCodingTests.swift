import Foundation
import MonoRailClient
import TestServer
import Testing

@Suite("Rails forms", .timeLimit(.minutes(5)))
struct FormCodingTests {
    @Test("bracket names and the WHATWG form escaping")
    func encoding() {
        #expect(
            FormEncoder.encode(["train": ["company": "DB & Co", "tags": ["a", "b"]]])
                == "train%5Bcompany%5D=DB+%26+Co&train%5Btags%5D%5B%5D=a&train%5Btags%5D%5B%5D=b")
        #expect(FormEncoder.escape("a b*-._~ü/") == "a+b*-._%7E%C3%BC%2F")
        #expect(
            FormEncoder.encode(["cars": [["occupancy": 1], ["occupancy": 2]], "none": nil, "empty": []])
                == "cars%5B%5D%5Boccupancy%5D=1&cars%5B%5D%5Boccupancy%5D=2&none=")
        #expect(FormEncoder.encode("bare") == "")
    }

    @Test("read back as Rack does, arrays of objects included")
    func decoding() {
        let tree: JSONValue = [
            "train": ["company": "DB & Co = ü", "tags": ["a", "b"], "depot": ["city": "Wien"]],
            "cars": [["occupancy": "1", "flag": "true"], ["occupancy": "2"]],
        ]
        let body = FormEncoder.encode(tree)
        #expect(FormDecoder.decode(body) == tree)
        #expect(FormDecoder.decode("a=%ZZ&b&=x&c=1+2") == ["a": "%ZZ", "b": "", "c": "1 2"])
        // Hostile nesting is dropped rather than recursed into; shapes that disagree keep the last.
        let deep = "x" + String(repeating: "[k]", count: 100_000) + "=1&ok=1"
        #expect(FormDecoder.decode(deep) == ["ok": "1"])
        #expect(FormDecoder.decode("t=a&t[x]=1")["t"]?["x"] == "1")
    }

    // Decoding once copied every array and object on the way down for each pair: 64,000 pairs took
    // 41 s. Linear, 200,000 pairs finish well inside the suite's time limit; quadratic they would
    // take about ten minutes.
    @Test("long forms decode in one pass: 200,000 array elements and 100,000 objects")
    func longForms() async {
        await onOwnThread {
            let count = 200_000
            let flat = FormDecoder.decode(String(repeating: "a[]=v&", count: count))
            #expect(flat["a"]?.arrayValue?.count == count)
            #expect(flat["a"]?[count - 1] == "v")
            let objects = FormDecoder.decode(
                (0..<(count / 2)).map { "cars[][occupancy]=\($0)&cars[][flag]=t" }.joined(separator: "&"))
            let cars = objects["cars"]?.arrayValue ?? []
            #expect(cars.count == count / 2)
            #expect(cars.last == ["occupancy": .string("\(count / 2 - 1)"), "flag": "t"])
            let keyed = FormDecoder.decode((0..<count).map { "t[k\($0)]=\($0)" }.joined(separator: "&"))
            #expect(keyed["t"]?.objectValue?.count == count)
        }
    }
}
