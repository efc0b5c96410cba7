import Foundation
public import MonoRailClient

/// The reference server's records, in SQLite through GRDB or in PostgreSQL (MonoRailServerPostgres):
/// one table per resource, one column per field, writes in transactions.
public final class RecordStore: Sendable {
    /// The resources it stores.
    public let schema: ServerSchema
    let database: any RecordDatabase
    /// The newest change committed; `GET /changes` streams wait on it.
    public let changeSignal = ChangeSignal()
    /// How many changes the log keeps; a client resuming from an older one is told to reset.
    public let changeRetention: Int
    /// The newest changes, read once for every stream of this process.
    let changeBuffer: ChangeBuffer

    /// Opens (or creates) the database and its tables, and seeds it when it is empty.
    ///
    /// - Parameters:
    ///   - schema: The resources.
    ///   - path: A file path, or `:memory:` for a private in-memory database.
    ///   - changeRetention: How many changes the change log keeps (``changes(after:limit:)``).
    /// - Throws: ``SchemaError`` for an invalid schema; GRDB's `DatabaseError` when the file cannot be used.
    public convenience init(schema: ServerSchema, path: String, changeRetention: Int = 100_000) throws {
        // A URL here would quietly become a SQLite file of that name.
        if path.hasPrefix("postgres://") || path.hasPrefix("postgresql://") {
            throw SchemaError(
                "\(path.split(separator: "@").last.map { "…@" + $0 } ?? "a postgres:// URL") is not a SQLite path: open the store with RecordStore(schema:location:) from MonoRailServerPostgres, and serve it with ReferenceServer(store:configuration:)"
            )
        }
        try self.init(schema: schema, database: SQLiteRecordDatabase(path: path), changeRetention: changeRetention)
    }

    /// Opens the store on `database`, creating its tables (and the columns the schema added since),
    /// and seeds it when it is empty.
    package init(schema: ServerSchema, database: any RecordDatabase, changeRetention: Int = 100_000) throws {
        try schema.validate()
        self.schema = schema
        self.database = TracedDatabase(base: database)
        self.changeRetention = max(1, changeRetention)
        changeBuffer = ChangeBuffer()
        do {
            try migrate()
            changeBuffer.begin(after: changeSignal.newest)
        } catch {
            database.close()
            throw error
        }
        let signal = changeSignal
        database.observeChanges { signal.advance(to: $0) }
    }

    /// Lets go of the database's connections; the store is not used after. Stopping a running
    /// server does this.
    public func close() {
        changeSignal.close()
        database.close()
    }

    private func migrate() throws {
        // One transaction, serialized against other processes starting on the same database: each
        // finds the tables made and the records seeded once.
        try database.write { db in
            if let serialize = db.dialect.serializingStatement(key: Self.migrationLockKey) { try db.execute(serialize) }
            try IdempotencyLedger.create(in: db)
            try ChangeLog.create(in: db)
            for resource in schema.resources {
                var columns = [idColumnDefinition(db.dialect)]
                if let order = db.dialect.insertionOrderColumn { columns.append("\(quoted(order)) BIGSERIAL") }
                for column in resource.columns(idType: schema.idType) {
                    columns.append("\(quoted(column.name)) \(db.dialect.name(columnType(column.type)))")
                }
                columns.append("\"created_at\" TEXT NOT NULL")
                columns.append("\"updated_at\" TEXT NOT NULL")
                try db.execute(
                    "CREATE TABLE IF NOT EXISTS \(quoted(resource.pluralName)) (\(columns.joined(separator: ", ")))")
                // Columns added to the schema since the database was created.
                let existing = Set(
                    try db.fetchAll(db.dialect.columnNamesQuery, [.text(resource.pluralName)]).compactMap { $0[0].text }
                )
                for column in resource.columns(idType: schema.idType) where !existing.contains(column.name) {
                    try db.execute(
                        "ALTER TABLE \(quoted(resource.pluralName)) ADD COLUMN \(quoted(column.name)) \(db.dialect.name(columnType(column.type)))"
                    )
                }
            }
            let isEmpty = try schema.resources.allSatisfy {
                try db.fetchValue("SELECT COUNT(*) FROM \(quoted($0.pluralName))").integer == 0
            }
            guard isEmpty, let seed = schema.seed else { return }
            for resource in schema.resources {
                for record in seed[resource.pluralName] ?? [] {
                    guard case .object(let attributes) = record else { continue }
                    _ = try insert(attributes, into: resource, db: db)
                }
            }
        }
        changeSignal.advance(to: try database.read { db in try ChangeLog.bounds(db: db).newest })
    }

    /// The advisory lock key of a migration (PostgreSQL): any number no other lock of the database uses.
    static let migrationLockKey: Int64 = 0x4d6f_6e6f_5261_696c

    private func idColumnDefinition(_ dialect: SQLDialect) -> String {
        schema.idType == .string ? "\"id\" TEXT PRIMARY KEY NOT NULL" : "\"id\" \(dialect.generatedKey)"
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
        return try database.read { db in
            let total =
                try db.fetchValue("SELECT COUNT(*) FROM \(quoted(resource.pluralName))\(clause)", arguments).integer
                ?? 0
            var sql = "SELECT * FROM \(quoted(resource.pluralName))\(clause)"
            var listArguments = arguments
            if let after {
                if let key = idValue(after) {
                    sql += (clause.isEmpty ? " WHERE " : " AND ") + "\"id\" > ?"
                    listArguments.append(key)
                } else {
                    sql += (clause.isEmpty ? " WHERE " : " AND ") + "1 = 0"
                }
            }
            sql += " ORDER BY " + (sorting + [db.dialect.insertionOrder]).joined(separator: ", ")
            if let limit { sql += " LIMIT \(max(0, limit)) OFFSET \(max(0, offset))" }
            let rows = try db.fetchAll(sql, listArguments)
            return (rows.map { json(from: $0, resource: resource) }, Int(total))
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

    /// Whether the resource has a record with the id, inside a transaction the caller holds.
    func exists(_ resource: ResourceSchema, id: String, db: any SQLConnection) throws -> Bool {
        try find(resource, id: id, embedding: false, db: db) != nil
    }

    /// Whether clients may give records their ids: with a schema of string ids, whose ids are
    /// random strings clients can make as well (UUIDs); not with integer ids, which the database counts.
    public var acceptsClientIDs: Bool { schema.idType == .string }

    /// One record, with the relationships the resource embeds.
    public func find(_ resource: ResourceSchema, id: String) throws -> JSONValue? {
        try database.read { db in try find(resource, id: id, embedding: true, db: db) }
    }

    private func find(
        _ resource: ResourceSchema, id: String, embedding: Bool, locking: Bool = false, db: any SQLConnection
    ) throws -> JSONValue? {
        guard let key = idValue(id),
            let row = try db.fetchOne(
                "SELECT * FROM \(quoted(resource.pluralName)) WHERE id = ?\(locking ? db.dialect.lockingRead : "")",
                [key])
        else { return nil }
        let record = json(from: row, resource: resource)
        return embedding ? try embedded(record, resource, db: db) : record
    }

    /// The record with the relationships the resource embeds.
    private func embedded(_ record: JSONValue, _ resource: ResourceSchema, db: any SQLConnection) throws -> JSONValue {
        guard case .object(var members) = record, let id = members[resource.primaryKeyName],
            let key = idValue(id.intValue.map(String.init) ?? id.stringValue ?? "")
        else { return record }
        for name in resource.embeds ?? [] {
            guard let relationship = resource.relationships?.first(where: { $0.name == name }),
                let target = schema.target(of: relationship, in: members)
            else { continue }
            members[name] = try related(relationship, of: resource, id: key, record: members, target: target, db: db)
        }
        return .object(members)
    }

    /// The records a relationship of `record` points at, as a list (empty or one for singular kinds).
    func related(
        _ relationship: RelationshipSchema, of owner: ResourceSchema, record: JSONValue, target: ResourceSchema
    ) throws -> [JSONValue] {
        try database.read { db in try related(relationship, of: owner, record: record, target: target, db: db) }
    }

    /// ``related(_:of:record:target:)`` inside a transaction the caller holds.
    func related(
        _ relationship: RelationshipSchema, of owner: ResourceSchema, record: JSONValue, target: ResourceSchema,
        db: any SQLConnection
    ) throws -> [JSONValue] {
        guard let members = record.objectValue, let id = members[owner.primaryKeyName],
            let key = idValue(id.intValue.map(String.init) ?? id.stringValue ?? "")
        else { return [] }
        let value = try related(relationship, of: owner, id: key, record: members, target: target, db: db)
        switch value {
        case .array(let items): return items
        case .null: return []
        default: return [value]
        }
    }

    private func related(
        _ relationship: RelationshipSchema, of owner: ResourceSchema, id: SQLValue,
        record: [String: JSONValue], target: ResourceSchema, db: any SQLConnection
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
            let rows = try db.fetchAll(
                "SELECT * FROM \(quoted(target.pluralName)) WHERE \(quoted(column)) = ? ORDER BY \(db.dialect.insertionOrder)",
                [id])
            let records = rows.map { json(from: $0, resource: target) }
            return relationship.kind == .hasMany ? .array(records) : (records.first ?? .null)
        }
    }

    // MARK: - Writing

    /// Validates and inserts a record, returning it as stored.
    ///
    /// - Throws: ``RecordValidationError`` with Rails-style messages; nothing is written then.
    public func create(_ resource: ResourceSchema, attributes: [String: JSONValue]) throws -> JSONValue {
        try database.write { db in try create(resource, attributes: attributes, db: db) }
    }

    /// ``create(_:attributes:)`` inside a transaction the caller holds; with the id a client gave the
    /// record, for a schema of string ids.
    func create(
        _ resource: ResourceSchema, id: String? = nil, attributes: [String: JSONValue], db: any SQLConnection
    ) throws -> JSONValue {
        let record = try insert(attributes, id: id, into: resource, db: db)
        try logChange(.created, resource, record: record, db: db)
        return record
    }

    private func logChange(
        _ kind: Change.Kind, _ resource: ResourceSchema, record: JSONValue, db: any SQLConnection
    ) throws {
        try ChangeLog.append(kind, resource, record: record, db: db, signal: changeSignal, retention: changeRetention)
    }

    /// Validates and applies the given attributes to a record; `nil` when there is no such record.
    ///
    /// - Throws: ``RecordValidationError``; nothing is written then.
    public func update(_ resource: ResourceSchema, id: String, attributes: [String: JSONValue]) throws -> JSONValue? {
        try database.write { db in try update(resource, id: id, attributes: attributes, db: db) }
    }

    /// ``update(_:id:attributes:)`` inside a transaction the caller holds.
    func update(_ resource: ResourceSchema, id: String, attributes: [String: JSONValue], db: any SQLConnection) throws
        -> JSONValue?
    {
        // Locked until the transaction ends: a concurrent update of another field waits, and then
        // merges into this one's result instead of writing back what it read before.
        guard let existing = try find(resource, id: id, embedding: false, locking: true, db: db)?.objectValue,
            let key = idValue(id)
        else { return nil }
        var merged = existing
        for (name, value) in attributes { merged[name] = value }
        let values = try validated(merged, for: resource, db: db)
        let assignments = values.keys.sorted()
        guard !assignments.isEmpty else { return try find(resource, id: id, embedding: false, db: db) }
        let arguments = assignments.map { values[$0] ?? .null } + [.text(now()), key]
        let updated = try db.fetchOne(
            "UPDATE \(quoted(resource.pluralName)) SET \(assignments.map { "\(quoted($0)) = ?" }.joined(separator: ", ")), \"updated_at\" = ? WHERE id = ? RETURNING *",
            arguments)
        guard let updated else { return nil }
        let record = json(from: updated, resource: resource)
        try logChange(.updated, resource, record: record, db: db)
        return record
    }

    /// Deletes a record; `false` when there was none.
    public func delete(_ resource: ResourceSchema, id: String) throws -> Bool {
        try database.write { db in try delete(resource, id: id, db: db) }
    }

    /// ``delete(_:id:)`` inside a transaction the caller holds.
    func delete(_ resource: ResourceSchema, id: String, db: any SQLConnection) throws -> Bool {
        guard let key = idValue(id) else { return false }
        let deleted = try db.fetchAll(
            "DELETE FROM \(quoted(resource.pluralName)) WHERE id = ? RETURNING \"id\"", [key])
        guard !deleted.isEmpty else { return false }
        let idValue: JSONValue = key.integer.map { .int($0) } ?? .string(id)
        try logChange(.destroyed, resource, record: .object([resource.primaryKeyName: idValue]), db: db)
        return true
    }

    // MARK: - Changes

    /// Up to `limit` changes committed after `cursor`, oldest first: what `GET /changes` streams.
    public func changes(after cursor: Int64, limit: Int) throws -> [Change] {
        try database.read { db in try ChangeLog.changes(after: cursor, limit: limit, db: db) }
    }

    /// The oldest change the log keeps, and the newest ever committed: a cursor below the oldest
    /// (less one) or above the newest cannot be resumed from.
    public func changeBounds() throws -> (oldest: Int64?, newest: Int64) {
        try database.read { db in try ChangeLog.bounds(db: db) }
    }

    /// The id of the resource's first record, inside a transaction the caller holds: a singleton
    /// resource's one record.
    func firstID(of resource: ResourceSchema, db: any SQLConnection) throws -> String? {
        try db.fetchValue(
            "SELECT id FROM \(quoted(resource.pluralName)) ORDER BY \(db.dialect.insertionOrder) LIMIT 1"
        ).idText
    }

    /// The ids of the records whose `column` holds `id`, inside a transaction the caller holds: the
    /// members of a `has_many`, as the transaction has them so far.
    func ids(_ resource: ResourceSchema, whereKey column: String, is id: String, db: any SQLConnection) throws
        -> [String]
    {
        guard let key = idValue(id), resource.columns(idType: schema.idType).contains(where: { $0.name == column })
        else { return [] }
        return try db.fetchAll(
            "SELECT \"id\" FROM \(quoted(resource.pluralName)) WHERE \(quoted(column)) = ? ORDER BY \(db.dialect.insertionOrder)",
            [key]
        ).compactMap { row in
            switch row["id"] {
            case .integer(let number): String(number)
            case .text(let text): text
            default: nil
            }
        }
    }

    /// The record as a show answers it, with what the resource embeds, inside a transaction the
    /// caller holds.
    func show(_ resource: ResourceSchema, id: String, db: any SQLConnection) throws -> JSONValue? {
        try find(resource, id: id, embedding: true, db: db)
    }

    /// A record just read or written, as a show answers it, inside a transaction the caller holds.
    func show(_ resource: ResourceSchema, record: JSONValue, db: any SQLConnection) throws -> JSONValue {
        try embedded(record, resource, db: db)
    }

    private func insert(
        _ attributes: [String: JSONValue], id: String? = nil, into resource: ResourceSchema, db: any SQLConnection
    ) throws -> JSONValue {
        let values = try validated(attributes, for: resource, db: db)
        var names = values.keys.sorted()
        var arguments = names.map { values[$0] ?? .null }
        let timestamp = SQLValue.text(now())
        names += ["created_at", "updated_at"]
        arguments += [timestamp, timestamp]
        if schema.idType == .string {
            names.insert("id", at: 0)
            arguments.insert(.text(id ?? Self.randomID()), at: 0)
        }
        guard
            let inserted = try db.fetchOne(
                "INSERT INTO \(quoted(resource.pluralName)) (\(names.map(quoted).joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", "))) RETURNING *",
                arguments)
        else { throw SchemaError("the database gave the new record back") }
        return json(from: inserted, resource: resource)
    }

    // MARK: - Helpers

    private func whereClause(
        _ resource: ResourceSchema, filters: [String: String], anyOf: [String: [String]] = [:],
        ranges: [(column: String, comparison: String, value: String)] = []
    ) -> (String, [SQLValue]) {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        // A value a column of its type cannot hold matches no record (SQLite compares and finds
        // nothing; PostgreSQL would refuse the statement).
        func compare(_ column: String, _ comparison: String, _ value: SQLValue?) {
            guard let value else { return conditions.append("1 = 0") }
            conditions.append("\(column) \(comparison) ?")
            arguments.append(value)
        }
        let columns = resource.columns(idType: schema.idType)
        let comparisons = ["gte": ">=", "gt": ">", "lte": "<=", "lt": "<"]
        for range in ranges {
            guard let comparison = comparisons[range.comparison] else { continue }
            if range.column == "id" || range.column == resource.primaryKeyName {
                compare("\"id\"", comparison, idValue(range.value))
            } else if let column = columns.first(where: { $0.name == range.column }) {
                compare(quoted(range.column), comparison, Self.filterValue(range.value, type: column.type))
            }
        }
        for name in anyOf.keys.sorted() {
            let values = anyOf[name] ?? []
            let isID = name == "id" || name == resource.primaryKeyName
            guard isID || columns.contains(where: { $0.name == name }) else { continue }
            let type = columns.first(where: { $0.name == name })?.type
            let keys = values.compactMap { text in
                isID ? idValue(text) : type.flatMap { Self.filterValue(text, type: $0) }
            }
            guard !keys.isEmpty else {
                conditions.append("1 = 0")
                continue
            }
            let column = isID ? "\"id\"" : quoted(name)
            conditions.append("\(column) IN (" + keys.map { _ in "?" }.joined(separator: ", ") + ")")
            arguments += keys
        }
        for name in filters.keys.sorted() {
            guard let text = filters[name] else { continue }
            if name == "id" || name == resource.primaryKeyName {
                compare("\"id\"", "=", idValue(text))
            } else if name == "q" {
                guard let (condition, terms) = searchCondition(resource, term: text) else { continue }
                conditions.append(condition)
                arguments += terms
            } else if let column = resource.columns(idType: schema.idType).first(where: { $0.name == name }) {
                compare(quoted(name), "=", Self.filterValue(text, type: column.type))
            }
        }
        return (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    /// A search: any string column containing the term, case-insensitively; `nil` for a resource
    /// with no string column.
    private func searchCondition(_ resource: ResourceSchema, term: String) -> (String, [SQLValue])? {
        let columns = resource.fields.filter { $0.type == .string }.map { quoted($0.name) }
        guard !columns.isEmpty else { return nil }
        let escaped = term.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
        let like = database.dialect.caseInsensitiveLike
        return (
            "(" + columns.map { "\($0) \(like) ? ESCAPE '\\'" }.joined(separator: " OR ") + ")",
            columns.map { _ in .text("%" + escaped + "%") }
        )
    }

    /// A filter's text as a value of the column's type; `nil` when it is not one.
    static func filterValue(_ text: String, type: FieldSchema.FieldType) -> SQLValue? {
        switch type {
        case .integer: Int64(text).map(SQLValue.integer)
        case .float: Double(text).map(SQLValue.real)
        case .boolean:
            switch text {
            case "true", "1": .integer(1)
            case "false", "0": .integer(0)
            default: nil
            }
        case .string, .datetime, .json, .file: .text(text)
        }
    }

    /// An id as the key column holds it; `nil` for text that is no id of the schema's type.
    func idValue(_ text: String) -> SQLValue? {
        if schema.idType == .string { return text.isEmpty ? nil : .text(text) }
        return Int64(text).map(SQLValue.integer)
    }

    private func json(from row: SQLRow, resource: ResourceSchema) -> JSONValue {
        var object: [String: JSONValue] = [:]
        let types = Dictionary(
            resource.columns(idType: schema.idType).map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        let hidden = database.dialect.insertionOrderColumn
        for (column, value) in row.columns where column != hidden {
            object[column == "id" ? resource.primaryKeyName : column] = Self.json(from: value, type: types[column])
        }
        return .object(object)
    }

    static func json(from value: SQLValue, type: FieldSchema.FieldType?) -> JSONValue {
        switch value {
        case .null: return .null
        case .integer(let int): return type == .boolean ? .bool(int != 0) : .int(int)
        case .real(let double): return .double(double)
        case .text(let string):
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

/// The storage class of a field's column.
func columnType(_ type: FieldSchema.FieldType) -> SQLDialect.ColumnType {
    switch type {
    case .string, .datetime, .json, .file: .text
    case .integer, .boolean: .integer
    case .float: .real
    }
}
