import Foundation

/// Reads records of one model from JSON values, applying the model's decoding policy.
struct RecordDecoder<Model: ResourceModel> {
    let coder: FieldCoder
    /// What generated code reads plain fields with: made once, since making one copies the coder,
    /// retaining each of its references, which cost as much per record as a field.
    let direct: FieldDecoder
    /// The model's wire keys and id key.
    let keys: RecordKeys
    /// The id key, then the field keys, each once: the order records are kept in.
    let storedKeyOrder: [String]
    let embedding: EmbeddingContext
    /// The schema's fields, read once per model rather than once per record.
    let fields: [ResourceField<Model>]
    /// Whether a record's bytes alone decide what merging it does (``RecordDigest``): not when it
    /// embeds related records, whose instances may have changed since.
    let comparesDigests: Bool
    /// How many fields the schema has: asked of ``fields`` in code generic over the model, it costs
    /// a type metadata look-up.
    let fieldCount: Int
    /// The patch class, looked up once: made from this value, a patch costs no type metadata look-up,
    /// which code generic over the model otherwise pays for every record.
    let patchType = RecordPatch<Model>.self
    /// How the look-ups for unchanged records have gone in this response.
    let probes: DigestProbes
    /// Whether records may be read in place at all: not for a model that rewrites each record's tree.
    let readsInPlace: Bool
    /// Every field present, for records the digest finds unchanged.
    let allPresent: [Bool]
    /// Where fields sit in a JSON:API resource object, when records arrive as those.
    let jsonAPI: JSONAPILayout?

    /// What every decoder of a model takes from its schema, found once per model and store: each
    /// `Model.resourceSchema` makes the schema anew, which cost as much as the rest of a small read.
    struct Plan: Sendable {
        let fields: [ResourceField<Model>]
        let comparesDigests: Bool
        let readsInPlace: Bool
        let allPresent: [Bool]

        init() {
            let schema = Model.resourceSchema
            fields = schema.fields
            comparesDigests = !schema.fields.contains { $0.embedded != nil }
            readsInPlace = !schema.rewritesRecords
            allPresent = [Bool](repeating: true, count: schema.fields.count)
        }
    }

    init(
        plan: Plan, coder: FieldCoder, keys: RecordKeys, storedKeyOrder: [String], embedding: EmbeddingContext,
        probes: DigestProbes, jsonAPI: JSONAPILayout? = nil
    ) {
        self.jsonAPI = jsonAPI
        self.coder = coder
        self.direct = FieldDecoder(coder: coder)
        self.keys = keys
        self.storedKeyOrder = storedKeyOrder
        self.embedding = embedding
        self.fields = plan.fields
        self.comparesDigests = plan.comparesDigests
        self.fieldCount = plan.fields.count
        self.probes = probes
        self.readsInPlace = plan.readsInPlace
        self.allPresent = plan.allPresent
    }

    var idKey: String { keys.id }

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
    /// - Throws: As ``decode(_:at:allowsMissingID:)``.
    func decodeUnlessDropped(_ wire: JSONValue, at location: RecordLocation, allowsMissingID: Bool = false) throws
        -> RecordPatch<Model>?
    {
        let record: JSONValue
        do {
            record = try Model.customDeserialize(wire)
        } catch {
            throw Self.failure("customDeserialize failed: \(error)", at: location, underlying: error)
        }
        // Only a hook can drop a record: a null the server sent where a record belongs is an error.
        if record == .null, Model.resourceSchema.rewritesRecords, wire != .null { return nil }
        if let jsonAPI {
            var source = try JSONAPIRecord(record, keys: keys, layout: jsonAPI, path: location.description)
            guard let patch = try read(&source, at: location, allowsMissingID: allowsMissingID) else {
                throw Self.failure("the resource object cannot be read", at: location)
            }
            return patch
        }
        guard var source = JSONTreeRecord(record, keys: keys, received: wire) else {
            throw Self.failure(
                "expected a \(Model.resourceSchema.typeName) record (an object), found \(record.kind)",
                at: location)
        }
        guard let patch = try read(&source, at: location, allowsMissingID: allowsMissingID) else {
            throw Self.failure("the record cannot be read", at: location)
        }
        return patch
    }

    /// Reads one record from any backing: the one field loop. `nil` when the record holds something
    /// only its tree decides (``RecordMember/undecided``, a repeated key): the caller reads the tree.
    /// Inlined into each backing's entry, where the source's type is known: through a generic source
    /// every member would be a call through a witness table.
    ///
    /// - Throws: As ``decode(_:at:allowsMissingID:)``; for a backing read in place, also the errors
    ///   of its bytes.
    @inline(__always)
    func read(_ source: inout some RecordSource, at location: RecordLocation, allowsMissingID: Bool = false)
        throws -> RecordPatch<Model>?
    {
        var values = Model.FieldValues()
        var met = FieldSet()
        // Fields met whose value the model's decoding policy left out.
        var dropped = FieldSet()
        var id: ResourceID?
        var sawID = false
        var embedded: [(index: Int, patch: any RelatedPatch)] = []
        var version: RecordVersion?
        while let member = try source.nextMember() {
            switch member {
            case .undecided: return nil
            case .unknown: continue
            case .version:
                version = RecordVersion(try source.value.json())
            case .id:
                // A repeated id: the tree keeps the last.
                guard !sawID else { return nil }
                sawID = true
                let raw = try source.value.json()
                guard let parsed = ResourceID(json: raw) else {
                    throw Self.failure(
                        "the id must be an integer or a non-empty string, found \(raw)", at: location, key: idKey)
                }
                id = parsed
            case .field(let index):
                // A repeated key: the tree keeps the last.
                guard met.insert(index) else { return nil }
                if index == keys.versionField { version = RecordVersion(try source.value.json()) }
                if try !decodeField(index, from: source.value, into: &values, embedded: &embedded, at: location) {
                    _ = dropped.insert(index)
                }
            }
        }
        if !sawID, !allowsMissingID { throw Self.failure("the record has no id", at: location, key: idKey) }
        let isComplete = met.count == fieldCount && dropped.isEmpty
        if met.count < fieldCount {
            for index in 0..<fieldCount where !met.contains(index) {
                guard Model.shouldFail(withInvalidValue: nil, forProperty: fields[index].name) else { continue }
                let (prefix, key) = place(of: index, at: location)
                throw Self.failure(
                    "the required key is missing", at: RecordLocation(base: prefix), key: key, field: fields[index].name
                )
            }
        }
        // Moved in: a copy retained each string and array of the record, and releasing the
        // reader's touched them again.
        let patch = patchType.init(
            id: id, values: consume values,
            present: isComplete ? allPresent : met.present(of: fieldCount, removing: dropped),
            embedded: embedded,
            wire: embedding.keepsWire && id != nil ? source.wire(keyOrder: storedKeyOrder) : nil)
        if comparesDigests, isComplete { patch.digest = source.digest() }
        patch.version = version
        return patch
    }

    /// Decodes the field at `index` into `values`, or an embedded record into `embedded`; `false`
    /// when the model's decoding policy left a value it could not read out. Inlined into the loop:
    /// as a call, code generic over the model looked up the model's types again for every field.
    @inline(__always)
    private func decodeField(
        _ index: Int, from value: FieldSource, into values: inout Model.FieldValues,
        embedded: inout [(index: Int, patch: any RelatedPatch)], at location: RecordLocation
    ) throws -> Bool {
        // Generated code reads the plain fields; the schema entry, costly to copy, only the rest.
        do {
            if try values._$decodeField(index, from: value, with: direct) { return true }
        } catch {
            return try recover(index, from: value, into: &values, after: error, at: location)
        }
        let field = fields[index]
        if let embedding = field.embedded {
            let path = "\(location.description).\(keys.fields[index])"
            embedded.append((index, try embedding.decode(try value.json(), path, self.embedding)))
            return true
        }
        do {
            try field.decode(&values, try value.json(), coder)
            return true
        } catch {
            return try recover(index, from: value, into: &values, after: error, at: location)
        }
    }

    /// Asks the model for a value in place of one that failed to decode (ApiModel's
    /// `assign(undefinedValue:)`), then whether to fail; `false` when the field is left out.
    private func recover(
        _ index: Int, from value: FieldSource, into values: inout Model.FieldValues, after error: any Error,
        at location: RecordLocation
    ) throws -> Bool {
        let typeName = Model.resourceSchema.typeName
        let field = fields[index]
        let (prefix, key) = place(of: index, at: location)
        let raw = try value.json()
        let assigned: (any Sendable)?
        do {
            assigned = try Model.assign(undefinedValue: raw, forProperty: field.name)
        } catch let assignError {
            throw APIError(
                .decodingFailed, "\(typeName).\(field.name): \(assignError)",
                decodingFailure: FieldCoder.failure(
                    typeName: typeName, field: field.name, key: key, prefix: prefix, error: assignError),
                underlyingError: assignError)
        }
        if let assigned, field.assign(&values, assigned) { return true }
        guard Model.shouldFail(withInvalidValue: raw, forProperty: field.name) else { return false }
        let detail = FieldCoder.failure(
            typeName: typeName, field: field.name, key: key, prefix: prefix, error: error)
        throw APIError(decodingFailure: detail, underlyingError: error)
    }

    /// Where the field at `index` sits in a record, for errors, and its key there: the record and
    /// the field's wire key, or in a JSON:API resource object its `attributes` or `relationships`
    /// and the attribute's or relationship's name.
    private func place(of index: Int, at location: RecordLocation) -> (prefix: String, key: String) {
        guard let jsonAPI else { return (location.description, keys.fields[index]) }
        if let relationship = jsonAPI.places[index].relationship {
            return (location.description + ".relationships", relationship)
        }
        return (location.description + ".attributes", keys.fields[index])
    }

    static func failure(
        _ reason: String, at location: RecordLocation, key: String? = nil, field: String? = nil,
        underlying: (any Error)? = nil
    ) -> APIError {
        let path = location.description + (key.map { ".\($0)" } ?? "")
        let detail = DecodingFailure(
            typeName: Model.resourceSchema.typeName, key: key, path: path, reason: reason, field: field)
        return APIError(decodingFailure: detail, underlyingError: underlying)
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
