/// The models a store knows by name: to merge side-loaded records of any of them (Objects'
/// `ClassesType.from(plural:)`), to resolve a type name (Apic's `resolve(typeForName:)`), and to read
/// polymorphic references (`subject_type: "Train"`).
///
/// A model's own relationships are known without registering; register the models a response may
/// carry otherwise. Registration is explicit because Swift runs no code when a type loads: the
/// `@Resource` macro cannot add a model to a list at startup.
///
/// ```swift
/// MonoRail.configure { $0.models.register(Activity.self, User.self) }
/// MonoRail.register(models: Activity.self, User.self)   // the same, on the default store
/// ```
public struct ModelRegistry: Sendable {
    /// The registered models, in registration order.
    public private(set) var models: [any ResourceModel.Type] = []

    /// An empty registry.
    public init() {}

    /// Registers models; registering one again changes nothing.
    public mutating func register(_ types: any ResourceModel.Type...) {
        register(types)
    }

    /// Registers models; registering one again changes nothing.
    public mutating func register(_ types: [any ResourceModel.Type]) {
        for type in types where !models.contains(where: { $0 == type }) { models.append(type) }
    }

    /// The model whose singular name is `singular` (`"activity"`): Objects' `from(singular:)`.
    public func model(singular: String) -> (any ResourceModel.Type)? {
        models.first { $0.resourceName == singular }
    }

    /// The model whose plural name is `plural` (`"activities"`): Objects' `from(plural:)`.
    public func model(plural: String) -> (any ResourceModel.Type)? {
        models.first { $0.resourcePlural == plural }
    }

    /// The model a type name denotes: its ``ResourceModel/polymorphicName`` (the Swift class name,
    /// `"TrainCar"`, unless the model says otherwise), which a polymorphic `_type` column holds, or
    /// the singular name (`"train_car"`). Apic's `resolve(typeForName:)`.
    public func model(named name: String) -> (any ResourceModel.Type)? {
        models.first { $0.polymorphicName == name } ?? model(singular: name)
    }

    /// The model a JSON:API `type` names: `trains`, `Train`, `train-cars` (see
    /// ``ResourceModel/jsonAPITypes``).
    public func model(jsonAPIType type: String) -> (any ResourceModel.Type)? {
        let normalized = JSONAPIDocument.normalized(type)
        return models.first { $0.jsonAPITypes.contains(normalized) }
    }

    /// The names two registered models share: a polymorphic name, a singular or a plural name.
    /// Such a name cannot tell the models apart; a store logs an error for each when configured,
    /// and a record that names one is refused.
    public var ambiguousNames: [String] {
        var owners: [String: Set<ObjectIdentifier>] = [:]
        for model in models {
            for name in Set(Self.names(of: model)) {
                owners[name, default: []].insert(ObjectIdentifier(model))
            }
        }
        return owners.filter { $0.value.count > 1 }.keys.sorted()
    }

    /// Throws when `name` is one that two registered models share.
    func checkUnambiguous(_ name: String) throws {
        let sharing = models.filter { Self.names(of: $0).contains(name) }
        guard sharing.count > 1 else { return }
        throw APIError(
            .invalidConfiguration,
            "the registered models \(sharing.map { Self.typeName(of: $0) }.joined(separator: " and ")) are both named \"\(name)\"; "
                + "give one a name of its own (@Resource(name:), static var polymorphicName)")
    }

    /// Builds an instance of the model `name` denotes — a type name, a singular or a plural
    /// name — from one record's JSON, read with that model's rules: Objects'
    /// `ClassesType.type(from:)`, for records whose model is known only at run time.
    ///
    /// ```swift
    /// let record = try configuration.models.instance(named: "activity", from: json)
    /// (record as? Activity)?.title
    /// ```
    ///
    /// - Parameters:
    ///   - name: The model's type name (`"Activity"`), singular (`"activity"`) or plural (`"activities"`).
    ///   - json: The record.
    ///   - adding: Whether the instance is the store's: merged into its identity map
    ///     (``ResourceModel/merge(json:in:)``), as Objects' `add: true`. Default `false`, an
    ///     instance of its own (``ResourceModel/init(json:using:)``).
    ///   - store: Whose configuration reads the record, and whose identity map it may join.
    /// - Throws: ``/MonoRailClient/APIError/Code/invalidRequest`` when no registered model has the name,
    ///   ``/MonoRailClient/APIError/Code/invalidConfiguration`` when two have it (``ambiguousNames``);
    ///   ``/MonoRailClient/APIError/Code/decodingFailed`` as for a response.
    public func instance(
        named name: String, from json: JSONValue, adding: Bool = false, in store: ResourceStore = .default
    ) throws -> any ResourceModel {
        try checkUnambiguous(name)
        guard let model = model(named: name) ?? model(plural: name) else {
            let known = models.map { Self.typeName(of: $0) }.sorted().joined(separator: ", ")
            throw APIError(
                .invalidRequest,
                "no registered model is named \"\(name)\" (registered: \(known.isEmpty ? "none" : known))")
        }
        return try Self.instance(of: model, from: json, adding: adding, in: store)
    }

    private static func instance<Model: ResourceModel>(
        of type: Model.Type, from json: JSONValue, adding: Bool, in store: ResourceStore
    ) throws -> any ResourceModel {
        adding ? try Model.merge(json: json, in: store) : try Model(json: json, using: store)
    }

    /// Every name a record may call a model by.
    private static func names(of model: any ResourceModel.Type) -> [String] {
        [model.polymorphicName, model.resourceName, model.resourcePlural]
    }

    private static func typeName<Model: ResourceModel>(of type: Model.Type) -> String { type.resourceSchema.typeName }
}
