import Foundation
import MonoRail

/// The demo's model: the README's `Train`, against the reference server's `/trains`.
@Resource
final class Train {
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool = false
}
