import Foundation

/// A record as it came in a response, kept until the record cache is given it.
enum WireRecord {
    /// From a JSON body, or a MessagePack record read as a tree.
    case tree(JSONValue)
    /// The bytes of a MessagePack record read in place.
    case packed(Data)

    /// The record in MessagePack, the form a record cache keeps.
    var messagePack: Data {
        switch self {
        case .tree(let value): MessagePackWriter.serialize(value)
        case .packed(let bytes): bytes
        }
    }
}
