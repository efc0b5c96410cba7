import Foundation

// Records read back from a record cache are MessagePack (``StoredRecord/body``): read in place
// when they can be, else as a tree, by the same code as a MessagePack response, so a cached
// record gives the values, and a damaged one the errors, that its response gave.
extension ModelSetup {
    /// One cached record, decoded with `collector`'s decoder; `nil` when the model's
    /// `customDeserialize` drops it. The collector is reused across the records of a batch.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` with ``/MonoRailClient/APIError/Code/decodingFailed`` for a body that is not one
    ///   record.
    func decode(stored record: StoredRecord, with collector: RecordCollector<Model>) throws -> RecordPatch<Model>? {
        let base = "cache(\(record.key))"
        let reader = client.responseDecoder.messagePackReader
        collector.removeAll()
        if InPlaceBody.storedRecord(record.body, maxDepth: reader.maxDepth, path: base, reader: collector),
            let patch = collector.patches.first
        {
            return patch
        }
        let location = RecordLocation(base: base)
        let tree: JSONValue
        do {
            tree = try reader.readJSON(record.body)
        } catch {
            throw RecordDecoder<Model>.failure("the cached record is not MessagePack: \(error)", at: location)
        }
        return try collector.decoder.decodeUnlessDropped(tree, at: location)
    }
}

extension SideLoading {
    static func decodeStored<Target: ResourceModel>(
        _ type: Target.Type, _ records: [StoredRecord], store: ResourceStore, confirmed: FetchStamp?
    ) throws -> any EmbeddedPatch {
        let setup = store.setup(for: Target.self)
        let collector = RecordCollector(setup.decoder(coder: FieldCoder(options: setup.coding), store: store))
        var patches: [RecordPatch<Target>] = []
        patches.reserveCapacity(records.count)
        for record in records {
            guard let patch = try setup.decode(stored: record, with: collector) else { continue }
            patch.fetched = confirmed ?? record.fetched
            patches.append(patch)
        }
        return EmbeddedRecords(patches: patches)
    }
}
