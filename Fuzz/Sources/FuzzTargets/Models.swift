import Foundation

@testable import MonoRail
@testable import MonoRailClient

enum Livery: String, Codable, Sendable { case red, blue }

struct Depot: Codable, Sendable, Equatable {
    var city: String
    var platforms: Int
}

/// A model with one field of every supported type, read in place from MessagePack.
@Resource
final class Sample {
    var text: String = ""
    var int8: Int8 = 0
    var int64: Int64 = 0
    var uint64: UInt64 = 0
    var double: Double = 0
    var float: Float = 0
    var decimal: Decimal = 0
    var flag: Bool = false
    var date: Date?
    var link: URL?
    var uuid: UUID?
    var numbers: [Int] = []
    var tags: [String] = []
    var ratios: [String: Double] = [:]
    var extra: JSONValue = .null
    var livery: Livery = .red
    var depot: Depot?
    var count = 7
    @Field(transform: .date(format: "y/MM/dd HH:mm:ss Z")) var checkedAt: Date?
    @Field(transform: .percentage) var fill: Double?
}

/// The same fields; rewriting records sends every MessagePack record through the JSON tree.
@Resource(name: "sample", plural: "samples")
final class TreeSample {
    var text: String = ""
    var int8: Int8 = 0
    var int64: Int64 = 0
    var uint64: UInt64 = 0
    var double: Double = 0
    var float: Float = 0
    var decimal: Decimal = 0
    var flag: Bool = false
    var date: Date?
    var link: URL?
    var uuid: UUID?
    var numbers: [Int] = []
    var tags: [String] = []
    var ratios: [String: Double] = [:]
    var extra: JSONValue = .null
    var livery: Livery = .red
    var depot: Depot?
    var count = 7
    @Field(transform: .date(format: "y/MM/dd HH:mm:ss Z")) var checkedAt: Date?
    @Field(transform: .percentage) var fill: Double?

    static func customDeserialize(_ record: JSONValue) throws -> JSONValue { record }
}

/// A store that never talks to a server: the targets merge bodies they were handed.
func offlineStore(lenient: Bool = false) -> ResourceStore {
    var configuration = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"))
    if lenient { configuration.coding.coercion = .lenient }
    return ResourceStore(configuration: configuration)
}

/// Each field of a merged record as the model would send it, by name: for comparing two instances,
/// and proof that whatever merged can be written back (a date out of range used to trap here).
func wireForm(_ model: some ResourceModel) -> [String: JSONValue] {
    let values = model._$state.snapshot().values
    let coder = FieldCoder(options: CodingOptions())
    var form: [String: JSONValue] = ["id": model.id.map { .string($0.description) } ?? .null]
    for field in type(of: model).resourceSchema.fields where field.embedded == nil {
        do {
            form[field.name] = try field.encode(values, coder)
        } catch {
            // JSON has no NaN or infinity; MessagePack does, so a Double field may hold one.
            guard case EncodingError.invalidValue(let value, _) = error, let double = value as? Double,
                !double.isFinite
            else { fatalError("\(field.name) merged but cannot be sent: \(error)") }
            form[field.name] = .string("\(double)")
        }
    }
    _ = model.changes
    return form
}
