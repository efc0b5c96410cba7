import Foundation

@testable import MonoRail
@testable import MonoRailClient

/// A MessagePack or JSON list merged in place against the same list merged through the JSON tree:
/// the same values or the same error, and nothing merged on an error.
enum ListFuzz {
    static let messagePack = "application/x-msgpack"
    static let json = "application/json"

    static func run(_ data: Data, contentType: String) {
        let inPlaceStore = offlineStore()
        let treeStore = offlineStore()
        var inPlace: Result<[Sample], any Error> = .success([])
        MemoryBound.check(inputSize: data.count, perByte: 512, slack: 4 << 20) {
            inPlace = Result { try Sample.merge(listBody: data, contentType: contentType, in: inPlaceStore) }
        }
        let tree = Result { try TreeSample.merge(listBody: data, contentType: contentType, in: treeStore) }
        switch (inPlace, tree) {
        case (.success(let read), .success(let built)):
            let readForms = read.map(wireForm)
            let builtForms = built.map(wireForm)
            if readForms != builtForms { fatalError("in place \(readForms), through the tree \(builtForms)") }
        case (.failure(let readError), .failure(let builtError)):
            guard let read = readError as? APIError, let built = builtError as? APIError else {
                fatalError("not APIErrors: \(readError), \(builtError)")
            }
            let builtMessage = built.message.replacingOccurrences(of: "TreeSample", with: "Sample")
            if read.code != built.code || read.message != builtMessage {
                fatalError("in place: \(read.message); through the tree: \(built.message)")
            }
            if inPlaceStore.count != 0 || treeStore.count != 0 { fatalError("a failed merge left records") }
        default:
            fatalError("in place \(inPlace), through the tree \(tree)")
        }
    }
}
