import Foundation
import MonoRail

@Resource
final class Train {
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool = false
    var builtAt: Date?
    var tags: [String] = []
}

@Resource
final class Car {
    var occupancy: Int?
    var needsRepairs: Bool?
    var trainId: Int?
}

@Resource
final class Conductor {
    var name: String?
    var trainId: Int?
}
