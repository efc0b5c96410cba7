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

    /// The model a type name denotes: the Swift class name (`"TrainCar"`), which is also the Rails
    /// class name a polymorphic `_type` column holds, or the singular name (`"train_car"`). Apic's
    /// `resolve(typeForName:)`.
    public func model(named name: String) -> (any ResourceModel.Type)? {
        models.first { Self.typeName(of: $0) == name } ?? model(singular: name)
    }

    private static func typeName<Model: ResourceModel>(of type: Model.Type) -> String { type.resourceSchema.typeName }
}
