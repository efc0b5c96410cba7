package import MonoRail
package import MonoRailServer

/// A car that reads its train embedded and sends it back by id.
@Resource(name: "car")
package final class CarEmbeddingTrain {
    package var occupancy: Int?
    @References(.embedsOne) package var train: Seed.Train?
}

extension ServerSchema {
    /// The trains example, with cars that embed their train and depots that list trains by id.
    package static let trainsEmbeddedInCars: ServerSchema = {
        var schema = ServerSchema.trains
        if let cars = schema.resources.firstIndex(where: { $0.name == "car" }) {
            schema.resources[cars].embeds = ["train"]
        }
        schema.resources.append(
            ResourceSchema(
                name: "depot",
                fields: [
                    FieldSchema(name: "name", type: .string), FieldSchema(name: "train_ids", type: .json),
                ]))
        return schema
    }()
}
