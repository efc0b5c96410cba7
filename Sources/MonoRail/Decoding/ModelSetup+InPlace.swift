import Foundation

// JSON and MessagePack bodies are read in place (``InPlaceBody``): the main record or list found by
// the locator like any other body, each record checked exactly as the tree's reader would check it
// and decoded where it lies, instead of the whole body being built as a tree first.
extension ModelSetup {
    /// The records of a list body, decoded in place; `nil` when the body is to be read as a tree,
    /// which then decides and reports exactly as for any other body.
    func inPlaceRecords(in response: APIResponse, decoder: RecordDecoder<Model>) -> Located<[RecordPatch<Model>]>? {
        if jsonAPI != nil { return inPlaceDocument(in: response, decoder: decoder) }
        let contentType = response.response.headerFields[.contentType]
        let collector = RecordCollector(decoder)
        guard
            let found = InPlaceBody.list(
                in: response.body, contentType: contentType, maxDepth: maxDepth(for: contentType), locator: locator,
                listKeys: listKeys, typeName: typeName, reader: collector),
            (try? RecordPatch.requireDistinctIDs(collector.patches, at: found.path, rising: collector.rising)) != nil
        else { return nil }
        return Located(main: collector.patches, path: found.path, container: found.container, rootKey: found.root)
    }

    /// The one record of a body, found as ``record(in:)`` finds it and decoded in place; `nil` when
    /// it is to be read as a tree (see ``inPlaceRecords(in:decoder:)``): also a record with no id,
    /// as a write's answer may be.
    func inPlaceRecord(in response: APIResponse, decoder: RecordDecoder<Model>) -> Located<RecordPatch<Model>>? {
        guard jsonAPI == nil else { return nil }
        let contentType = response.response.headerFields[.contentType]
        let (roots, shape, required) = recordRoots
        let collector = RecordCollector(decoder)
        guard
            let found = InPlaceBody.record(
                in: response.body, contentType: contentType, maxDepth: maxDepth(for: contentType), locator: locator,
                roots: roots, shape: shape, required: required, typeName: typeName,
                reader: collector),
            let patch = collector.patches.first
        else { return nil }
        return Located(main: patch, path: found.path, container: found.container, rootKey: found.root)
    }

    /// The records of a JSON:API list document, read in place
    /// (``/MonoRailClient/JSONAPIDocument/inPlace(_:maxDepth:typeName:keepsRelationships:reader:)``);
    /// `nil` when the document is to be read as a tree.
    private func inPlaceDocument(in response: APIResponse, decoder: RecordDecoder<Model>)
        -> Located<[RecordPatch<Model>]>?
    {
        let contentType = response.response.headerFields[.contentType]
        guard WireFormat.ofResponse(contentType: contentType) == .json else { return nil }
        let collector = RecordCollector(decoder)
        guard
            let document = JSONAPIDocument.inPlace(
                response.body, maxDepth: maxDepth(for: contentType), typeName: typeName,
                keepsRelationships: !Model.resourceSchema.hasRelationships.isEmpty, reader: collector),
            (try? RecordPatch.requireDistinctIDs(
                collector.patches, at: JSONAPIDocument.dataPath, rising: collector.rising)) != nil
        else { return nil }
        note(document)
        return Located(
            main: collector.patches, path: JSONAPIDocument.dataPath, container: document.members, rootKey: "data",
            document: document)
    }

    /// The nesting limit of the reader a body of `contentType` is read with as a tree.
    private func maxDepth(for contentType: String?) -> Int {
        let decoder = client.responseDecoder
        return WireFormat.ofResponse(contentType: contentType) == .messagePack
            ? decoder.messagePackReader.maxDepth : decoder.parser.maxDepth
    }
}
