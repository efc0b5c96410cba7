import Foundation

@testable import MonoRailClient

/// The MessagePack readers and the Codable decoder, with the heap bounded by the input.
enum MessagePackFuzz {
    static func reader(_ data: Data) {
        var value: MessagePackValue?
        var json: JSONValue?
        MemoryBound.check(inputSize: data.count) {
            value = try? MessagePackReader().read(data)
            json = try? MessagePackReader().readJSON(data)
        }
        // The JSON reader refuses more (extension types, non-string keys), never less.
        if json != nil, value == nil { fatalError("readJSON read what read refused") }
        guard let value else { return }
        // What was read writes back and reads the same.
        let written = MessagePackWriter.serialize(value)
        guard let again = try? MessagePackReader().read(written) else { fatalError("a value read does not read back") }
        if !sameValue(again, value) { fatalError("a value read reads back differently") }
    }

    static func decoder(_ data: Data) {
        MemoryBound.check(inputSize: data.count) {
            _ = try? MessagePackDecoder().decode(Specimen.self, from: data)
            _ = try? MessagePackDecoder().decode([Specimen].self, from: data)
            _ = try? MessagePackDecoder().decode(JSONValue.self, from: data)
        }
        if let specimen = try? MessagePackDecoder().decode(Specimen.self, from: data) {
            // Whatever decodes encodes again: nothing out of range got in.
            do {
                _ = try MessagePackEncoder().encode(specimen)
                _ = try ValueEncoder().encode(specimen)
            } catch {
                // Only a non-finite Double or Float cannot be JSON; MessagePack holds those.
                if case EncodingError.invalidValue(let value, _) = error, value is Double || value is Float {
                    if let double = value as? Double, !double.isFinite { return }
                    if let float = value as? Float, !float.isFinite { return }
                }
                fatalError("a decoded value does not encode: \(error)")
            }
        }
    }

    /// Equality that holds NaN equal to itself.
    static func sameValue(_ a: MessagePackValue, _ b: MessagePackValue) -> Bool {
        switch (a, b) {
        // The writer picks the smallest encoding, so an int 16 holding 8537 comes back as a uint 16.
        case (.int(let x), .uint(let y)), (.uint(let y), .int(let x)): UInt64(exactly: x) == y
        case (.double(let x), .double(let y)): x == y || (x.isNaN && y.isNaN)
        case (.float(let x), .float(let y)): x == y || (x.isNaN && y.isNaN)
        case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy { sameValue($0, $1) }
        case (.map(let x), .map(let y)):
            x.count == y.count && zip(x, y).allSatisfy { sameValue($0.key, $1.key) && sameValue($0.value, $1.value) }
        default: a == b
        }
    }
}
