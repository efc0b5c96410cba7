import Foundation
import MonoRail
import TestModels

/// Reads the same `/trains` as ``Train`` but converts numbers in strings and similar.
@Resource(name: "train")
final class LenientTrain {
    var company: String?
    var numberOfCars: Int?
    var inService: Bool = false

    static func configure(_ configuration: inout MonoRail.Configuration) {
        configuration.coding.coercion = .lenient
    }
}

/// Apic's policy: `company` is required, other invalid values are ignored, and a status given as
/// a number is converted by the custom-assignment hook.
@Resource(name: "train")
final class StrictCompanyTrain {
    var company: String = ""
    var numberOfCars: Int = 0
    var status: Status = .active

    enum Status: String, Codable, Sendable { case active, retired }

    static func shouldFail(withInvalidValue value: JSONValue?, forProperty property: String) -> Bool {
        property == "company"
    }

    static func assign(undefinedValue value: JSONValue, forProperty property: String) throws -> (any Sendable)? {
        guard property == "status", let code = value.intValue else { return nil }
        return code == 0 ? Status.active : Status.retired
    }
}

/// MonoRail's custom hooks: the server nests the name, and the client sends it flat plus a marker.
@Resource(name: "train")
final class CustomTrain {
    var company: String?

    static func customDeserialize(_ record: JSONValue) throws -> JSONValue {
        guard case .object(var object) = record, case .object(let info)? = object["info"] else { return record }
        object["company"] = info["name"]
        return .object(object)
    }

    static func customSerialize(_ record: JSONValue, for action: ActionVerb) throws -> JSONValue {
        guard case .object(var object) = record else { return record }
        object["client"] = "monorail"
        object["action"] = .string(action.rawValue)
        return .object(object)
    }
}

/// Renamed keys and transforms.
@Resource(name: "gauge", plural: "gauges", path: "/meta/gauges")
final class Gauge {
    @Field(key: "label") var name: String?
    @Field(transform: .percentage) var fill: Double?
    @Field(transform: .date(format: "y/MM/dd HH:mm:ss Z")) var checkedAt: Date?
    @Field(key: "img", transform: .url(relativeTo: URL(string: "https://cdn.example.com/"))) var image: URL?
    @Ignored var localNote: String = "mine"
}

enum Livery: String, Codable, Sendable { case red, blue }

struct Depot: Codable, Sendable, Equatable {
    var city: String
    var platforms: Int
}

/// One field of every supported type.
@Resource
final class Specimen {
    var text: String = ""
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint: UInt = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var double: Double = 0
    var float: Float = 0
    var decimal: Decimal = 0
    var flag: Bool = false
    var date: Date?
    var link: URL?
    var uuid: UUID?
    var numbers: [Int] = []
    var ratios: [String: Double] = [:]
    var extra: JSONValue = .null
    var livery: Livery = .red
    var otherLivery: Livery?
    var depot: Depot?
    var depots: [Depot] = []
    var nickname: String?
    var count = 7
}

/// Named from a compound class name: `train_car`, `/train_cars`.
@Resource
final class TrainCar {
    var position: Int?
}

/// ApiModel-style routes per model: `/post/:id.json`, PATCH with only the changed fields.
@Resource
final class Post {
    var title: String?
    var body: String?

    static func configure(_ configuration: inout MonoRail.Configuration) {
        configuration.conventions.routes.show = "/post/:id.json"
        configuration.conventions.routes.update = "/post/:id.json"
        configuration.conventions.updateMethod = .patch
        configuration.conventions.sendsOnlyChanges = true
    }
}

/// Static overrides of the naming.
@Resource
final class Person {
    var name: String?

    static var resourceName: String { "member" }
    static var resourcePath: String { "/club/members" }
}

/// A model with its own initializer, over fields that have defaults.
@Resource
final class Ticket {
    var holder: String = "nobody"
    var seats: Int = 1
    var note: String?

    init(holder: String, seats: Int) {
        self.holder = holder
        self.seats = seats
    }
}
