import Foundation

@testable import MonoRail
@testable import MonoRailClient

/// A MessagePack or JSON body merged in place against the same body merged through the JSON tree,
/// as a list and as one record: the same values or the same error, and nothing merged on an error.
enum ListFuzz {
    static let messagePack = "application/x-msgpack"
    static let json = "application/json"

    static func run(_ data: Data, contentType: String) {
        compare(data) { store in
            try Sample.merge(listBody: data, contentType: contentType, in: store).map(wireForm)
        } tree: { store in
            try TreeSample.merge(listBody: data, contentType: contentType, in: store).map(wireForm)
        }
        // The same bytes as one record, which is read in place by the same record source.
        compare(data) { store in
            [wireForm(try Sample.merge(recordBody: data, contentType: contentType, in: store))]
        } tree: { store in
            [wireForm(try TreeSample.merge(recordBody: data, contentType: contentType, in: store))]
        }
    }

    private static func compare(
        _ data: Data, inPlace: (ResourceStore) throws -> [[String: JSONValue]],
        tree: (ResourceStore) throws -> [[String: JSONValue]]
    ) {
        let inPlaceStore = offlineStore()
        let treeStore = offlineStore()
        var read: Result<[[String: JSONValue]], any Error> = .success([])
        MemoryBound.check(inputSize: data.count, perByte: 512, slack: 4 << 20) {
            read = Result { try inPlace(inPlaceStore) }
        }
        let built = Result { try tree(treeStore) }
        switch (read, built) {
        case (.success(let readForms), .success(let builtForms)):
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
            fatalError("in place \(read), through the tree \(built)")
        }
    }
}
