/// Reads MessagePack headers one at a time from a buffer, checking every length against the bytes
/// that remain before anything is allocated.
///
/// The tree builders (``MessagePackReader``) sit on top of it, so the format's byte layout is
/// decoded in exactly one place.
package struct MessagePackCursor {
    /// What one header announces. Strings, binary and extension payloads are `count` bytes starting
    /// at the cursor's offset; arrays and maps are followed by their elements.
    package enum Header {
        case `nil`
        case bool(Bool)
        case int(Int64)
        case uint(UInt64)
        case float(Float)
        case double(Double)
        case string(count: Int)
        case binary(count: Int)
        case array(count: Int)
        case map(count: Int)
        case `extension`(type: Int8, count: Int)
    }

    package let bytes: UnsafeRawBufferPointer
    package private(set) var offset = 0

    package init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// How many elements to reserve room for when an array or map announces `count`.
    ///
    /// The header only proves that `count` bytes remain, and every nesting level may announce as
    /// many: reserving them all let 10 MiB of nested `map32` headers claim 557 MB. Reserving at
    /// most 16 and letting the collection grow keeps memory proportional to the elements actually
    /// read, at the cost of a few doublings for long lists.
    package static func initialCapacity(_ count: Int) -> Int { Swift.min(count, 16) }

    package var isAtEnd: Bool { offset == bytes.count }
    package var remaining: Int { bytes.count - offset }

    package func error(_ code: MessagePackError.Code, _ reason: String, at position: Int? = nil) -> MessagePackError {
        MessagePackError(code, offset: position ?? offset, reason: reason)
    }

    @inline(__always) private mutating func byte() throws(MessagePackError) -> UInt8 {
        guard offset < bytes.count else { throw error(.truncated, "the input ends inside a value") }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always) private mutating func load<T: FixedWidthInteger>(_: T.Type) throws(MessagePackError) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw error(.truncated, "the input ends inside a \(size)-byte number") }
        defer { offset += size }
        return T(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// Reads a length and checks that at least `count × minimumSize` bytes remain, so a hostile
    /// length can never make a reader reserve memory for data that is not there.
    @inline(__always) private mutating func length<T: FixedWidthInteger>(
        _: T.Type, minimumSize: Int = 1, of what: String
    ) throws(MessagePackError) -> Int {
        let start = offset
        let count = Int(try load(T.self))
        guard count <= remaining / minimumSize else {
            throw error(
                .truncated,
                "\(what) claims \(count) \(minimumSize == 1 ? "bytes" : "elements") but only \(remaining) bytes remain",
                at: start)
        }
        return count
    }

    /// Reads the next header.
    package mutating func header() throws(MessagePackError) -> Header {
        let start = offset
        let lead = try byte()
        switch lead {
        case 0x00...0x7f: return .uint(UInt64(lead))
        case 0x80...0x8f: return try checked(.map(count: Int(lead & 0x0f)), at: start)
        case 0x90...0x9f: return try checked(.array(count: Int(lead & 0x0f)), at: start)
        case 0xa0...0xbf: return try checked(.string(count: Int(lead & 0x1f)), at: start)
        case 0xc0: return .nil
        case 0xc1: throw error(.invalidByte, "0xc1 is reserved and never used", at: start)
        case 0xc2: return .bool(false)
        case 0xc3: return .bool(true)
        case 0xc4: return .binary(count: try length(UInt8.self, of: "bin 8"))
        case 0xc5: return .binary(count: try length(UInt16.self, of: "bin 16"))
        case 0xc6: return .binary(count: try length(UInt32.self, of: "bin 32"))
        case 0xc7:
            let count = try length(UInt8.self, of: "ext 8")
            return .extension(type: Int8(bitPattern: try byte()), count: try checkedPayload(count, at: start))
        case 0xc8:
            let count = try length(UInt16.self, of: "ext 16")
            return .extension(type: Int8(bitPattern: try byte()), count: try checkedPayload(count, at: start))
        case 0xc9:
            let count = try length(UInt32.self, of: "ext 32")
            return .extension(type: Int8(bitPattern: try byte()), count: try checkedPayload(count, at: start))
        case 0xca: return .float(Float(bitPattern: try load(UInt32.self)))
        case 0xcb: return .double(Double(bitPattern: try load(UInt64.self)))
        case 0xcc: return .uint(UInt64(try load(UInt8.self)))
        case 0xcd: return .uint(UInt64(try load(UInt16.self)))
        case 0xce: return .uint(UInt64(try load(UInt32.self)))
        case 0xcf: return .uint(try load(UInt64.self))
        case 0xd0: return .int(Int64(try load(Int8.self)))
        case 0xd1: return .int(Int64(try load(Int16.self)))
        case 0xd2: return .int(Int64(try load(Int32.self)))
        case 0xd3: return .int(try load(Int64.self))
        case 0xd4...0xd8:
            let count = 1 << Int(lead - 0xd4)
            return .extension(type: Int8(bitPattern: try byte()), count: try checkedPayload(count, at: start))
        case 0xd9: return .string(count: try length(UInt8.self, of: "str 8"))
        case 0xda: return .string(count: try length(UInt16.self, of: "str 16"))
        case 0xdb: return .string(count: try length(UInt32.self, of: "str 32"))
        case 0xdc: return .array(count: try length(UInt16.self, of: "array 16"))
        case 0xdd: return .array(count: try length(UInt32.self, of: "array 32"))
        case 0xde: return .map(count: try length(UInt16.self, minimumSize: 2, of: "map 16"))
        case 0xdf: return .map(count: try length(UInt32.self, minimumSize: 2, of: "map 32"))
        default: return .int(Int64(Int8(bitPattern: lead)))  // 0xe0...0xff: negative fixint
        }
    }

    /// Checks a fix-form length against the bytes that remain.
    private func checked(_ header: Header, at start: Int) throws(MessagePackError) -> Header {
        switch header {
        case .string(let count) where count > remaining,
            .array(let count) where count > remaining,
            .map(let count) where count > remaining / 2:
            throw error(.truncated, "a value claims \(count) items but only \(remaining) bytes remain", at: start)
        default: return header
        }
    }

    private func checkedPayload(_ count: Int, at start: Int) throws(MessagePackError) -> Int {
        guard count <= remaining else {
            throw error(.truncated, "an extension claims \(count) bytes but only \(remaining) remain", at: start)
        }
        return count
    }

    /// Takes `count` payload bytes announced by the last header.
    @inline(__always) package mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
        // The header already checked `count` against the remaining bytes.
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }

    /// Steps over one complete value without building it. Iterative, so hostile nesting cannot
    /// exhaust the stack; nesting beyond `maxDepth` is refused as the tree builders refuse it.
    ///
    /// - Parameter checkingJSON: Also refuse what ``MessagePackReader/readJSON(_:)`` refuses, in the
    ///   order it would: strings that are not UTF-8, map keys that are neither strings nor integers,
    ///   extension types other than the timestamp, and empty containers nested too deep. A value
    ///   stepped over this way is known to read as JSON, so its parts can be read in place.
    package mutating func skipValue(maxDepth: Int, checkingJSON: Bool = false) throws(MessagePackError) {
        // Two copies of one walk, each with the flag a constant: the Codable decoder steps over
        // every value this way, and testing the flag per item cost it about a tenth of its speed.
        if checkingJSON {
            try walk(maxDepth: maxDepth, checkingJSON: true)
        } else {
            try walk(maxDepth: maxDepth, checkingJSON: false)
        }
    }

    @inline(__always) private mutating func walk(maxDepth: Int, checkingJSON: Bool) throws(MessagePackError) {
        if try skipScalar(validatingUTF8: checkingJSON) { return }
        // Per open container: items left × 2, plus 1 for a map. A map counts its keys and values,
        // so its keys come at even counts.
        var open = OpenContainers()
        repeat {
            let start = offset
            let isKey = checkingJSON && !open.isEmpty && open.last & 1 == 1 && (open.last >> 1) % 2 == 0
            let header = try header()
            if isKey {
                switch header {
                case .string, .int, .uint: break
                default:
                    throw error(.unsupportedKey, "a map key must be a string or an integer, found \(header)", at: start)
                }
            }
            switch header {
            case .string(let count):
                let payload = take(count)
                if checkingJSON, !String.isValidUTF8(payload) {
                    throw error(.invalidUTF8, "a string is not valid UTF-8", at: start)
                }
            case .binary(let count): offset += count
            case .extension(let type, let count):
                if checkingJSON, type != -1 {
                    throw error(.unsupportedExtension, "extension type \(type) has no JSON equivalent", at: start)
                }
                let payload = take(count)
                if type == -1, MessagePackTimestamp.read(payload) == nil {
                    throw error(.invalidTimestamp, "a timestamp of \(count) bytes is invalid", at: start)
                }
            case .array(let count), .map(let count):
                // The JSON reader counts the depth of an empty container too; the plain walk only
                // of containers it enters.
                guard count > 0 || checkingJSON else { break }
                guard open.count < maxDepth else {
                    throw error(.tooDeep, "nesting deeper than \(maxDepth)", at: start)
                }
                guard count > 0 else { break }
                if case .map = header { open.append(count << 2 | 1) } else { open.append(count << 1) }
                continue
            default: break
            }
            while !open.isEmpty {
                if open.last >> 1 > 1 {
                    open.last -= 2
                    break
                }
                open.removeLast()
            }
        } while !open.isEmpty
    }

    /// Steps over the next value if it is a number, `nil`, a Boolean or a string, which need no stack
    /// of open containers, and says whether it did. Anything else, and anything malformed, is left
    /// to the general walk, which reports it.
    @inline(__always) package mutating func skipScalar(validatingUTF8: Bool = true) throws(MessagePackError) -> Bool {
        guard offset < bytes.count else { return false }
        let lead = bytes[offset]
        let size: Int
        switch lead {
        case 0x00...0x7f, 0xc0, 0xc2, 0xc3, 0xe0...0xff: size = 1
        case 0xcc, 0xd0: size = 2
        case 0xcd, 0xd1: size = 3
        case 0xca, 0xce, 0xd2: size = 5
        case 0xcb, 0xcf, 0xd3: size = 9
        case 0xa0...0xbf, 0xd9:
            let start = offset
            guard case .string(let count) = try header() else { return false }
            let payload = take(count)
            if validatingUTF8, !String.isValidUTF8(payload) {
                throw error(.invalidUTF8, "a string is not valid UTF-8", at: start)
            }
            return true
        default: return false
        }
        guard size <= remaining else { return false }
        offset += size
        return true
    }

    /// Takes a string payload already checked as UTF-8 (``skipValue(maxDepth:checkingJSON:)``).
    package mutating func checkedString(_ count: Int) -> String {
        String(decoding: take(count), as: UTF8.self)
    }

    /// Takes a string payload, validating UTF-8.
    package mutating func string(_ count: Int) throws(MessagePackError) -> String {
        let start = offset
        guard let string = String.validatedUTF8(take(count).assumingMemoryBound(to: UInt8.self)) else {
            throw error(.invalidUTF8, "a string is not valid UTF-8", at: start)
        }
        return string
    }
}

/// One entry per open container while stepping over a value: the first eight levels are held
/// inline and only deeper ones on the heap, so walking ordinary values (a record, a list of tags)
/// allocates nothing.
struct OpenContainers {
    private var inline: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var deeper: [Int] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The innermost entry.
    var last: Int {
        get {
            // A switch, not `withUnsafeBytes(of:)`, which would copy the whole tuple on every read.
            switch count - 1 {
            case 0: inline.0
            case 1: inline.1
            case 2: inline.2
            case 3: inline.3
            case 4: inline.4
            case 5: inline.5
            case 6: inline.6
            case 7: inline.7
            default: deeper[count - 9]
            }
        }
        set {
            let index = count - 1
            if index < 8 {
                withUnsafeMutableBytes(of: &inline) {
                    $0.storeBytes(of: newValue, toByteOffset: index * 8, as: Int.self)
                }
            } else {
                deeper[index - 8] = newValue
            }
        }
    }

    mutating func append(_ entry: Int) {
        count += 1
        if count > 8 { deeper.append(entry) } else { last = entry }
    }

    mutating func removeLast() {
        if count > 8 { deeper.removeLast() }
        count -= 1
    }
}
