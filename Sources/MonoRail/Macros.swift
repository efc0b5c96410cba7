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
@attached(member, names: named(FieldValues), named(_$record), named(id), named(resourceSchema), named(init))
@attached(memberAttribute)
@attached(extension, conformances: ResourceModel)
public macro Resource(name: String? = nil, plural: String? = nil, path: String? = nil) =
    #externalMacro(module: "MonoRailMacros", type: "ResourceMacro")

/// Routes one stored property through its record's storage. Added by ``Resource(name:plural:path:)``;
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
