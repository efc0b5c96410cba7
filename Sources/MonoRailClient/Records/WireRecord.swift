package import Foundation

/// A record as it came in a response, kept until the record cache is given it.
package enum WireRecord {
    /// From a JSON body, or a MessagePack record read as a tree, with the model's keys in the order
    /// to write them.
    case tree(JSONValue, keyOrder: [String])
    /// The bytes of a MessagePack record read in place.
    case packed(Data)
    /// The bytes of a JSON record read in place, already checked; made MessagePack when cached.
    case text(Data, keyOrder: [String])

    /// The record as a record cache is given it: its JSON text as it came, for a cache that takes
    /// JSON; else MessagePack.
    package func stored(acceptingJSON: Bool) -> (body: Data, isJSON: Bool) {
        if acceptingJSON, case .text(let bytes, _) = self { return (bytes, true) }
        return (messagePack, false)
    }

    /// The record in MessagePack, the form a record cache keeps. A tree's keys are written in the
    /// model's schema order, the order the in-place reader tries first, then any others.
    package var messagePack: Data {
        switch self {
        case .packed(let bytes):
            return bytes
        case .text(let bytes, let order):
            // Checked when it was read, against the nesting limit then in force: it parses.
            return WireRecord.tree((try? JSONParser(maxDepth: .max).parse(bytes)) ?? .null, keyOrder: order).messagePack
        case .tree(let value, let order):
            guard case .object(let object) = value else { return MessagePackWriter.serialize(value) }
            var writer = MessagePackWriter(reservingCapacity: 256)
            writer.writeMapHeader(count: object.count)
            var written = 0
            for key in order {
                guard let member = object[key] else { continue }
                writer.write(key)
                writer.write(member)
                written += 1
            }
            if written < object.count {
                for (key, member) in object where !order.contains(key) {
                    writer.write(key)
                    writer.write(member)
                }
            }
            return writer.data
        }
    }
}
