package import Foundation

/// Serializes ``JSONValue`` trees to compact UTF-8 JSON.
package enum JSONWriter {
    /// Writes `value` as compact JSON. Non-finite doubles, which JSON cannot express, become `null`
    /// (the encoders reject them before they get here).
    package static func serialize(_ value: JSONValue, sortedKeys: Bool = false) -> Data {
        var output = [UInt8]()
        output.reserveCapacity(256)
        write(value, into: &output, sortedKeys: sortedKeys)
        return Data(output)
    }

    private static func write(_ value: JSONValue, into output: inout [UInt8], sortedKeys: Bool) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let bool): output.append(contentsOf: (bool ? "true" : "false").utf8)
        case .int(let int): output.append(contentsOf: String(int).utf8)
        case .uint(let uint): output.append(contentsOf: String(uint).utf8)
        case .double(let double):
            if double.isFinite {
                output.append(contentsOf: double.description.utf8)
            } else {
                output.append(contentsOf: "null".utf8)
            }
        case .string(let string): writeString(string, into: &output)
        case .array(let array):
            output.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output, sortedKeys: sortedKeys)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            let keys = sortedKeys ? object.keys.sorted() : Array(object.keys)
            for (index, key) in keys.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                if let member = object[key] {
                    write(member, into: &output, sortedKeys: sortedKeys)
                }
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                output.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
