import Foundation
import MonoRail

/// The demo's models: the README's, against the reference server's `/trains`, `/cars` and
/// `/conductors`.
@Resource
final class Train {
    var company: String?
    var numberOfCars: Int?
    var maxSpeed: Double?
    var inService: Bool = false
    @Has(.embedsMany) var cars: [Car]
    @Has(.embedsOne) var conductor: Conductor?
}

@Resource
final class Car {
    var occupancy: Int?
    var needsRepairs: Bool?
    @References var train: Train?
}

@Resource
final class Conductor {
    var name: String?
    var photo: FileUpload?
    @References var train: Train?
}
