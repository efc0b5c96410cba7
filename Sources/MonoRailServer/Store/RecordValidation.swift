import Foundation
import MonoRailClient

/// A record the server refuses, with Rails-style messages per field: `{"company": ["can't be blank"]}`.
public struct RecordValidationError: Error, Sendable {
    /// Messages by field name.
    public var messages: [String: [String]]
}

extension RecordStore {
    /// Checks types and validations and returns the column values to store.
    ///
    /// Unknown attributes are ignored, as Rails' strong parameters would. `id` and the timestamps
    /// cannot be set by clients.
    func validated(
        _ attributes: [String: JSONValue], for resource: ResourceSchema, db: any SQLConnection
    ) throws -> [String: SQLValue] {
        var values: [String: SQLValue] = [:]
        var errors: [String: [String]] = [:]
        func fail(_ field: String, _ message: String) { errors[field, default: []].append(message) }

        for field in resource.columns(idType: schema.idType) {
            let value = attributes[field.name]
            let isBlank: Bool
            switch value {
            case nil, .null?: isBlank = true
            case .string(let string)?: isBlank = string.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            default: isBlank = false
            }
            if isBlank {
                if field.required == true { fail(field.name, "can't be blank") }
                if let value { values[field.name] = value.stringValue.map(SQLValue.text) ?? .null }
                continue
            }
            guard let value else { continue }
            switch (field.type, value) {
            case (.string, .string(let string)):
                let length = string.count
                if let minimum = field.minLength, length < minimum {
                    fail(field.name, "is too short (minimum is \(minimum) characters)")
                }
                if let maximum = field.maxLength, length > maximum {
                    fail(field.name, "is too long (maximum is \(maximum) characters)")
                }
                values[field.name] = .text(string)
            case (.integer, _):
                guard let int = value.intValue else {
                    fail(field.name, value.doubleValue == nil ? "is not a number" : "must be an integer")
                    continue
                }
                checkRange(Double(int), field, fail)
                values[field.name] = .integer(Int64(int))
            case (.float, _):
                guard let double = value.doubleValue else {
                    fail(field.name, "is not a number")
                    continue
                }
                checkRange(double, field, fail)
                values[field.name] = .real(double)
            case (.boolean, .bool(let bool)):
                values[field.name] = .integer(bool ? 1 : 0)
            case (.datetime, .string(let string)):
                guard let date = DateFormat.defaults.lazy.compactMap({ $0.date(from: string) }).first else {
                    fail(field.name, "is not a valid datetime")
                    continue
                }
                values[field.name] = .text(DateFormat.iso8601WithFractionalSeconds.string(from: date))
            case (.json, _):
                values[field.name] = .text(String(decoding: value.jsonData(sortedKeys: true), as: UTF8.self))
            case (.file, .object(let object)) where object["url"]?.stringValue?.hasPrefix("/uploads/") == true:
                values[field.name] = .text(String(decoding: value.jsonData(sortedKeys: true), as: UTF8.self))
            case (.file, _):
                fail(field.name, "must be a file sent as multipart/form-data")
            case (.string, _):
                fail(field.name, "must be a string")
            case (.boolean, _):
                fail(field.name, "must be true or false")
            case (.datetime, _):
                fail(field.name, "is not a valid datetime")
            }
        }
        // belongs_to: the referenced record must exist, as in Rails 5+.
        for relationship in resource.relationships ?? [] where relationship.kind == .belongsTo {
            let column = relationship.foreignKeyName(owner: resource)
            guard let foreign = values[column], foreign != .null else { continue }
            guard let target = schema.target(of: relationship, in: attributes) else {
                // A polymorphic reference whose type names no resource points at nothing.
                if relationship.isPolymorphic { fail(relationship.name, "must exist") }
                continue
            }
            // An id of the wrong type (text for an integer key) points at nothing; PostgreSQL would
            // refuse to compare it.
            let exists =
                try idValue(foreign.idText ?? "").map {
                    try db.fetchValue("SELECT COUNT(*) FROM \(quoted(target.pluralName)) WHERE id = ?", [$0]).integer
                } ?? 0
            if exists == 0 { fail(relationship.name, "must exist") }
        }
        guard errors.isEmpty else { throw RecordValidationError(messages: errors) }
        return values
    }

    private func checkRange(_ number: Double, _ field: FieldSchema, _ fail: (String, String) -> Void) {
        if let minimum = field.min, number < minimum {
            fail(field.name, "must be greater than or equal to \(Self.format(minimum))")
        }
        if let maximum = field.max, number > maximum {
            fail(field.name, "must be less than or equal to \(Self.format(maximum))")
        }
    }

    static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
