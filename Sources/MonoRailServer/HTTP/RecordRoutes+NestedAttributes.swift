import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient

// Rails' `accepts_nested_attributes_for`: a write of a record that carries `cars_attributes` writes
// its `has_many` (or `has_one`) records in the same transaction — an item with an `id` updates that
// record (or deletes it with `_destroy`), one without creates it pointing at the record — and the
// answer embeds them, ids and all. A child refused refuses the whole write, its messages under
// `cars.occupancy`, as Rails reports them.
extension RecordRoutes {
    /// The nested attributes a body carries, taken out of its attributes.
    func takeNestedAttributes(from attributes: inout [String: JSONValue], of resource: ResourceSchema) throws
        -> [(RelationshipSchema, [JSONValue])]
    {
        var nested: [(RelationshipSchema, [JSONValue])] = []
        for relationship in resource.relationships ?? [] where relationship.kind != .belongsTo {
            guard let value = attributes.removeValue(forKey: "\(relationship.name)_attributes") else { continue }
            switch value {
            case .array(let items): nested.append((relationship, items))
            case .object(let item) where relationship.kind == .hasOne: nested.append((relationship, [.object(item)]))
            // Rails' form shape: `{"0": {…}, "1": {…}}`, in key order.
            case .object(let items):
                nested.append(
                    (relationship, items.keys.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.compactMap { items[$0] }))
            case .null: continue
            default:
                throw RecordValidationError(
                    messages: ["\(relationship.name)_attributes": ["must be a list of records"]])
            }
        }
        return nested
    }

    /// Writes the nested records of `record`, inside the transaction of its own write.
    func writeNestedAttributes(
        _ nested: [(RelationshipSchema, [JSONValue])], of resource: ResourceSchema, record: JSONValue,
        db: any SQLConnection
    ) throws {
        guard let ownerID = record[resource.primaryKeyName] else { return }
        for (relationship, items) in nested {
            guard let target = store.schema.resource(singular: relationship.targetName) else { continue }
            let key = relationship.foreignKeyName(owner: resource)
            for item in items {
                guard case .object(var attributes) = item else {
                    throw RecordValidationError(messages: [relationship.name: ["must be records"]])
                }
                let id = attributes.removeValue(forKey: target.primaryKeyName).flatMap { value -> String? in
                    value.intValue.map(String.init) ?? value.stringValue
                }
                let destroy = attributes.removeValue(forKey: "_destroy")
                attributes[key] = ownerID
                do {
                    guard let id, !id.isEmpty else {
                        _ = try store.create(target, attributes: attributes, db: db)
                        continue
                    }
                    // Only the record's own nested records may be written through it, as in Rails.
                    guard let existing = try store.show(target, id: id, db: db),
                        RecordRoutes.Nesting.text(existing[key] ?? .null) == RecordRoutes.Nesting.text(ownerID)
                    else { throw APIProblem(.notFound, "\(relationship.name) has no record \(id)") }
                    if destroy == .bool(true) || destroy == .string("1") || destroy == .string("true") {
                        _ = try store.delete(target, id: id, db: db)
                    } else {
                        _ = try store.update(target, id: id, attributes: attributes, db: db)
                    }
                } catch let error as RecordValidationError {
                    var messages: [String: [String]] = [:]
                    for (field, list) in error.messages { messages["\(relationship.name).\(field)"] = list }
                    throw RecordValidationError(messages: messages)
                }
            }
        }
    }
}
