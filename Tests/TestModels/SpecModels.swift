package import Foundation
package import MonoRail

/// The models of SPEC.md §2, word for word, in a namespace of their own.
package enum Spec {
    @Resource
    package final class Train {
        package var company: String?
        package var numberOfCars: Int?
        package var maxSpeed: Double?
        package var builtAt: Date?
        @Has(.embedsMany) package var cars: [Car]
        @Has(.embedsOne) package var conductor: Conductor?
    }

    @Resource
    package final class Car {
        package var occupancy: Int?
        package var needsRepairs: Bool?
        @References package var train: Train?  // JSON key "train_id"
    }

    @Resource
    package final class Conductor {
        package var name: String?
        @References package var train: Train?
    }
}

/// The seed's relationship models: references and has-relationships that are not embedded.
package enum Seed {
    @Resource
    package final class Train {
        package var company: String?
        package var maxSpeed: Double?
        @Has package var cars: [Car]
        @Has(.one) package var conductor: Conductor?
    }

    @Resource
    package final class Car {
        package var occupancy: Int?
        package var needsRepairs: Bool?
        @References package var train: Train?
    }

    @Resource
    package final class Conductor {
        package var name: String?
        @References package var train: Train?
    }
}
