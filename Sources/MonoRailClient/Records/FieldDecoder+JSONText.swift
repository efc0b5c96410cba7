import Foundation

// Values of a JSON text read in place (``JSONTextValue``): a scalar of exactly the field's type is
// read from its bytes and tells the record reader where it ends; anything else is read by the tree's
// decoder, which reports the error with the field's path.
extension FieldDecoder {
    /// Tells the record reader where the value ends: said only by a read that checked all of it as
    /// the parser would, so the reader need not check it again.
    private func read(to end: Int) { coder.valueEnd = end }

    /// The tree's decoding of the value, for every case the readers below do not read themselves.
    func general<Value: Decodable>(_ value: JSONTextValue, scalar: (value: JSONValue, end: Int)? = nil) throws
        -> Value
    {
        if let scalar {
            read(to: scalar.end)
            return try coder.decode(Value.self, from: scalar.value)
        }
        var cursor = value.cursor
        let decoded = try coder.decode(Value.self, fromJSONAt: &cursor, depth: value.depth)
        read(to: cursor.offset)
        return decoded
    }

    func string(_ value: JSONTextValue) throws -> String {
        let scalar = value.scalar()
        if case .string(let string)? = scalar?.value, let end = scalar?.end {
            read(to: end)
            return string
        }
        return try general(value, scalar: scalar)
    }

    func int(_ value: JSONTextValue) throws -> Int {
        let scalar = value.scalar()
        switch scalar?.value {
        case .int(let int)?:
            if let exact = Int(exactly: int), let end = scalar?.end {
                read(to: end)
                return exact
            }
        case .uint(let uint)?:
            if let exact = Int(exactly: uint), let end = scalar?.end {
                read(to: end)
                return exact
            }
        default: break
        }
        return try general(value, scalar: scalar)
    }

    func double(_ value: JSONTextValue) throws -> Double {
        guard let scalar = value.scalar() else { return try general(value) }
        let double: Double
        switch scalar.value {
        case .double(let value): double = value
        case .int(let int): double = Double(int)
        case .uint(let uint): double = Double(uint)
        default: return try general(value, scalar: scalar)
        }
        read(to: scalar.end)
        return double
    }

    func bool(_ value: JSONTextValue) throws -> Bool {
        let scalar = value.scalar()
        if case .bool(let bool)? = scalar?.value, let end = scalar?.end {
            read(to: end)
            return bool
        }
        return try general(value, scalar: scalar)
    }

    func date(_ value: JSONTextValue) throws -> Date {
        // The common case, a date string without escapes, is read from its bytes.
        var cursor = value.cursor
        if cursor.current == UInt8(ascii: "\""), let scanned = try? cursor.scanString(), !scanned.hasEscapes,
            let date = coder.options.dateFormats.date(
                fromUTF8: UnsafeBufferPointer(rebasing: value.bytes[(value.offset + 1)..<(cursor.offset - 1)]))
        {
            read(to: cursor.offset)
            return date
        }
        let scalar = value.scalar()
        var date: Date?
        switch scalar?.value {
        case .int(let int)?: date = DateFormat.date(secondsSince1970: Double(int))
        case .uint(let uint)?: date = DateFormat.date(secondsSince1970: Double(uint))
        case .double(let double)?: date = DateFormat.date(secondsSince1970: double)
        default: break
        }
        if let date, let end = scalar?.end {
            read(to: end)
            return date
        }
        // Anything else, including a number outside the supported dates, takes the general path,
        // which reports the error with the field's path.
        return try general(value, scalar: scalar)
    }

    func strings(_ value: JSONTextValue) throws -> [String] {
        var cursor = value.cursor
        // The array is checked as the parser checks it, its depth included, or the general path reads it.
        if cursor.current == UInt8(ascii: "["), value.depth + 1 <= value.maxDepth {
            cursor.offset += 1
            var strings: [String] = []
            cursor.skipWhitespace()
            if cursor.current == UInt8(ascii: "]") {
                read(to: cursor.offset + 1)
                return strings
            }
            // Room for a few at once: grown one by one, three strings cost three allocations.
            strings.reserveCapacity(4)
            while cursor.current == UInt8(ascii: "\""), let string = try? cursor.parseString() {
                strings.append(string)
                cursor.skipWhitespace()
                guard cursor.current == UInt8(ascii: ",") else {
                    if cursor.current == UInt8(ascii: "]") {
                        read(to: cursor.offset + 1)
                        return strings
                    }
                    break
                }
                cursor.offset += 1
                cursor.skipWhitespace()
            }
        }
        return try general(value)
    }
}
