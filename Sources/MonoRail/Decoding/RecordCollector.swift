import Foundation

/// Reads one response's records for ``InPlaceBody`` and keeps them: each in place when it can be,
/// else from its tree, so a body read in place gives exactly the records its tree gives.
final class RecordCollector<Model: ResourceModel>: RecordReader, ResourceObjectReader {
    let decoder: RecordDecoder<Model>
    private(set) var patches: [RecordPatch<Model>] = []
    /// The ids kept, noted as they came: rising ids are distinct without a second look at the list.
    private(set) var rising = RisingIDs()

    init(_ decoder: RecordDecoder<Model>) { self.decoder = decoder }

    /// Makes room for `count` records: a record cache's batch, read one by one.
    func reserveCapacity(_ count: Int) {
        patches.reserveCapacity(count)
    }

    /// Forgets the records kept from `index` on.
    func forget(from index: Int) {
        if index < patches.count { patches.removeSubrange(index...) }
    }

    /// Keeps a record read otherwise, as the next one.
    func keep(_ patch: RecordPatch<Model>) {
        collect(patch)
    }

    func read(_ record: JSONTextValue, path: String, index: Int?, orTree: Bool) throws -> Int? {
        try keep(record, path: path, index: index, orTree: orTree)
    }

    func read(_ record: PackedValue, path: String, index: Int?, orTree: Bool) throws -> Int? {
        try keep(record, path: path, index: index, orTree: orTree)
    }

    /// Inlined into each backing's entry, where the record's form is known.
    @inline(__always)
    private func keep(_ record: some InPlaceValue, path: String, index: Int?, orTree: Bool) throws -> Int? {
        let location = RecordLocation(base: path, index: index)
        // A decoder of resource objects reads them in ``readResource(_:path:index:)``, never here.
        if decoder.readsInPlace, decoder.jsonAPI == nil,
            var source = record.record(keys: decoder.keys, coder: decoder.coder),
            let patch = try? decoder.readInPlace(&source, at: location)
        {
            collect(patch)
            return source.end
        }
        guard orTree else { return nil }
        let (tree, end) = try record.parse()
        if let patch = try decoder.decodeUnlessDropped(tree, at: location) { collect(patch) }
        return end
    }

    /// Reads a JSON:API resource object in place when it can, else from its tree.
    func readResource(_ resource: JSONTextValue, path: String, index: Int) throws -> Int {
        let location = RecordLocation(base: path, index: index)
        if decoder.readsInPlace, let layout = decoder.jsonAPI,
            var source = JSONAPITextRecord(resource, keys: decoder.keys, layout: layout, coder: decoder.coder),
            let patch = try? decoder.readInPlace(&source, at: location)
        {
            collect(patch)
            return source.end
        }
        let (tree, end) = try resource.parse()
        if let patch = try decoder.decodeUnlessDropped(tree, at: location) { collect(patch) }
        return end
    }

    @inline(__always)
    private func collect(_ patch: RecordPatch<Model>) {
        rising.note(patch.id)
        patches.append(patch)
    }
}
