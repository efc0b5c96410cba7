import Foundation

@testable import MonoRail
@testable import MonoRailClient

/// JSON bodies into a Codable struct and into a model with every field type, strict and lenient:
/// a value or a typed error, and whatever decodes can be written back.
enum ValueDecoderFuzz {
    static func run(_ data: Data) {
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
