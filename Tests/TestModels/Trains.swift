package import Foundation
package import MonoRail

@Resource
package final class Train {
    package var company: String?
    package var numberOfCars: Int?
    package var maxSpeed: Double?
    package var inService: Bool = false
    package var builtAt: Date?
    package var tags: [String] = []
}

@Resource
package final class Car {
    package var occupancy: Int?
    package var needsRepairs: Bool?
    package var trainId: Int?
}

@Resource
package final class Conductor {
    package var name: String?
    package var trainId: Int?
}
