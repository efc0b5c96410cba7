import Foundation

/// One record decoded from a response and not yet merged: its id, the values of the fields the
/// response carried, and which fields those were.
///
/// A class: the merge passes each patch through unspecialised generic code, where handing over a
/// struct copied every field value (and retained every string in it).
final class RecordPatch<Model: ResourceModel> {
    /// `nil` only in the answer to a create or save that names no id (ApiModel's upload endpoint
    /// answering `{"upload": {"filename": …}}`): it describes the instance that was sent.
    let id: ResourceID?
    /// Moved into the instance by a merge that takes the record whole: read it before. Empty for a
    /// record found unchanged (``isUnchanged``).
    var values: Model.FieldValues
    let present: [Bool]
    /// Embedded related records, by the index of the field that holds them.
    let embedded: [(index: Int, patch: any RelatedPatch)]
    /// The record as it came, for the record cache; `nil` unless the decoder was asked to keep it.
    let wire: WireRecord?
    /// When the record was fetched, for a record read back from a cache, or the stamp of a create's
    /// answer dated as the create made the record; `nil` for one of a response, which has the
    /// response's stamp.
    var fetched: FetchStamp?
    /// The ``RecordDigest`` of the record's bytes, for a complete record read in place.
    var digest: Int?
    /// The live instance the record was found unchanged for; the merge takes it (and it stays
    /// ``known`` only while ``knownRemovals`` is the identity map's ``IdentityMap/removals``:
    /// while that count stands, the merge need not look it up again). Moved, not copied: a retain
    /// or release of an instance the identity map holds weakly takes the runtime's slow path.
    var known: Model?
    var knownRemovals = 0
    /// For a record whose bytes were found to be the ones ``known``'s server values were decoded
    /// from (its ``digest``), and so were not decoded (``values`` is empty): that instance's state.
    /// The merge checks that still holds before it changes anything.
    var unchanged: InstanceState<Model>?

    var isUnchanged: Bool { unchanged != nil }
    /// The record's version (``ServerConventions/versionKey``), when it has one.
    var version: RecordVersion?
    /// Whether the store heard the record was deleted on the server after the answer was asked for:
    /// nothing of it is merged or kept.
    var isGone = false

    init(
        id: ResourceID?, values: Model.FieldValues, present: [Bool], embedded: [(index: Int, patch: any RelatedPatch)],
        wire: WireRecord? = nil
    ) {
        self.id = id
        self.values = values
        self.present = present
        self.embedded = embedded
        self.wire = wire
    }
}

extension RecordPatch {
    /// Adds this record and the records embedded in it, each under its own model and id, to what
    /// a record cache is given; records kept without their form as received, or without an id,
    /// are left out. A cache `acceptingJSON` is given a record read in place from JSON as its text.
    func collect(into records: inout [StoredRecord], model: String, fetched: FetchStamp, acceptingJSON: Bool) {
        if isGone { return }
        if let id, let wire {
            let fetched = self.fetched ?? fetched
            let (body, isJSON) = wire.stored(acceptingJSON: acceptingJSON)
            records.append(
                StoredRecord(
                    key: RecordKey(model: model, id: id), body: body, fetchedAt: fetched.date, order: fetched.order,
                    format: isJSON ? .json : .messagePack))
        }
        for nested in embedded {
            nested.patch.collect(into: &records, fetched: fetched, acceptingJSON: acceptingJSON)
        }
    }
}

extension RecordPatch {
    /// Throws `.inconsistentResponse` when two patches name the same record: a list that names a
    /// record twice does not say which of the two is the record, so nothing of it merges.
    ///
    /// - Parameter rising: The ids as a reader noted them while it read the list; when they rose,
    ///   the list is not read again.
    static func requireDistinctIDs(_ patches: [RecordPatch], at path: String, rising: RisingIDs? = nil) throws {
        if rising?.hold == true { return }
        if rising == nil {
            var noted = RisingIDs()
            for patch in patches where noted.hold { noted.note(patch.id) }
            if noted.hold { return }
        }
        var seen = Set<IdentityMap.Key.Normalized>(minimumCapacity: patches.count)
        for (index, patch) in patches.enumerated() {
            guard let id = patch.id, !seen.insert(IdentityMap.Key.Normalized(id)).inserted else { continue }
            throw APIError(
                .inconsistentResponse,
                "\(Model.resourceSchema.typeName) \(id.debugText) appears twice in one list (at \(path)[\(index)])")
        }
    }
}

/// The ids of a list's records, noted as they are read. Lists usually come ordered by an integer
/// id, and rising ids are distinct without hashing them: a reader that saw them rise need not
/// check the list again (``RecordPatch/requireDistinctIDs(_:at:rising:)``), which would mean reading every
/// record once more after they have left the processor's caches.
struct RisingIDs {
    private var last = Int64.min
    /// Whether every id noted so far was an integer above the one before: an integer, or a string
    /// the identity map takes for one (JSON:API's `"1"`, `"2"`, …).
    private(set) var hold = true

    mutating func note(_ id: ResourceID?) {
        guard hold, let id, case .int(let value) = IdentityMap.Key.Normalized(id), value > last else {
            hold = false
            return
        }
        last = value
    }
}

/// Where a record sits in a response, for error messages: `$.trains[3]`.
struct RecordLocation {
    var base: String
    var index: Int?

    var description: String { index.map { "\(base)[\($0)]" } ?? base }
}
