/// Makes a `final class` a model: every stored `var` becomes a field that is read from and written to
/// the server, merged through the identity map, tracked for changes and observable.
///
/// ```swift
/// @Resource
/// final class Train {
///     var company: String?
///     var numberOfCars: Int?
///     var maxSpeed: Double?
///     var builtAt: Date?
/// }
///
/// let train = try await Train.get(id: 1)     // GET /trains/1
/// ```
///
/// The macro generates the `id`, the field storage (one lock per instance), a static schema of the
/// fields (no runtime reflection) and the ``ResourceModel`` conformance that brings the CRUD API.
///
/// - Parameters:
///   - name: The singular name used for the request root and routes; default: the class name in
///     snake_case (`TrainCar` → `train_car`).
///   - plural: The plural name; default: the inflected singular (`train_cars`).
///   - path: The collection path relative to the API root; default: `/` + plural.
///   - primaryKey: The key that holds a record's id on the wire (ApiModel's `primaryKey()`,
///     `"user_id"`); default `"id"`. The identity map, routes and bodies all use it.
@attached(member, names: named(FieldValues), named(_$state), named(id), named(resourceSchema), named(init), arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: ResourceModel, Sendable)
public macro Resource(name: String? = nil, plural: String? = nil, path: String? = nil, primaryKey: String? = nil) =
    #externalMacro(module: "MonoRailMacros", type: "ResourceMacro")

/// Routes one stored property through its record's storage. Added by ``Resource(name:plural:path:primaryKey:)``;
/// not for direct use.
@attached(accessor, names: named(init), named(get), named(set))
public macro _ResourceProperty() = #externalMacro(module: "MonoRailMacros", type: "ResourcePropertyMacro")

/// Gives a field a wire key other than its snake_cased name.
///
/// ```swift
/// @Field(key: "train_number") var number: String?
/// ```
@attached(peer)
public macro Field(key: String) = #externalMacro(module: "MonoRailMacros", type: "MarkerMacro")

/// Reads and writes a field through a transform, optionally under another key.
///
/// ```swift
/// @Field(transform: .percentage) var occupancyRate: Double?
/// @Field(key: "built", transform: .date(format: "y/MM/dd HH:mm:ss Z")) var builtAt: Date?
/// ```
@attached(peer)
public macro Field<T: FieldTransform>(key: String? = nil, transform: T) =
    #externalMacro(module: "MonoRailMacros", type: "MarkerMacro")

/// Keeps a stored property out of the wire format, the merge and change tracking. It still lives in
/// the instance's locked storage, so it is safe to use from any task.
@attached(peer)
public macro Ignored() = #externalMacro(module: "MonoRailMacros", type: "MarkerMacro")

/// Declares a reference to another model by id (the seed's `References`).
///
/// ```swift
/// @References var train: Train?                 // "train_id": 1
/// @References(.many) var depots: [Depot]        // "depot_ids": [1, 2]
/// @References(.embedsOne) var depot: Depot?     // "depot": {…} read, "depot_id": 4 sent
/// @References(key: "engine_id") var locomotive: Locomotive?
/// ```
///
/// With no kind, an optional means `.one` and an array `.many`. The value is readable at once: from
/// the instances the record keeps, then from the identity map, else `nil` or empty; never a request.
/// `try await car.$train.load()` loads it, with no request when the record is already live.
/// Assigning sets the foreign key, which counts as a change and is sent on `save()`.
///
/// An embedded reference arrives as the related record itself and goes back as its id, under
/// `idKey` (the seed's `referenceIdField`): `depot_id`, or `depot_ids` / `depots` for `.embedsMany` by
/// ``ServerConventions/referenceIDsKey``. Saving one that points at a record not yet created is an
/// ``/MonoRailClient/APIError/Code/encodingFailed`` error, unless the model lists it in
/// ``ResourceModel/nestedAttributes``, which sends the record itself instead.
///
/// - Parameters:
///   - kind: `.one`, `.many`, `.embedsOne` or `.embedsMany`.
///   - key: The JSON key (the seed's `aliasing`); default `<name>_id`, `<singular>_ids` (or the name,
///     by ``ServerConventions/referenceIDsKey``), or the
///     snake_cased name for embedded records.
///   - foreignKey: Unused by references; accepted for symmetry with ``Has(_:key:foreignKey:inverse:route:)``.
///   - inverse: The related model's property that points back (the seed's `inverseOf`).
///   - idKey: For `.embedsOne` and `.embedsMany`, the key the ids are sent as.
///   - polymorphic: A reference to a record of any registered model (Rails' polymorphic
///     `belongs_to`), declared `(any ResourceModel)?`: its type travels as `<name>_type`, the
///     model's Swift class name (`"Train"`, as Rails writes its class), and its id as `<name>_id`
///     (or `key`). Reading resolves the type through ``ModelRegistry``:
///
///     ```swift
///     @References(polymorphic: true) var subject: (any ResourceModel)?
///     comment.subject = train              // subject_type "Train", subject_id 1
///     try await comment.$subject.load()    // GET /trains/1, unless it is live
///     ```
@attached(accessor, names: named(init), named(get), named(set))
public macro References(
    _ kind: RelationshipKind? = nil, key: String? = nil, foreignKey: String? = nil, inverse: String? = nil,
    idKey: String? = nil, polymorphic: Bool = false
) = #externalMacro(module: "MonoRailMacros", type: "RelationshipMacro")

/// Declares records of another model that point at this one (the seed's `Has`).
///
/// ```swift
/// @Has var cars: [Car]                          // cars whose train_id is this train's id
/// @Has(.one) var conductor: Conductor?          // the conductor whose train_id is this id
/// @Has(.embedsMany) var cars: [Car]             // "cars": [{…}, …] inside the train
/// @Has(foreignKey: "owner_id") var wagons: [Car]
/// ```
///
/// `.one` and `.many` read the identity map: a car created with `train = t` appears in `t.cars`, a
/// car deleted or moved leaves it, with no request. `try await train.$cars.load()` fetches
/// `GET /cars?train_id=1`. Embedded records merge into the identity map, so `train.cars[0]` is the
/// instance `Car.get(id:)` returns.
///
/// - Parameters:
///   - kind: `.one`, `.many`, `.embedsOne` or `.embedsMany`.
///   - key: The JSON key of embedded records; default the snake_cased name.
///   - foreignKey: The related model's key holding this record's id; default `<this model>_id`.
///   - inverse: The related model's property that points back (the seed's `inverseOf`).
///   - route: For `.many`: the nested route the records are loaded from, instead of the related
///     model's index filtered by the foreign key. Its placeholders are this record's: `:path` (its
///     collection path), `:id`, and any field by name or key. `@Has(route: ":path/:id/cars")` loads
///     `GET /trains/1/cars`; `train.$cars.query()` reads its pages there too.
@attached(accessor, names: named(init), named(get), named(set))
public macro Has(
    _ kind: RelationshipKind? = nil, key: String? = nil, foreignKey: String? = nil, inverse: String? = nil,
    route: String? = nil
) = #externalMacro(module: "MonoRailMacros", type: "RelationshipMacro")
