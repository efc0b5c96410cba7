import Foundation
import TestModels
import TestServer
import Testing

@testable import MonoRail

/// Every form a record is read from in place — JSON text, MessagePack — against the JSON tree, by
/// one suite: ``Train`` reads in place; ``TreeTrain``, the same fields with a record hook, always
/// through the tree. Merged from the same bytes, damaged or cut short, they must give the same
/// values or the same error, and a failed merge merges nothing.
@Suite("Every record source reads as the tree", .timeLimit(.minutes(5)))
struct RecordSourceTests {
    /// A form read in place.
    enum Backing: String, CaseIterable, CustomTestStringConvertible {
        case jsonText = "JSON text"
        case messagePack = "MessagePack"

        var testDescription: String { rawValue }

        var contentType: String { self == .jsonText ? "application/json" : "application/x-msgpack" }

        /// The document in this form.
        func body(_ json: String) throws -> [UInt8] {
            switch self {
            case .jsonText: Array(json.utf8)
            case .messagePack: [UInt8](MessagePackWriter.serialize(try JSONParser().parse(Data(json.utf8))))
            }
        }

        /// A byte to damage a body with: JSON's structure and odd bytes, or any byte at all.
        func damage(using generator: inout SplitMix) -> UInt8 {
            switch self {
            case .jsonText:
                let alphabet = Array(#"{}[]":,\ -+.eE0123456789tfnul"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xED, 0xFF]
                return alphabet.randomElement(using: &generator) ?? 0
            case .messagePack:
                return UInt8.random(in: 0...255, using: &generator)
            }
        }
    }

    // The documents of the JSON list suite, in every form.
    static let list = TextListTests.document
    static let record = TextListTests.record

    @Test("damaged lists give what the tree gives: the same values or the same error", arguments: Backing.allCases)
    func damagedLists(_ backing: Backing) async throws {
        let original = try backing.body(Self.list)
        await onOwnThread {
            let outcomes = Self.compareDamaged(original, backing, iterations: 3_000, seed: 0x5465_7874) {
                try Self.mergeList($0, $1, backing)
            }
            // Both kinds of outcome were exercised, not only failures.
            #expect(outcomes.same > 300 && outcomes.failed > 300, "\(outcomes)")
        }
    }

    @Test(
        "damaged single records give what the tree gives: the same values or the same error",
        arguments: Backing.allCases)
    func damagedRecords(_ backing: Backing) async throws {
        let original = try backing.body(Self.record)
        await onOwnThread {
            let outcomes = Self.compareDamaged(original, backing, iterations: 1_500, seed: 0x5265_636F) {
                try Self.mergeRecord($0, $1, backing)
            }
            #expect(outcomes.same > 100 && outcomes.failed > 300, "\(outcomes)")
        }
    }

    @Test("every truncation of a list or a record gives what the tree gives", arguments: Backing.allCases)
    func truncations(_ backing: Backing) throws {
        let list: (any ResourceModel.Type, Data) throws -> [[String]] = { try Self.mergeList($0, $1, backing) }
        let record: (any ResourceModel.Type, Data) throws -> [[String]] = { try Self.mergeRecord($0, $1, backing) }
        for (document, merge) in [(Self.list, list), (Self.record, record)] {
            let bytes = try backing.body(document)
            for length in 0..<bytes.count {
                let body = Data(bytes[..<length])
                let inPlace = Result { try merge(Train.self, body) }
                let tree = Result { try merge(TreeTrain.self, body) }
                switch (inPlace, tree) {
                case (.failure(let read as APIError), .failure(let built as APIError)):
                    #expect(read.message == built.message.replacingOccurrences(of: "TreeTrain", with: "Train"))
                default:
                    Issue.record("a truncation to \(length) bytes: in place \(inPlace), tree \(tree)")
                }
            }
        }
    }

    static func store() -> ResourceStore {
        ResourceStore(configuration: MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9")))
    }

    static func mergeList<Model: ResourceModel>(_ model: Model.Type, _ body: Data, _ backing: Backing) throws
        -> [[String]]
    {
        try model.merge(listBody: body, contentType: backing.contentType, in: store()).map(TextListTests.summary)
    }

    static func mergeRecord<Model: ResourceModel>(_ model: Model.Type, _ body: Data, _ backing: Backing) throws
        -> [[String]]
    {
        [TextListTests.summary(try model.merge(recordBody: body, contentType: backing.contentType, in: store()))]
    }

    /// Damages `original` `iterations` times and merges each result as ``Train`` (in place) and as
    /// ``TreeTrain`` (through the tree): the same summaries, or errors with the same code and message.
    static func compareDamaged(
        _ original: [UInt8], _ backing: Backing, iterations: Int, seed: UInt64,
        merge: (any ResourceModel.Type, Data) throws -> [[String]]
    ) -> (same: Int, failed: Int) {
        var generator = SplitMix(state: seed)
        var outcomes = (same: 0, failed: 0)
        for iteration in 0..<iterations {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: bytes.removeLast(Int.random(in: 1...min(8, bytes.count - 1), using: &generator))
                case 1: bytes.insert(backing.damage(using: &generator), at: position)
                case 2: bytes.remove(at: position)
                default: bytes[position] = backing.damage(using: &generator)
                }
            }
            let body = Data(bytes)
            let inPlace = Result { try merge(Train.self, body) }
            let tree = Result { try merge(TreeTrain.self, body) }
            switch (inPlace, tree) {
            case (.success(let read), .success(let built)):
                #expect(read == built, "iteration \(iteration)")
                outcomes.same += 1
            case (.failure(let readError), .failure(let builtError)):
                let read = readError as? APIError
                let built = builtError as? APIError
                // Messages name the model; the two models differ only in name.
                let builtMessage = built?.message.replacingOccurrences(of: "TreeTrain", with: "Train")
                #expect(read != nil && read?.code == built?.code, "iteration \(iteration)")
                #expect(read?.message == builtMessage, "iteration \(iteration)")
                outcomes.failed += 1
            default:
                Issue.record("iteration \(iteration): in place \(inPlace), tree \(tree): \(bytes)")
            }
        }
        return outcomes
    }
}

/// The same fields as ``Train``, always read through the tree: a model that rewrites records (here
/// with the identity) has every record built as a tree first.
@Resource(name: "train")
final class TreeTrain {
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool = false
    var builtAt: Date?
    var tags: [String] = []

    static func customDeserialize(_ record: JSONValue) throws -> JSONValue { record }
}
