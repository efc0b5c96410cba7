// Train: written by `monorail scaffold --openapi` from "Trains". Edit freely; scaffold again to compare.
package import Foundation
package import MonoRail

@Resource
package final class Train {
    package var builtAt: Date?
    package var company: String?
    package var inService: Bool?
    package var maxSpeed: Double?
    package var numberOfCars: Int?
    package var tags: JSONValue?
}
