import Foundation

// Values of a MessagePack body read in place (``PackedValue``): a value whose wire type is
// exactly the field's is read from its bytes; anything else (a number in a string field, a nested
// struct, a timestamp) is turned into the ``JSONValue`` a JSON body would have given and decoded by
// the same code as JSON (measured: for a nested struct, `init(from:)` costs the same from bytes as
// from its tree).
extension FieldDecoder {
    func string(_ value: PackedValue) throws -> String {
        if case (.string(let count), var cursor)? = value.header() { return cursor.checkedString(count) }
        return try coder.decode(String.self, from: value.json())
    }

    func int(_ value: PackedValue) throws -> Int {
        let exact: Int? =
            switch value.header()?.0 {
            case .int(let int): Int(exactly: int)
            case .uint(let uint): Int(exactly: uint)
            case .double(let double): Int(exactly: double)
            case .float(let float): Int(exactly: float)
            default: nil
            }
        if let exact { return exact }
        return try coder.decode(Int.self, from: value.json())
    }

    func double(_ value: PackedValue) throws -> Double {
        switch value.header()?.0 {
        case .double(let double): return double
        case .float(let float): return Double(float)
        case .int(let int): return Double(int)
        case .uint(let uint): return Double(uint)
        default: return try coder.decode(Double.self, from: value.json())
        }
    }

    func bool(_ value: PackedValue) throws -> Bool {
        if case .bool(let bool)? = value.header()?.0 { return bool }
        return try coder.decode(Bool.self, from: value.json())
    }

    func date(_ value: PackedValue) throws -> Date {
        switch value.header() {
        case (.string(let count), var cursor)?:
            if let date = coder.options.dateFormats.date(from: cursor.checkedString(count)) { return date }
        case (.int(let int), _)?:
            if let date = DateFormat.date(secondsSince1970: Double(int)) { return date }
        case (.uint(let uint), _)?:
            if let date = DateFormat.date(secondsSince1970: Double(uint)) { return date }
        case (.double(let double), _)?:
            if let date = DateFormat.date(secondsSince1970: double) { return date }
        default: break
        }
        // Anything else, including a number outside the supported dates, takes the general path,
        // which reports the error with the field's path.
        return try coder.decode(Date.self, from: value.json())
    }

    func strings(_ value: PackedValue) throws -> [String] {
        if case (.array(let count), var cursor)? = value.header() {
            var strings: [String] = []
            strings.reserveCapacity(MessagePackCursor.initialCapacity(count))
            for _ in 0..<count {
                guard case .string(let length)? = try? cursor.header() else { break }
                strings.append(cursor.checkedString(length))
            }
            if strings.count == count { return strings }
        }
        return try coder.decode([String].self, from: value.json())
    }
}
