/// Reads a nested object as a `Codable` value: ApiModel's `ModelTransform()` for values that are
/// not records of their own (an address, a price with its currency).
///
/// ```swift
/// struct Address: Codable, Sendable { var street: String; var postalCode: String }
///
/// @Resource final class Customer {
///     @Field(transform: .model(Address.self)) var address: Address?
/// }
/// ```
///
/// A nested record with an id of its own, which should be one live instance across the app, is a
/// relationship instead: `@Has(.embedsOne) var conductor: Conductor?`.
///
/// A value of another shape fails the field, naming it, as any decoding failure does;
/// ``ResourceModel/shouldFail(withInvalidValue:forProperty:)`` returning `false` reads it as `nil`.
public struct ModelTransform<Value: Codable & Sendable>: FieldTransform {
    /// How the value's keys, dates and numbers are read and written.
    public var options: CodingOptions

    /// - Parameters:
    ///   - type: The value's type.
    ///   - options: Key mapping and formats for the nested value; default `snake_case` keys, as
    ///     ``/MonoRailClient/CodingOptions`` defaults.
    public init(_ type: Value.Type = Value.self, options: CodingOptions = CodingOptions()) {
        self.options = options
    }

    /// The value decoded from the wire value.
    public func decode(_ value: JSONValue) throws -> Value {
        try ValueDecoder(options: options).decode(Value.self, from: value)
    }

    /// The value encoded for the wire.
    public func encode(_ value: Value) throws -> JSONValue {
        try ValueEncoder(options: options).encode(value)
    }
}

/// Reads a nested array of `Codable` values: ApiModel's `ArrayTransform()`. What is no array —
/// `null`, a missing key, a string where a list belongs — reads as an empty list, ApiModel's
/// fallback; an element of the wrong shape fails the field, naming it, since dropping it would lose
/// data without a word.
///
/// ```swift
/// @Resource final class Post {
///     @Field(transform: .array(of: Tag.self)) var tags: [Tag] = []
/// }
/// ```
///
/// Nested records with ids of their own, one live instance each, are a relationship instead:
/// `@Has(.embedsMany) var cars: [Car]`.
public struct ArrayTransform<Element: Codable & Sendable>: FieldTransform {
    /// How each element's keys, dates and numbers are read and written.
    public var options: CodingOptions

    /// - Parameters:
    ///   - type: The elements' type.
    ///   - options: Key mapping and formats for the elements; default `snake_case` keys.
    public init(of type: Element.Type = Element.self, options: CodingOptions = CodingOptions()) {
        self.options = options
    }

    /// The elements, or `[]` when the value is no array.
    public func decode(_ value: JSONValue) throws -> [Element] {
        guard case .array = value else { return [] }
        return try ValueDecoder(options: options).decode([Element].self, from: value)
    }

    /// The elements encoded for the wire.
    public func encode(_ value: [Element]) throws -> JSONValue {
        try ValueEncoder(options: options).encode(value)
    }
}

extension FieldTransform {
    /// A nested object as a `Codable` value: ApiModel's `ModelTransform()`.
    public static func model<Value>(_ type: Value.Type, options: CodingOptions = CodingOptions()) -> Self
    where Self == ModelTransform<Value> {
        ModelTransform(type, options: options)
    }

    /// A nested array of `Codable` values, `[]` when there is none: ApiModel's `ArrayTransform()`.
    public static func array<Element>(of type: Element.Type, options: CodingOptions = CodingOptions()) -> Self
    where Self == ArrayTransform<Element> {
        ArrayTransform(of: type, options: options)
    }
}
