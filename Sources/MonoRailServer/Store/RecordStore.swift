import Foundation
import GRDB
public import MonoRailClient

/// The reference server's records, in SQLite through GRDB: one table per resource, one column per
/// field, writes in transactions (WAL for files, so readers never wait for writers).
public final class RecordStore: Sendable {
    /// The resources it stores.
    public let schema: ServerSchema
    let writer: any DatabaseWriter
    /// The newest change committed; `GET /changes` streams wait on it.
    public let changeSignal = ChangeSignal()
    /// How many changes the log keeps; a client resuming from an older one is told to reset.
    public let changeRetention: Int

    /// Opens (or creates) the database and its tables, and seeds it when it is empty.
    ///
    /// - Parameters:
    ///   - schema: The resources.
    ///   - path: A file path, or `:memory:` for a private in-memory database.
    ///   - changeRetention: How many changes the change log keeps (``changes(after:limit:)``).
    /// - Throws: ``SchemaError`` for an invalid schema; GRDB's `DatabaseError` when the file cannot be used.
    public init(schema: ServerSchema, path: String, changeRetention: Int = 100_000) throws {
        try schema.validate()
        self.schema = schema
        self.changeRetention = max(1, changeRetention)
        var configuration = Configuration()
        // Concurrent requests wait for the write lock instead of failing with "database is locked".
        configuration.busyMode = .timeout(10)
        if path == ":memory:" {
            writer = try DatabaseQueue(configuration: configuration)
        } else {
            writer = try DatabasePool(path: path, configuration: configuration)
        }
        try migrate()
    }

    private func migrate() throws {
        try writer.write { db in
            try IdempotencyLedger.create(in: db)
            try ChangeLog.create(in: db)
            for resource in schema.resources {
                var columns = [idColumnDefinition]
                for column in resource.columns(idType: schema.idType) {
                    columns.append("\(quoted(column.name)) \(sqlType(column.type))")
                }
                columns.append("\"created_at\" TEXT NOT NULL")
                columns.append("\"updated_at\" TEXT NOT NULL")
                try db.execute(
                    sql:
                        "CREATE TABLE IF NOT EXISTS \(quoted(resource.pluralName)) (\(columns.joined(separator: ", ")))"
                )
                // Columns added to the schema since the file was created.
                let existing = try Set(db.columns(in: resource.pluralName).map(\.name))
                for column in resource.columns(idType: schema.idType) where !existing.contains(column.name) {
                    try db.execute(
                        sql:
                            "ALTER TABLE \(quoted(resource.pluralName)) ADD COLUMN \(quoted(column.name)) \(sqlType(column.type))"
                    )
                }
            }
        }
        changeSignal.advance(to: try writer.read { db in try ChangeLog.bounds(db: db).newest })
        let isEmpty = try writer.read { db in
            try schema.resources.allSatisfy {
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(quoted($0.pluralName))") == 0
            }
        }
        guard isEmpty, let seed = schema.seed else { return }
        try writer.write { db in
            for resource in schema.resources {
                for record in seed[resource.pluralName] ?? [] {
                    guard case .object(let attributes) = record else { continue }
                    _ = try insert(attributes, into: resource, db: db)
                }
            }
        }
    }

    private var idColumnDefinition: String {
        schema.idType == .string ? "\"id\" TEXT PRIMARY KEY NOT NULL" : "\"id\" INTEGER PRIMARY KEY AUTOINCREMENT"
    }

    // MARK: - Reading

    /// Records of a resource whose columns equal the given filters; unknown filter names are ignored.
    ///
    /// - Parameter anyOf: Filters that match any of several values, as Rails reads `?id[]=1&id[]=2`.
    /// - Parameters:
    ///   - ranges: Comparisons, as `?max_speed[gte]=100` asks: (column, `gte`/`gt`/`lte`/`lt`, value).
    ///   - order: Columns to sort by, each descending or not; ties and the default follow insertion.
    ///   - after: A cursor: only records whose id is greater (in the default order). The total
    ///     counts the whole list all the same.
    public func list(
        _ resource: ResourceSchema, filters: [String: String], anyOf: [String: [String]] = [:],
        ranges: [(column: String, comparison: String, value: String)] = [],
        order: [(column: String, isDescending: Bool)] = [], after: String? = nil, limit: Int? = nil, offset: Int = 0
    ) throws -> (records: [JSONValue], total: Int) {
        let (clause, arguments) = whereClause(resource, filters: filters, anyOf: anyOf, ranges: ranges)
        let columns = resource.columns(idType: schema.idType)
        let sorting = order.compactMap { key -> String? in
            let isID = key.column == "id" || key.column == resource.primaryKeyName
            guard isID || columns.contains(where: { $0.name == key.column }) else { return nil }
            return (isID ? "\"id\"" : quoted(key.column)) + (key.isDescending ? " DESC" : "")
        }
        return try writer.read { db in
            let total =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM \(quoted(resource.pluralName))\(clause)", arguments: arguments) ?? 0
            var sql = "SELECT * FROM \(quoted(resource.pluralName))\(clause)"
            var listArguments = arguments
            if let after {
                sql += (clause.isEmpty ? " WHERE " : " AND ") + "\"id\" > ?"
                listArguments += [idValue(after) ?? after]
            }
            sql += " ORDER BY " + (sorting + ["rowid"]).joined(separator: ", ")
            if let limit { sql += " LIMIT \(max(0, limit)) OFFSET \(max(0, offset))" }
            let rows = try Row.fetchAll(db, sql: sql, arguments: listArguments)
            return (rows.map { json(from: $0, resource: resource) }, total)
        }
    }

    /// Reads one record of the resource with this plural name, as `find(_:id:)` does.
    ///
    /// - Throws: ``SchemaError`` when no resource has that plural, or a database error.
    public func find(_ plural: String, id: String) throws -> JSONValue? {
        guard let resource = schema.resource(plural: plural) else {
            throw SchemaError("no resource is named \"\(plural)\"")
        }
        return try find(resource, id: id)
    }

    /// One record, with the relationships the resource embeds.
    public func find(_ resource: ResourceSchema, id: String) throws -> JSONValue? {
        try writer.read { db in try find(resource, id: id, embedding: true, db: db) }
    }

    private func find(_ resource: ResourceSchema, id: String, embedding: Bool, db: Database) throws -> JSONValue? {
        guard let key = idValue(id),
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM \(quoted(resource.pluralName)) WHERE id = ?", arguments: [key])
        else { return nil }
        var record = json(from: row, resource: resource)
        if embedding, case .object(var members) = record {
            for name in resource.embeds ?? [] {
                guard let relationship = resource.relationships?.first(where: { $0.name == name }),
                    let target = schema.target(of: relationship, in: members)
                else { continue }
                members[name] = try related(
                    relationship, of: resource, id: key, record: members, target: target, db: db)
            }
            record = .object(members)
        }
        return record
    }

    /// The records a relationship of `record` points at, as a list (empty or one for singular kinds).
    func related(
        _ relationship: RelationshipSchema, of owner: ResourceSchema, record: JSONValue, target: ResourceSchema
    ) throws -> [JSONValue] {
        guard let members = record.objectValue, let id = members[owner.primaryKeyName],
            let key = idValue(id.intValue.map(String.init) ?? id.stringValue ?? "")
        else { return [] }
        let value = try writer.read { db in
            try related(relationship, of: owner, id: key, record: members, target: target, db: db)
        }
        switch value {
        case .array(let items): return items
        case .null: return []
        default: return [value]
        }
    }

    private func related(
        _ relationship: RelationshipSchema, of owner: ResourceSchema, id: any DatabaseValueConvertible,
        record: [String: JSONValue], target: ResourceSchema, db: Database
    ) throws -> JSONValue {
        switch relationship.kind {
        case .belongsTo:
            guard let foreign = record[relationship.foreignKeyName(owner: owner)], !foreign.isNull,
                let text = foreign.intValue.map(String.init) ?? foreign.stringValue
            else { return .null }
            return try find(target, id: text, embedding: false, db: db) ?? .null
        case .hasMany, .hasOne:
            let column = relationship.foreignKeyName(owner: owner)
            guard target.columns(idType: schema.idType).contains(where: { $0.name == column }) else {
                return relationship.kind == .hasMany ? [] : .null
            }
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM \(quoted(target.pluralName)) WHERE \(quoted(column)) = ? ORDER BY rowid",
                arguments: [id])
            let records = rows.map { json(from: $0, resource: target) }
            return relationship.kind == .hasMany ? .array(records) : (records.first ?? .null)
        }
    }

    // MARK: - Writing

    /// Validates and inserts a record, returning it as stored.
    ///
    /// - Throws: ``RecordValidationError`` with Rails-style messages; nothing is written then.
    public func create(_ resource: ResourceSchema, attributes: [String: JSONValue]) throws -> JSONValue {
        try writer.write { db in try create(resource, attributes: attributes, db: db) }
    }

    /// ``create(_:attributes:)`` inside a transaction the caller holds.
    func create(_ resource: ResourceSchema, attributes: [String: JSONValue], db: Database) throws -> JSONValue {
        let id = try insert(attributes, into: resource, db: db)
        let record = try find(resource, id: id, embedding: false, db: db) ?? .null
        try logChange(.created, resource, record: record, db: db)
        return record
    }

    private func logChange(_ kind: Change.Kind, _ resource: ResourceSchema, record: JSONValue, db: Database) throws {
        try ChangeLog.append(kind, resource, record: record, db: db, signal: changeSignal, retention: changeRetention)
    }

    /// Validates and applies the given attributes to a record; `nil` when there is no such record.
    ///
    /// - Throws: ``RecordValidationError``; nothing is written then.
    public func update(_ resource: ResourceSchema, id: String, attributes: [String: JSONValue]) throws -> JSONValue? {
        try writer.write { db in try update(resource, id: id, attributes: attributes, db: db) }
    }

    /// ``update(_:id:attributes:)`` inside a transaction the caller holds.
    func update(_ resource: ResourceSchema, id: String, attributes: [String: JSONValue], db: Database) throws
        -> JSONValue?
    {
        guard let existing = try find(resource, id: id, embedding: false, db: db)?.objectValue,
            let key = idValue(id)
        else { return nil }
        var merged = existing
        for (name, value) in attributes { merged[name] = value }
        let values = try validated(merged, for: resource, db: db)
        let assignments = values.keys.sorted()
        guard !assignments.isEmpty else { return try find(resource, id: id, embedding: false, db: db) }
        var arguments = StatementArguments(assignments.map { values[$0] ?? nil })
        arguments += [now(), key]
        try db.execute(
            sql:
                "UPDATE \(quoted(resource.pluralName)) SET \(assignments.map { "\(quoted($0)) = ?" }.joined(separator: ", ")), \"updated_at\" = ? WHERE id = ?",
            arguments: arguments)
        let record = try find(resource, id: id, embedding: false, db: db)
        if let record { try logChange(.updated, resource, record: record, db: db) }
        return record
    }

    /// Deletes a record; `false` when there was none.
    public func delete(_ resource: ResourceSchema, id: String) throws -> Bool {
        try writer.write { db in try delete(resource, id: id, db: db) }
    }

    /// ``delete(_:id:)`` inside a transaction the caller holds.
    func delete(_ resource: ResourceSchema, id: String, db: Database) throws -> Bool {
        guard let key = idValue(id) else { return false }
        try db.execute(sql: "DELETE FROM \(quoted(resource.pluralName)) WHERE id = ?", arguments: [key])
        guard db.changesCount > 0 else { return false }
        let idValue: JSONValue = (key as? Int64).map { .int($0) } ?? .string(id)
        try logChange(.destroyed, resource, record: .object([resource.primaryKeyName: idValue]), db: db)
        return true
    }

    // MARK: - Changes

    /// Up to `limit` changes committed after `cursor`, oldest first: what `GET /changes` streams.
    public func changes(after cursor: Int64, limit: Int) throws -> [Change] {
        try writer.read { db in try ChangeLog.changes(after: cursor, limit: limit, db: db) }
    }

    /// The oldest change the log keeps, and the newest ever committed: a cursor below the oldest
    /// (less one) or above the newest cannot be resumed from.
    public func changeBounds() throws -> (oldest: Int64?, newest: Int64) {
        try writer.read { db in try ChangeLog.bounds(db: db) }
    }

    /// The id of the resource's first record, inside a transaction the caller holds: a singleton
    /// resource's one record.
    func firstID(of resource: ResourceSchema, db: Database) throws -> String? {
        let value = try DatabaseValue.fetchOne(
            db, sql: "SELECT id FROM \(quoted(resource.pluralName)) ORDER BY rowid LIMIT 1")
        return switch value?.storage {
        case .int64(let int): String(int)
        case .string(let string): string
        default: nil
        }
    }

    /// The record as a show answers it, with what the resource embeds, inside a transaction the
    /// caller holds.
    func show(_ resource: ResourceSchema, id: String, db: Database) throws -> JSONValue? {
        try find(resource, id: id, embedding: true, db: db)
    }

    private func insert(_ attributes: [String: JSONValue], into resource: ResourceSchema, db: Database) throws -> String
    {
        let values = try validated(attributes, for: resource, db: db)
        var names = values.keys.sorted()
        var arguments = StatementArguments(names.map { values[$0] ?? nil })
        let timestamp = now()
        names += ["created_at", "updated_at"]
        arguments += [timestamp, timestamp]
        var id: String?
        if schema.idType == .string {
            let generated = Self.randomID()
            names.insert("id", at: 0)
            arguments = [generated] + arguments
            id = generated
        }
        try db.execute(
            sql:
                "INSERT INTO \(quoted(resource.pluralName)) (\(names.map(quoted).joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))",
            arguments: arguments)
        return id ?? String(db.lastInsertedRowID)
    }

    // MARK: - Helpers

    private func whereClause(
        _ resource: ResourceSchema, filters: [String: String], anyOf: [String: [String]] = [:],
        ranges: [(column: String, comparison: String, value: String)] = []
    ) -> (String, StatementArguments) {
        var conditions: [String] = []
        var arguments = StatementArguments()
        let columns = resource.columns(idType: schema.idType)
        let comparisons = ["gte": ">=", "gt": ">", "lte": "<=", "lt": "<"]
        for range in ranges {
            guard let comparison = comparisons[range.comparison] else { continue }
            if range.column == "id" || range.column == resource.primaryKeyName {
                conditions.append("\"id\" \(comparison) ?")
                arguments += [idValue(range.value) ?? range.value]
            } else if let column = columns.first(where: { $0.name == range.column }) {
                conditions.append("\(quoted(range.column)) \(comparison) ?")
                arguments += [Self.filterValue(range.value, type: column.type)]
            }
        }
        for name in anyOf.keys.sorted() {
            let values = anyOf[name] ?? []
            let isID = name == "id" || name == resource.primaryKeyName
            guard isID || columns.contains(where: { $0.name == name }) else { continue }
            guard !values.isEmpty else {
                conditions.append("0")
                continue
            }
            let column = isID ? "\"id\"" : quoted(name)
            conditions.append("\(column) IN (" + values.map { _ in "?" }.joined(separator: ", ") + ")")
            for text in values {
                if isID {
                    arguments += [idValue(text) ?? text]
                } else if let type = columns.first(where: { $0.name == name })?.type {
                    arguments += [Self.filterValue(text, type: type)]
                }
            }
        }
        for name in filters.keys.sorted() {
            guard let text = filters[name] else { continue }
            if name == "id" || name == resource.primaryKeyName {
                conditions.append("\"id\" = ?")
                arguments += [idValue(text) ?? text]
            } else if name == "q" {
                guard let (condition, terms) = searchCondition(resource, term: text) else { continue }
                conditions.append(condition)
                arguments += terms
            } else if let column = resource.columns(idType: schema.idType).first(where: { $0.name == name }) {
                conditions.append("\(quoted(name)) = ?")
                arguments += [Self.filterValue(text, type: column.type)]
            }
        }
        return (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    /// A search: any string column containing the term, case-insensitively; `nil` for a resource
    /// with no string column.
    private func searchCondition(_ resource: ResourceSchema, term: String) -> (String, StatementArguments)? {
        let columns = resource.fields.filter { $0.type == .string }.map { quoted($0.name) }
        guard !columns.isEmpty else { return nil }
        let escaped = term.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
        return (
            "(" + columns.map { "\($0) LIKE ? ESCAPE '\\'" }.joined(separator: " OR ") + ")",
            StatementArguments(columns.map { _ in "%" + escaped + "%" })
        )
    }

    static func filterValue(_ text: String, type: FieldSchema.FieldType) -> (any DatabaseValueConvertible)? {
        switch type {
        case .integer: Int64(text) ?? text
        case .float: Double(text) ?? text
        case .boolean:
            switch text {
            case "true", "1": 1
            case "false", "0": 0
            default: text
            }
        case .string, .datetime, .json, .file: text
        }
    }

    private func idValue(_ text: String) -> (any DatabaseValueConvertible)? {
        if schema.idType == .string { return text.isEmpty ? nil : text }
        return Int64(text)
    }

    private func json(from row: Row, resource: ResourceSchema) -> JSONValue {
        var object: [String: JSONValue] = [:]
        let types = Dictionary(
            resource.columns(idType: schema.idType).map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        for (column, value) in row {
            object[column == "id" ? resource.primaryKeyName : column] = Self.json(from: value, type: types[column])
        }
        return .object(object)
    }

    static func json(from value: DatabaseValue, type: FieldSchema.FieldType?) -> JSONValue {
        switch value.storage {
        case .null: return .null
        case .int64(let int): return type == .boolean ? .bool(int != 0) : .int(int)
        case .double(let double): return .double(double)
        case .string(let string):
            if type == .json || type == .file { return (try? JSONParser().parse(Data(string.utf8))) ?? .string(string) }
            return .string(string)
        case .blob(let data): return .string(data.base64EncodedString())
        }
    }

    private func now() -> String {
        DateFormat.iso8601WithFractionalSeconds.string(from: Date())
    }

    static func randomID() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<10).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
    }
}

func quoted(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

func sqlType(_ type: FieldSchema.FieldType) -> String {
    switch type {
    case .string, .datetime, .json, .file: "TEXT"
    case .integer, .boolean: "INTEGER"
    case .float: "REAL"
    }
}
