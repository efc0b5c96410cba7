import Foundation

@testable import MonoRail
@testable import MonoRailClient

/// A coupling of samples: attributes of a few types and both kinds of linkage.
@Resource
final class Coupling {
    var label: String?
    var weight: Double?
    var tags: [String] = []
    @References var sample: Sample?
    @References(.many) var samples: [Sample]
}

/// A JSON:API document merged with the `.jsonAPI` preset against the same records flattened, by a
/// reading of the specification written here apart from the library's, into plain records merged
/// through the JSON tree: a document the preset accepts gives exactly the records the tree gives; a
/// document it refuses is a typed error with nothing merged, within the heap bound.
enum JSONAPIFuzz {
    static func run(_ data: Data) {
        let store = jsonAPIStore()
        var merged: Result<[Coupling], any Error> = .success([])
        MemoryBound.check(inputSize: data.count, perByte: 512, slack: 4 << 20) {
            merged = Result { try Coupling.merge(listBody: data, contentType: JSONAPIDocument.mediaType, in: store) }
        }
        switch merged {
        case .failure(let error):
            guard error is APIError else { fatalError("not an APIError: \(error)") }
            if store.count != 0 { fatalError("a refused document left \(store.count) records") }
        case .success(let couplings):
            guard let body = try? JSONParser().parse(data), let flat = flatten(body) else {
                fatalError("the preset accepted a document the specification refuses")
            }
            let treeStore = offlineStore()
            let built: [Coupling]
            do {
                built = try Coupling.merge(
                    listBody: JSONWriter.serialize(.array(flat)), contentType: "application/json", in: treeStore)
            } catch {
                fatalError("the preset accepted records the tree refuses: \(error)")
            }
            let read = couplings.map(wireForm)
            let expected = built.map(wireForm)
            if read != expected { fatalError("as JSON:API \(read), flattened \(expected)") }
        }
    }

    private static func jsonAPIStore() -> ResourceStore {
        var configuration = MonoRail.Configuration(apiRootURL: URL(string: "http://127.0.0.1:9"))
        configuration.conventions = .jsonAPI
        return ResourceStore(configuration: configuration)
    }

    /// The primary resource objects as plain records — `{"id", attributes…, "sample_id", "sample_ids"}`
    /// — or `nil` for a document the specification refuses.
    private static func flatten(_ body: JSONValue) -> [JSONValue]? {
        guard case .array(let resources)? = body["data"] else { return nil }
        if let included = body["included"], included != .null {
            guard case .array(let items) = included else { return nil }
            for item in items {
                guard identity(of: item) != nil else { return nil }
            }
        }
        var records: [JSONValue] = []
        for resource in resources {
            guard let (type, id) = identity(of: resource), names(type, Coupling.self) else { return nil }
            var record: [String: JSONValue] = [:]
            switch resource["attributes"] {
            case nil, .null?: break
            case .object(let attributes)?: record = attributes
            default: return nil
            }
            // Only relationships carry linkage; an attribute of a linkage's key is no field.
            for key in ["id", "sample_id", "sample_ids"] { record[key] = nil }
            record["id"] = .string(id)
            var relationships: [String: JSONValue] = [:]
            switch resource["relationships"] {
            case nil, .null?: break
            case .object(let members)?: relationships = members
            default: return nil
            }
            for (name, key, many) in [("sample", "sample_id", false), ("samples", "sample_ids", true)] {
                guard let relationship = relationships[name], relationship != .null else { continue }
                guard case .object(let members) = relationship else { return nil }
                guard let linkage = members["data"] else { continue }
                switch (linkage, many) {
                case (.null, false):
                    record[key] = .null
                case (.object, false):
                    guard let (type, id) = identity(of: linkage), names(type, Sample.self) else { return nil }
                    record[key] = .string(id)
                case (.array(let items), true):
                    var ids: [JSONValue] = []
                    for item in items {
                        guard let (type, id) = identity(of: item), names(type, Sample.self) else { return nil }
                        ids.append(.string(id))
                    }
                    record[key] = .array(ids)
                default:
                    return nil
                }
            }
            records.append(.object(record))
        }
        return records
    }

    /// A resource object's or identifier's `type` and `id`, both non-empty strings.
    private static func identity(of value: JSONValue) -> (String, String)? {
        guard case .object(let members) = value, case .string(let type)? = members["type"], !type.isEmpty,
            case .string(let id)? = members["id"], !id.isEmpty
        else { return nil }
        return (type, id)
    }

    /// Whether `type` names the model: its plural, singular or class name, in any case, with or
    /// without dashes and underscores.
    private static func names<Model: ResourceModel>(_ type: String, _ model: Model.Type) -> Bool {
        let spelled = type.lowercased().filter { $0 != "-" && $0 != "_" }
        return [model.resourcePlural, model.resourceName, model.resourceSchema.typeName].contains {
            $0.lowercased().filter { $0 != "-" && $0 != "_" } == spelled
        }
    }
}
