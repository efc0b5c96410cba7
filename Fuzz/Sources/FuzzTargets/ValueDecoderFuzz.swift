import Foundation

@testable import MonoRail
@testable import MonoRailClient

/// JSON bodies into a Codable struct and into a model with every field type, strict and lenient:
/// a value or a typed error, and whatever decodes can be written back. The decoder that reads the
/// bytes where they lie (`JSONTapeDecoder`) against the one that reads the parser's tree: the same
/// value, or the same error.
enum ValueDecoderFuzz {
    static func run(_ data: Data) {
        for coercion in [CodingOptions.Coercion.strict, .lenient] {
            let decoder = ValueDecoder(options: CodingOptions(coercion: coercion))
            compare(Specimen.self, data, decoder)
            compare([String: Int].self, data, decoder)
            compare([Decimal].self, data, decoder)
        }
        guard let tree = try? JSONParser().parse(data) else { return }
        for coercion in [CodingOptions.Coercion.strict, .lenient] {
            let decoder = ValueDecoder(options: CodingOptions(coercion: coercion))
            if let specimen = try? decoder.decode(Specimen.self, from: tree) {
                do {
                    _ = try ValueEncoder().encode(specimen)
                } catch {
                    fatalError("a decoded Specimen does not encode: \(error)")
                }
            }
            _ = try? decoder.decode([String: Int].self, from: tree)
            _ = try? decoder.decode([Decimal].self, from: tree)
        }
        for lenient in [false, true] {
            let store = offlineStore(lenient: lenient)
            do {
                _ = wireForm(try Sample.merge(recordBody: data, in: store))
            } catch let error as APIError {
                guard error.code == .decodingFailed || error.code == .inconsistentResponse else {
                    fatalError("unexpected error code: \(error)")
                }
                if store.count != 0 { fatalError("a failed merge left \(store.count) records") }
            } catch {
                fatalError("an error that is not an APIError: \(error)")
            }
            if let list = try? Sample.merge(listBody: data, in: store) {
                for sample in list { _ = wireForm(sample) }
            }
        }
    }
}

extension ValueDecoderFuzz {
    /// Fails unless decoding the bytes and decoding their tree give equal values or errors that read
    /// the same. A dictionary's members are tried in its keys' order, which differs between the
    /// two, so an error inside one need only be an error on both sides.
    static func compare<T: Decodable & Equatable>(_ type: T.Type, _ data: Data, _ decoder: ValueDecoder) {
        let tree = Result { try decoder.decode(type, from: try decoder.parser.parse(data)) }
        let tape = Result { try decoder.decode(type, from: data) }
        switch (tree, tape) {
        case (.success(let a), .success(let b)):
            if a != b { fatalError("the tape decoded \(b), the tree \(a)") }
        case (.failure(let a), .failure(let b)):
            if "\(a)" == "\(b)" { return }
            if T.self == [String: Int].self { return }
            if case .some(let context) = (a as? DecodingError)?.context,
                context.codingPath.contains(where: { $0.stringValue == "ratios" })
            {
                return
            }
            fatalError("the tape failed with \(b), the tree with \(a)")
        default:
            fatalError("the tape gave \(tape), the tree \(tree)")
        }
    }
}

extension DecodingError {
    fileprivate var context: Context? {
        switch self {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
            .dataCorrupted(let context):
            context
        @unknown default: nil
        }
    }
}
