import Foundation
import MonoRail

/// Lists of ids and record keys as a stored query keeps them: a MessagePack array of strings (model
/// and id alternate for keys), read back with the same bounds as any MessagePack.
enum KeyList {
    static func encode(_ strings: [String]) -> Data {
        var writer = MessagePackWriter()
        writer.writeArrayHeader(count: strings.count)
        for string in strings { writer.write(string) }
        return writer.data
    }

    static func decode(_ data: Data) throws -> [String] {
        guard case .array(let values) = try MessagePackReader().read(data) else { throw Malformed() }
        return try values.map { value in
            guard case .string(let string) = value else { throw Malformed() }
            return string
        }
    }

    static func encode(_ keys: [RecordKey]) -> Data {
        encode(keys.flatMap { [$0.model, $0.id] })
    }

    static func decodeKeys(_ data: Data) throws -> [RecordKey] {
        let strings = try decode(data)
        guard strings.count.isMultiple(of: 2) else { throw Malformed() }
        return stride(from: 0, to: strings.count, by: 2).map { RecordKey(model: strings[$0], id: strings[$0 + 1]) }
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String { "a stored list of ids is not a MessagePack array of strings" }
    }
}
