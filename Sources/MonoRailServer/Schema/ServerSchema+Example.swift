import MonoRailClient

extension ServerSchema {
    /// The built-in example: trains with cars and a conductor, as in MonoRail's first README.
    /// `monorail serve` uses it when no schema file is given.
    public static let trains = ServerSchema(
        resources: [
            ResourceSchema(
                name: "train",
                fields: [
                    FieldSchema(name: "company", type: .string, required: true, maxLength: 200),
                    FieldSchema(name: "number_of_cars", type: .integer, min: 0, max: 1000),
                    FieldSchema(name: "max_speed", type: .float, min: 0, max: 1000),
                    FieldSchema(name: "in_service", type: .boolean),
                    FieldSchema(name: "built_at", type: .datetime),
                    FieldSchema(name: "tags", type: .json),
                ],
                relationships: [
                    RelationshipSchema(kind: .hasMany, name: "cars"),
                    RelationshipSchema(kind: .hasOne, name: "conductor"),
                ],
                embeds: ["cars", "conductor"]),
            ResourceSchema(
                name: "car",
                fields: [
                    FieldSchema(name: "occupancy", type: .integer, min: 0),
                    FieldSchema(name: "needs_repairs", type: .boolean),
                ],
                relationships: [RelationshipSchema(kind: .belongsTo, name: "train")]),
            ResourceSchema(
                name: "conductor",
                fields: [
                    FieldSchema(name: "name", type: .string, required: true, minLength: 1),
                    FieldSchema(name: "photo", type: .file),
                ],
                relationships: [RelationshipSchema(kind: .belongsTo, name: "train")]),
        ],
        seed: [
            "trains": [
                [
                    "company": "MonoRail Co.", "number_of_cars": 5, "max_speed": 46.8, "in_service": true,
                    "tags": ["monorail"],
                ],
                [
                    "company": "Deutsche Bahn AG", "number_of_cars": 12, "max_speed": 300.0, "in_service": true,
                    "tags": [],
                ],
            ],
            "cars": [
                ["occupancy": 40, "needs_repairs": false, "train_id": 1],
                ["occupancy": 12, "needs_repairs": true, "train_id": 1],
                ["occupancy": 80, "needs_repairs": false, "train_id": 2],
            ],
            "conductors": [
                ["name": "Bill", "train_id": 1],
                ["name": "Ada", "train_id": 2],
            ],
        ])
}
