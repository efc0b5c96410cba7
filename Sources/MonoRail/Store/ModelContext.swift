import Foundation
import HTTPTypes

/// Everything one model needs to talk to its server, worked out once per store configuration.
final class ModelContext<Model: ResourceModel>: Sendable {
    let client: APIClient
    /// Why requests cannot be sent (no API root yet); merging bodies received otherwise still works.
    let sendingError: APIError?
    let conventions: ServerConventions
    let coding: CodingOptions
    let singular: String
    let plural: String
    let path: String
    /// The wire key of each schema field, in schema order.
    let wireKeys: [String]
    let wireKeyBytes: [[UInt8]]
    let maxEmbeddingDepth: Int
    /// The related models whose records may come beside this one's, by plural name, first of each
    /// name only. Worked out once: a plural comes from the inflector, too slow to ask per response.
    let sideLoads: [(plural: String, loading: SideLoading)]

    init(configuration storeConfiguration: MonoRail.Configuration) throws {
        var configuration = storeConfiguration
        Model.configure(&configuration)
        do {
            client = APIClient(configuration: try configuration.clientConfiguration())
            sendingError = nil
        } catch let error as APIError {
            // Keep a client for decoding; it is never asked to send.
            var placeholder = configuration
            placeholder.apiRootURL = URL(fileURLWithPath: "/")
            client = APIClient(configuration: try placeholder.clientConfiguration())
            sendingError = error
        }
        conventions = configuration.conventions
        coding = configuration.coding
        maxEmbeddingDepth = configuration.maxEmbeddingDepth
        singular = Model.resourceName
        plural = Model.resourcePlural
        path = Model.resourcePath
        wireKeys = Model.resourceSchema.fields.map { $0.key ?? $0.defaultKey(configuration.coding.keyMapping) }
        wireKeyBytes = wireKeys.map { Array($0.utf8) }
        var seen = Set<String>()
        sideLoads = Model.resourceSchema.sideLoading.compactMap { loading in
            let plural = loading.plural()
            return seen.insert(plural).inserted ? (plural, loading) : nil
        }
    }

    func decoder(coder: FieldCoder, store: ResourceStore) -> RecordDecoder<Model> {
        RecordDecoder(
            coder: coder, wireKeys: wireKeys, wireKeyBytes: wireKeyBytes,
            embedding: EmbeddingContext(store: store, depth: 0, maxDepth: maxEmbeddingDepth))
    }

    // MARK: - Requests

    func path(for route: RouteTemplate, id: ResourceID? = nil, term: String? = nil) throws -> APIPath {
        var values = ["path": path, "plural": plural, "singular": singular]
        if let id { values["id"] = id.description }
        if let term { values["term"] = term }
        guard let expanded = route.expand(values) else {
            throw APIError(
                .invalidRequest,
                "the route \"\(route)\" of \(Model.resourceSchema.typeName) has a placeholder with no value "
                    + "(known: :path, :plural, :singular, :id, :term)")
        }
        return expanded
    }

    func send(
        _ method: HTTPRequest.Method, _ path: APIPath, query: [String: JSONValue] = [:], body: JSONValue? = nil,
        files: FileAttachments = FileAttachments(), action: ResourceAction,
        uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> APIResponse {
        if let sendingError { throw sendingError }
        let request = APIRequest(
            method: method, path: path, query: query, body: body.map { .tree($0, files: files) },
            bodyRoot: conventions.wrapsRequestBody && body != nil ? singular : nil,
            options: RequestOptions(
                operationName: "\(Model.resourceSchema.typeName).\(action.rawValue)", uploadProgress: uploadProgress))
        return try await client.send(request)
    }

    // MARK: - Responses

    /// The JSON of a response with the namespace removed.
    func container(of response: APIResponse) throws -> JSONValue {
        let json = try client.responseDecoder.parse(
            response.body, response: response.response, request: response.request)
        guard let namespace = conventions.rootNamespace, !namespace.isEmpty else { return json }
        guard let inner = json.value(atPath: namespace) else {
            throw failure("the response has no \"\(namespace)\" namespace", response, json)
        }
        return inner
    }

    /// A response's main record or records, where they sit, and what came beside them.
    struct Located<Main> {
        var main: Main
        var path: String
        /// The object around the main record(s), for side-loads; `nil` for a bare body.
        var container: [String: JSONValue]?
        var rootKey: String?
    }

    /// Where the body's content starts in error paths: `$`, or `$.data` under a namespace.
    var basePath: String { conventions.rootNamespace.map { "$.\($0)" } ?? "$" }

    /// The member that holds a list body's records, when they are not a bare array.
    var listKey: String {
        switch conventions.responseRoot {
        case .modelName: plural
        case .fixed(_, let list): list
        case .bare: "results"
        }
    }

    /// The single record in a response and where it sits.
    func record(in response: APIResponse) throws -> Located<JSONValue> {
        let json = try container(of: response)
        let base = basePath
        switch conventions.responseRoot {
        case .modelName:
            if case .object(let object) = json, let record = object[singular], case .object = record {
                return Located(main: record, path: "\(base).\(singular)", container: object, rootKey: singular)
            }
        case .fixed(let single, _):
            guard case .object(let object) = json, let record = object[single] else {
                throw failure("expected the record under \"\(single)\"", response, json)
            }
            return Located(main: record, path: "\(base).\(single)", container: object, rootKey: single)
        case .bare:
            break
        }
        try rejectErrorsMember(json, response)
        return Located(main: json, path: base, container: nil, rootKey: nil)
    }

    /// The list of records in a response and the path of the list.
    func records(in response: APIResponse) throws -> Located<[JSONValue]> {
        let json = try container(of: response)
        let base = basePath
        if case .array(let array) = json { return Located(main: array, path: base, container: nil, rootKey: nil) }
        let key = listKey
        if case .object(let object) = json, case .array(let array)? = object[key] {
            return Located(main: array, path: "\(base).\(key)", container: object, rootKey: key)
        }
        try rejectErrorsMember(json, response)
        throw failure("expected a list of \(plural) (an array, or an object with \"\(key)\")", response, json)
    }

    /// Related records side-loaded beside the main ones (Objects' format), for models this one relates
    /// to; keys that name no related model are ignored.
    func sideloaded<Main>(_ located: Located<Main>, store: ResourceStore) throws -> [any EmbeddedPatch] {
        guard let container = located.container else { return [] }
        let base = basePath
        var patches: [any EmbeddedPatch] = []
        for (plural, loading) in sideLoads {
            guard plural != located.rootKey, let value = container[plural] else { continue }
            patches.append(
                try loading.decode(
                    value, "\(base).\(plural)", EmbeddingContext(store: store, depth: 1, maxDepth: maxEmbeddingDepth)))
        }
        return patches
    }

    /// A 2xx body that holds only validation errors is a failure, as ApiModel treats it.
    private func rejectErrorsMember(_ json: JSONValue, _ response: APIResponse) throws {
        guard case .object(let object) = json, object["errors"] != nil, object["id"] == nil,
            let errors = ValidationErrors.parse(json, roots: [singular], allowsBareFields: false), !errors.isEmpty
        else { return }
        throw APIError.validationFailed(
            errors, request: response.request, response: response.response, rawBody: response.body, parsedBody: json)
    }

    func failure(_ message: String, _ response: APIResponse, _ json: JSONValue?) -> APIError {
        APIError(
            .decodingFailed, "\(Model.resourceSchema.typeName): \(message)",
            request: response.request, response: response.response, rawBody: response.body, parsedBody: json,
            decodingFailure: DecodingFailure(
                typeName: Model.resourceSchema.typeName, key: nil, path: "$", reason: message))
    }

    /// Adds the request and response to an error raised while reading a response.
    func attach(_ error: any Error, to response: APIResponse) -> any Error {
        guard var error = error as? APIError else { return error }
        if error.request == nil { error.request = response.request }
        if error.response == nil { error.response = response.response }
        if error.rawBody == nil { error.rawBody = response.body }
        return error
    }
}
