import Foundation

@testable import MonoRailClient

/// A Codable struct with a field of every type the decoders treat specially.
struct Specimen: Codable, Equatable {
    enum Livery: String, Codable, Equatable { case red, blue }
    struct Depot: Codable, Equatable {
        var city: String
        var platforms: Int?
    }

    var text: String?
    var int: Int?
    var int8: Int8?
    var int16: Int16?
    var int32: Int32?
    var int64: Int64?
    var uint: UInt?
    var uint8: UInt8?
    var uint64: UInt64?
    var double: Double?
    var float: Float?
    var decimal: Decimal?
    var flag: Bool?
    var date: Date?
    var link: URL?
    var uuid: UUID?
    var data: Data?
    var numbers: [Int]?
    var tags: [String]?
    var ratios: [String: Double]?
    var extra: JSONValue?
    var livery: Livery?
    var depot: Depot?
    var depots: [Depot]?
}
