import Foundation
import MonoRail

/// The djangorestframework-jsonapi app's models (`Tests/JSONAPIInterop`): a train has cars (each
/// car's `train` relationship) and depots (a to-many relationship of the train's own).
enum Rail {
    @Resource
    final class Train {
        var company: String?
        var numberOfCars: Int?
        var maxSpeed: Double?
        var inService: Bool?
        @References(.many) var depots: [Depot]
        @Has var cars: [Car]
    }

    @Resource
    final class Car {
        var occupancy: Int?
        var needsRepairs: Bool?
        @References var train: Train?
    }

    @Resource
    final class Depot {
        var name: String?
        var city: String?
    }
}
