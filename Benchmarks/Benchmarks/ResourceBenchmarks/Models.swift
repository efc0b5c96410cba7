import BenchPayload
import Foundation
import MonoRail

/// The same record as a MonoRail model.
@Resource(name: "train")
final class ModelTrain {
    var company: String = ""
    var numberOfCars: Int = 0
    var maxSpeed: Double = 0
    var inService: Bool = false
    var builtAt: Date?
    var tags: [String] = []
    var depot: BenchDepot?
    var conductorId: Int?
    var notes: String = ""
}

/// The seeds' approach: parse with `JSONSerialization`, discover the properties with `Mirror`, and
/// assign each value by name (what `AbstractModel` and `ActiveModel` did through KVC).
final class ReflectedTrain {
    var id = 0
    var company = ""
    var numberOfCars = 0
    var maxSpeed = 0.0
    var inService = false
    var builtAt: Date?
    var tags: [String] = []
    var depot: [String: Any] = [:]
    var conductorId = 0
    var notes = ""

    nonisolated(unsafe) static let formatter = ISO8601DateFormatter()

    init(dictionary: [String: Any]) {
        for child in Mirror(reflecting: self).children {
            guard let label = child.label else { continue }
            let key = snakeCased(label)
            guard let value = dictionary[key] else { continue }
            setValue(value, forKey: label)
        }
    }

    func setValue(_ value: Any, forKey key: String) {
        switch key {
        case "id": id = value as? Int ?? id
        case "company": company = value as? String ?? company
        case "numberOfCars": numberOfCars = value as? Int ?? numberOfCars
        case "maxSpeed": maxSpeed = value as? Double ?? maxSpeed
        case "inService": inService = value as? Bool ?? inService
        case "builtAt": builtAt = (value as? String).flatMap { ReflectedTrain.formatter.date(from: $0) }
        case "tags": tags = value as? [String] ?? tags
        case "depot": depot = value as? [String: Any] ?? depot
        case "conductorId": conductorId = value as? Int ?? conductorId
        case "notes": notes = value as? String ?? notes
        default: break
        }
    }
}

func snakeCased(_ name: String) -> String {
    var result = ""
    for character in name {
        if character.isUppercase {
            result.append("_")
            result.append(contentsOf: character.lowercased())
        } else {
            result.append(character)
        }
    }
    return result
}

/// ``ModelTrain`` read the way every JSON list was read before records were decoded in place:
/// through a tree (a model with a record hook has each record built as one).
@Resource(name: "train")
final class TreeModelTrain {
    var company: String = ""
    var numberOfCars: Int = 0
    var maxSpeed: Double = 0
    var inService: Bool = false
    var builtAt: Date?
    var tags: [String] = []
    var depot: BenchDepot?
    var conductorId: Int?
    var notes: String = ""

    static func customDeserialize(_ record: JSONValue) throws -> JSONValue { record }
}
