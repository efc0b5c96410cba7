import Foundation
import MonoRail
import TestModels

/// A model that embeds itself, for depth limits.
@Resource
final class Node {
    var label: String?
    @Has(.embedsMany) var children: [Node]
}

/// Both sides embedded: a train embeds its cars, and each car embeds its train.
@Resource
final class CycleTrain {
    var company: String?
    @Has(.embedsMany, foreignKey: "cycle_train_id") var cars: [CycleCar]
}

@Resource
final class CycleCar {
    var occupancy: Int?
    @References(.embedsOne) var train: CycleTrain?
}

/// Sends its embedded cars back as Rails nested attributes.
@Resource(name: "train")
final class NestedTrain {
    var company: String?
    @Has(.embedsMany) var cars: [Spec.Car]

    static var nestedAttributes: [String] { ["cars"] }
}

/// References many records by id: `"train_ids": [1, 2]`.
@Resource
final class Yard {
    var name: String?
    @References(.many) var trains: [Seed.Train]
}

/// A wagon points at its train through a differently named reference.
@Resource
final class Wagon {
    var load: Int?
    @References var owner: InverseTrain?
}

/// Finds its wagons through their `owner` property (the seed's `inverseOf`).
@Resource(name: "train")
final class InverseTrain {
    var company: String?
    @Has(inverse: "owner") var wagons: [Wagon]
}
