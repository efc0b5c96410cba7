import Foundation

// Records read back from a record cache are MessagePack, or JSON text for a cache that takes it
// (``StoredRecord/format``): read in place when they can be, else as a tree, by the same code as
// a response, so a cached record gives the values, and a damaged one the errors, that its
// response gave.
extension ModelSetup {
    /// Cached records decoded in order, one decoder for all of them, each patch stamped with when
    /// its record was fetched (or `confirmed`, when the server just confirmed them); those at the
    /// places in `skipping` are not read, and those the model's `customDeserialize` drops are left
    /// out.
    ///
    /// - Throws: ``/MonoRailClient/APIError`` with ``/MonoRailClient/APIError/Code/decodingFailed``
    ///   for a body that is not one record.
    func decode(
        stored records: [StoredRecord], skipping: Set<Int> = [], confirmed: FetchStamp?,
        with decoder: RecordDecoder<Model>
    ) throws -> [RecordPatch<Model>] {
        let collector = RecordCollector(decoder)
        collector.reserveCapacity(records.count)
        let reader = client.responseDecoder.messagePackReader
        let parser = client.responseDecoder.parser
        for index in records.indices where skipping.isEmpty || !skipping.contains(index) {
            let kept = collector.patches.count
            let isJSON = records[index].format == .json
            // Read in place, a record's errors are not reported but read again from its tree: the
            // place named in them is spelled out only then.
            if !InPlaceBody.storedRecord(
                records[index].body, isJSON: isJSON, maxDepth: isJSON ? parser.maxDepth : reader.maxDepth,
                path: "cache", reader: collector)
            {
                // Read in place and followed by more bytes: the tree decides.
                collector.forget(from: kept)
                let location = RecordLocation(base: "cache(\(records[index].key))")
                let tree: JSONValue
                do {
                    tree = try isJSON ? parser.parse(records[index].body) : reader.readJSON(records[index].body)
                } catch {
                    throw RecordDecoder<Model>.failure(
                        "the cached record is not \(isJSON ? "JSON" : "MessagePack"): \(error)", at: location)
                }
                guard let patch = try decoder.decodeUnlessDropped(tree, at: location) else { continue }
                collector.keep(patch)
            }
            if collector.patches.count > kept { collector.patches[kept].fetched = confirmed ?? records[index].fetched }
        }
        return collector.patches
    }
}

extension SideLoading {
    static func decodeStored<Target: ResourceModel>(
        _ type: Target.Type, _ records: [StoredRecord], store: ResourceStore, confirmed: FetchStamp?
    ) throws -> any RelatedPatch {
        let setup = store.setup(for: Target.self)
        let decoder = setup.decoder(coder: FieldCoder(options: setup.coding), store: store)
        return RelatedRecords(patches: try setup.decode(stored: records, confirmed: confirmed, with: decoder))
    }
}
