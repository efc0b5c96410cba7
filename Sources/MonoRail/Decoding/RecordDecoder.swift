import Foundation

/// Reads records of one model from JSON values, applying the model's decoding policy.
struct RecordDecoder<Model: ResourceModel> {
    let coder: FieldCoder
    /// What generated code reads plain fields with: made once, since making one copies the coder,
    /// retaining each of its references, which cost as much per record as a field.
    let direct: FieldDecoder
    let wireKeys: [String]
    /// The id key, then the field keys, each once: the order records are kept in.
    let storedKeyOrder: [String]
    /// The same keys as UTF-8, to find fields by the bytes of a MessagePack key.
    let wireKeyBytes: WireKeyBytes
    /// The key that holds the id (``ResourceModel/primaryKey``), as text and as UTF-8.
    let idKey: String
    let idKeyBytes: [UInt8]
    let embedding: EmbeddingContext
    /// The schema's fields, read once per decoder rather than once per record.
    let fields = Model.resourceSchema.fields
    /// Whether a record's bytes alone decide what merging it does (``RecordDigest``): not when it
    /// embeds related records, whose instances may have changed since.
    let comparesDigests = !Model.resourceSchema.fields.contains { $0.embedded != nil }
    /// How many fields the schema has: asked of ``fields`` in code generic over the model, it costs
    /// a type metadata look-up.
    let fieldCount = Model.resourceSchema.fields.count
    /// The patch class, looked up once: made from this value, a patch costs no type metadata look-up,
    /// which code generic over the model otherwise pays for every record.
    let patchType = RecordPatch<Model>.self
    /// How the look-ups for unchanged records have gone in this response.
    let probes: DigestProbes
    /// Every field present, for records the digest finds unchanged.
    let allPresent = [Bool](repeating: true, count: Model.resourceSchema.fields.count)

    /// Decodes one record where one must be: the answer to `get(id:)`, `fetch()` or `save()`.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` with ``/MonoRailClient/APIError/Code/decodingFailed`` naming the model, the field and the
    ///   JSON path; also when `customDeserialize` dropped the record.
    ///
    /// - Parameter allowsMissingID: Whether a record without an id is the instance that was sent
    ///   (the answer to a create or save) rather than an error.
    func decode(_ wire: JSONValue, at location: RecordLocation, allowsMissingID: Bool = false) throws
        -> RecordPatch<Model>
    {
        guard let patch = try decodeUnlessDropped(wire, at: location, allowsMissingID: allowsMissingID) else {
            throw Self.failure("customDeserialize dropped the record", at: location)
        }
        return patch
    }

    /// Decodes one record of a list, or returns `nil` when the model's `customDeserialize` dropped
    /// it by returning `null` (the MonoRail seed's hook returning `nil`).
    ///
    /// - Throws: As ``decode(_:at:)``.
    func decodeUnlessDropped(_ wire: JSONValue, at location: RecordLocation, allowsMissingID: Bool = false) throws
        -> RecordPatch<Model>?
    {
        let typeName = Model.resourceSchema.typeName
        func failure(_ reason: String, key: String? = nil, field: String? = nil, underlying: (any Error)? = nil)
            -> APIError
        {
            Self.failure(reason, at: location, key: key, field: field, underlying: underlying)
        }
        let record: JSONValue
        do {
            record = try Model.customDeserialize(wire)
        } catch {
            throw failure("customDeserialize failed: \(error)", underlying: error)
        }
        // Only a hook can drop a record: a null the server sent where a record belongs is an error.
        if record == .null, Model.resourceSchema.rewritesRecords, wire != .null { return nil }
        guard case .object(let object) = record else {
            throw failure("expected a \(typeName) record (an object), found \(Self.kind(of: record))")
        }
        let id: ResourceID?
        if let rawID = object[idKey] {
            guard let parsed = ResourceID(json: rawID) else {
                throw failure("the id must be an integer or a non-empty string, found \(rawID)", key: idKey)
            }
            id = parsed
        } else if allowsMissingID {
            id = nil
        } else {
            throw failure("the record has no id", key: idKey)
        }
        var values = Model.FieldValues()
        var present = [Bool](repeating: false, count: fields.count)
        var embedded: [(index: Int, patch: any EmbeddedPatch)] = []
        for index in fields.indices {
            let field = fields[index]
            let key = wireKeys[index]
            guard let raw = object[key] else {
                if Model.shouldFail(withInvalidValue: nil, forProperty: field.name) {
                    throw failure("the required key is missing", key: key, field: field.name)
                }
                continue
            }
            if let embedding = field.embedded {
                embedded.append((index, try embedding.decode(raw, "\(location.description).\(key)", self.embedding)))
                present[index] = true
                continue
            }
            do {
                if try !values._$decodeField(index, from: raw, with: direct) {
                    try field.decode(&values, raw, coder)
                }
                present[index] = true
            } catch {
                let assigned: (any Sendable)?
                do {
                    assigned = try Model.assign(undefinedValue: raw, forProperty: field.name)
                } catch let assignError {
                    throw APIError(
                        .decodingFailed, "\(typeName).\(field.name): \(assignError)",
                        decodingFailure: FieldCoder.failure(
                            typeName: typeName, field: field.name, key: key, prefix: location.description,
                            error: assignError),
                        underlyingError: assignError)
                }
                if let assigned, field.assign(&values, assigned) {
                    present[index] = true
                } else if Model.shouldFail(withInvalidValue: raw, forProperty: field.name) {
                    let detail = FieldCoder.failure(
                        typeName: typeName, field: field.name, key: key, prefix: location.description, error: error)
                    throw APIError(.decodingFailed, detail.description, decodingFailure: detail, underlyingError: error)
                }
            }
        }
        return RecordPatch(
            id: id, values: values, present: present, embedded: embedded,
            wire: embedding.keepsWire && id != nil ? .tree(wire, keyOrder: storedKeyOrder) : nil)
    }

    static func failure(
        _ reason: String, at location: RecordLocation, key: String? = nil, field: String? = nil,
        underlying: (any Error)? = nil
    ) -> APIError {
        let path = location.description + (key.map { ".\($0)" } ?? "")
        let detail = DecodingFailure(
            typeName: Model.resourceSchema.typeName, key: key, path: path, reason: reason, field: field)
        return APIError(.decodingFailed, detail.description, decodingFailure: detail, underlyingError: underlying)
    }

    static func kind(of value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a Boolean"
        case .int, .uint, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Whether looking up a record's instance to compare digests is paying off in one response: a list
/// of records the store has not seen misses every time, and stops looking after a run of misses,
/// trying again now and then in case the records it knows come later.
final class DigestProbes {
    /// Whether records are looked up at all: not for the answer to a write, nor when a merge is
    /// read again because an instance changed after its record was found unchanged
    /// (``Merger/ProbeExpired``).
    let areOn: Bool
    // One response is read on one task: no access overlaps another, and the checks are left out.
    @exclusivity(unchecked) private var misses = 0
    @exclusivity(unchecked) private var skipped = 0

    init(on: Bool) { areOn = on }

    /// Whether to look the next record's instance up.
    func shouldLook() -> Bool {
        guard areOn else { return false }
        if misses < 16 { return true }
        skipped += 1
        return skipped % 32 == 0
    }

    /// Records how a look-up went.
    func looked(found: Bool) {
        misses = found ? 0 : misses + 1
    }
}
