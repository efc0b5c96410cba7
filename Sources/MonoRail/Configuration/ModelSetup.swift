import Atomics
import Foundation
import HTTPTypes
import Logging
import MonoRailTransport

/// Everything one model needs to talk to its server, worked out once per store configuration.
final class ModelSetup<Model: ResourceModel>: Sendable {
    let client: APIClient
    /// Why requests cannot be sent (no API root yet); merging bodies received otherwise still works.
    let sendingError: APIError?
    /// Why the model's actions are refused: its ``ResourceModel/configure(_:)`` sets what only the
    /// store decides.
    let configurationError: APIError?
    let conventions: ServerConventions
    let coding: CodingOptions
    /// Sent with each request, so a model that changes them alone shares the store's client.
    let format: WireFormat
    let timeout: Duration?
    /// ``MonoRail/Configuration/offlineDeadline``.
    let offlineDeadline: Duration
    /// The model's type name, for messages: read once, as `Model.resourceSchema` in code generic over
    /// the model copies the whole schema out of its witness.
    let typeName: String
    let singular: String
    let plural: String
    let path: String
    /// The wire key of each schema field, in schema order.
    let wireKeys: [String]
    /// The id key, then the field keys, each once: the order a record cache keeps a record's keys in.
    let storedKeyOrder: [String]
    /// The key that holds the id, ``ResourceModel/primaryKey``.
    let idKey: String
    /// The wire keys and the id key, as a record reader matches them.
    let recordKeys: RecordKeys
    /// What every decoder of the model takes from its schema.
    let decoderPlan = RecordDecoder<Model>.Plan()
    /// Coders for the model's merges, reused: making one costs more than a small record's decode.
    let coders: FieldCoderPool
    /// The key each embedded `@References` field is sent back as (`depot_id`); `nil` for other fields.
    let referenceIDKeys: [String?]
    let maxEmbeddingDepth: Int
    let storage: (any RecordCache)?
    let cachePolicy: CachePolicy
    let fileCache: FileCache?
    /// ``MonoRail/Configuration/cacheTimeToLive`` in seconds.
    let cacheTimeToLive: Double?
    let writePolicy: WritePolicy
    let conditionalWrites: Bool
    let prunesOrphans: Bool
    /// Whether the outbox's kept writes of this model are back on live instances.
    let outboxRestored = ManagedAtomic<Bool>(false)
    /// The models known by name, for polymorphic references.
    let models: ModelRegistry
    /// The related models whose records may come beside this one's, by plural name, first of each
    /// name only. Worked out once: a plural comes from the inflector, too slow to ask per response.
    let sideLoads: [(plural: String, loading: SideLoading)]
    /// The envelope rules of this model's responses.
    let locator: ResponseLocator
    /// The roots a single record may sit under, and whether one is required.
    let recordRoots: (roots: [String], shape: ResponseLocator.Shape, required: Bool)
    /// Where fields sit in a resource object, when the conventions speak JSON:API.
    let jsonAPI: JSONAPILayout?
    /// Each route of the conventions as OpenTelemetry's `url.template`, by the route as written:
    /// worked out once, as every request's span and measurement names one.
    let urlTemplates: [String: String]
    /// The `type` the server named the model's resource objects with, once it has.
    let learnedResourceType = Locked<String?>(nil)
    /// The store's: the JSON:API extensions the server's documents said it serves.
    let advertisedExtensions: Locked<Set<String>>

    /// - Parameters:
    ///   - storeConfiguration: The store's configuration, before the model's own changes.
    ///   - storeClient: The store's client, used unless the model changes the client settings.
    ///   - advertisedExtensions: The store's note of the JSON:API extensions its server serves.
    init(
        configuration storeConfiguration: MonoRail.Configuration, storeClient: APIClient,
        advertisedExtensions: Locked<Set<String>> = Locked([])
    ) {
        self.advertisedExtensions = advertisedExtensions
        let (configuration, configurationError) = Self.configuration(of: storeConfiguration)
        self.configurationError = configurationError
        client =
            configuration.clientRevision == storeConfiguration.clientRevision
            ? storeClient : APIClient(configuration: configuration.resolvedClient)
        sendingError = configuration.apiRootURL == nil ? MonoRail.Configuration.noAPIRoot : nil
        conventions = configuration.conventions
        locator = ResponseLocator(
            rootNamespace: configuration.conventions.rootNamespace,
            treatsErrorsMemberAsFailure: configuration.client.envelope.treatsErrorsMemberAsFailure)
        coding = configuration.coding
        coders = FieldCoderPool(options: configuration.coding)
        format =
            configuration.formatIsExplicit
            ? configuration.format : configuration.conventions.format ?? configuration.format
        timeout = configuration.timeout
        offlineDeadline = configuration.offlineDeadline
        maxEmbeddingDepth = configuration.maxEmbeddingDepth
        storage = configuration.storage
        // What this launch fetches is newer than anything the storage kept, whatever the clock says.
        if let storage { FetchStamp.raise(above: storage.highestOrder) }
        cachePolicy = configuration.cachePolicy
        fileCache = configuration.fileCache
        cacheTimeToLive = configuration.cacheTimeToLive.map(\.timeInterval)
        writePolicy = configuration.writePolicy
        conditionalWrites = configuration.conditionalWrites
        prunesOrphans = configuration.prunesOrphans
        models = configuration.models
        let schema = Model.resourceSchema
        typeName = schema.typeName
        singular = Model.resourceName
        plural = Model.resourcePlural
        path = Model.resourcePath
        wireKeys = schema.fields.map {
            $0.key ?? $0.defaultKey(configuration.coding.keyMapping, configuration.conventions)
        }
        var seenKeys = Set<String>()
        storedKeyOrder = ([Model.primaryKey] + wireKeys).filter { seenKeys.insert($0).inserted }
        idKey = Model.primaryKey
        recordKeys = RecordKeys(fields: wireKeys, id: idKey, version: configuration.conventions.versionKey)
        referenceIDKeys = schema.fields.map { field in
            field.embedded?.reference.map {
                $0.key ?? $0.defaultKey(configuration.coding.keyMapping, configuration.conventions)
            }
        }
        sideLoads = Self.sideLoads(registered: configuration.models)
        recordRoots =
            switch configuration.conventions.responseRoot {
            case _ where configuration.conventions.bodyStyle == .jsonAPI: (["data"], .object, true)
            case .modelName: ([singular], .object, false)
            case .fixed(let single, _): ([single], .any, true)
            case .bare: ([], .any, false)
            }
        jsonAPI =
            configuration.conventions.bodyStyle == .jsonAPI
            ? Self.jsonAPILayout(mapping: configuration.coding.keyMapping, registry: configuration.models) : nil
        let routes = configuration.conventions.routes
        var urlTemplates: [String: String] = [:]
        for route in [routes.index, routes.show, routes.create, routes.update, routes.destroy, routes.search] {
            urlTemplates[route.template] = route.urlTemplate(
                base: client.basePath, path: path, plural: plural, singular: singular)
        }
        self.urlTemplates = urlTemplates
    }

    /// `route` as OpenTelemetry's `url.template`: `/trains/{id}`.
    func urlTemplate(for route: RouteTemplate) -> String {
        urlTemplates[route.template]
            ?? route.urlTemplate(base: client.basePath, path: path, plural: plural, singular: singular)
    }

    /// The `url.template` of a next-page link: the index route's, when the link is on the index
    /// route's path (a page number or cursor in its query); `nil` for a path of the server's own.
    func urlTemplate(ofPage link: URL) -> String? {
        let index = conventions.routes.index
        guard let template = urlTemplates[index.template], !template.contains("{") else { return nil }
        let linked = URLComponents(url: link, resolvingAgainstBaseURL: true)?.percentEncodedPath
        return linked == template ? template : nil
    }

    /// The store's configuration as the model's `configure(_:)` adjusts it; delivery stays the store's.
    private static func configuration(of store: MonoRail.Configuration) -> (MonoRail.Configuration, APIError?) {
        var configuration = store
        Model.configure(&configuration)
        // Settings of the store as a whole: what a model sets is not used, and its actions say so.
        var storeOnly: [String] = []
        if configuration.delivery != store.delivery { storeOnly.append("delivery") }
        if configuration.storage !== store.storage { storeOnly.append("storage") }
        if configuration.fileCache !== store.fileCache { storeOnly.append("fileCache") }
        if configuration.outboxLimits != store.outboxLimits { storeOnly.append("outboxLimits") }
        if configuration.allowsQueuedWritesLostOnQuit != store.allowsQueuedWritesLostOnQuit {
            storeOnly.append("allowsQueuedWritesLostOnQuit")
        }
        if configuration.liveUpdates?.path != store.liveUpdates?.path { storeOnly.append("liveUpdates") }
        guard !storeOnly.isEmpty else { return (configuration, nil) }
        let message =
            "\(Model.resourceSchema.typeName).configure(_:) sets \(storeOnly.joined(separator: ", ")), which only the "
            + "store's configuration decides (MonoRail.configure, or the store's configure); its actions are refused"
        configuration.logger.error("\(message)")
        configuration.delivery = store.delivery
        configuration.storage = store.storage
        configuration.fileCache = store.fileCache
        configuration.outboxLimits = store.outboxLimits
        configuration.allowsQueuedWritesLostOnQuit = store.allowsQueuedWritesLostOnQuit
        configuration.liveUpdates = store.liveUpdates
        return (configuration, APIError(.invalidConfiguration, message))
    }

    /// The related models whose records may come beside this model's, by plural: the model's own
    /// relationships first, then every registered model.
    private static func sideLoads(registered: ModelRegistry) -> [(plural: String, loading: SideLoading)] {
        var seen = Set<String>()
        let registered = registered.models.map { SideLoading.of($0) }
        return (Model.resourceSchema.sideLoading + registered).compactMap { loading in
            let plural = loading.plural()
            return seen.insert(plural).inserted ? (plural, loading) : nil
        }
    }

    /// A decoder of this model's records: the main records of a response, or records embedded in
    /// another model's as `embedding` says.
    ///
    /// - Parameters:
    ///   - keepsWire: Whether each record keeps its form as received, for the record cache.
    ///   - probing: Whether records whose bytes are the ones their instance was merged from are
    ///     left undecoded (``RecordDigest``): for reads.
    ///   - readsDocuments: Whether records are a response's resource objects, with JSON:API
    ///     conventions; records kept by a record cache or the outbox, and those an app hands over,
    ///     are plain records under their wire keys.
    func decoder(
        coder: FieldCoder, store: ResourceStore, embedding: EmbeddingContext? = nil, keepsWire: Bool = false,
        probing: Bool = true, readsDocuments: Bool = false
    ) -> RecordDecoder<Model> {
        RecordDecoder(
            plan: decoderPlan, coder: coder, keys: recordKeys, storedKeyOrder: storedKeyOrder,
            embedding: embedding
                ?? EmbeddingContext(store: store, depth: 0, maxDepth: maxEmbeddingDepth, keepsWire: keepsWire),
            probes: DigestProbes(on: probing), jsonAPI: readsDocuments ? jsonAPI : nil)
    }

    // MARK: - Requests

    /// Fills a route: `:path`, `:plural`, `:singular`, `:id` and `:term` from the action, every
    /// other placeholder (`:train_id`, `:user`) from the request's parameters — a placeholder's
    /// parameter leaves them, as Rails' nested routes take the parent's id in the path — then
    /// from the fields of `instance` by wire key or by name (a reference gives its id).
    ///
    /// - Throws: ``/MonoRailClient/APIError/Code/invalidRequest`` before any request when a placeholder has no value,
    ///   or one that is empty or not a single string or number.
    func path(
        for route: RouteTemplate, id: ResourceID? = nil, term: String? = nil,
        parameters: inout [String: JSONValue], instance: Model? = nil
    ) throws -> APIPath {
        var failure: APIError?
        var consumed: [String] = []
        let expanded = route.expand { name in
            switch name {
            case "path": return path
            case "plural": return plural
            case "singular": return singular
            case "id": return id?.description
            case "term": return term
            default:
                let value: JSONValue?
                if let parameter = parameters[name] {
                    consumed.append(name)
                    value = parameter
                } else {
                    value = instance.flatMap { self.value(named: name, of: $0) }
                }
                do throws(APIError) {
                    return try Self.segment(value, for: name, of: route)
                } catch {
                    failure = failure ?? error
                    return nil
                }
            }
        }
        if let failure { throw failure }
        guard let expanded else {
            let missing = route.placeholders.filter { name in
                !["path", "plural", "singular"].contains(name) && !consumed.contains(name)
                    && !(name == "id" && id != nil) && !(name == "term" && term != nil)
            }
            throw APIError(
                .invalidRequest,
                "the route \"\(route)\" of \(Model.resourceSchema.typeName) has no value for "
                    + missing.map { ":" + $0 }.joined(separator: ", ")
                    + " (:id and :term come from the action; any other from the filter or parameters, or from the "
                    + "record's field of that name or key)")
        }
        for name in consumed { parameters[name] = nil }
        return expanded
    }

    /// The text a parameter's or field's value puts in a path: a non-empty string, or an integer.
    private static func segment(_ value: JSONValue?, for name: String, of route: RouteTemplate) throws(APIError)
        -> String?
    {
        switch value {
        case .string(let text)? where !text.isEmpty: return text
        case .int(let number)?: return String(number)
        case nil: return nil
        case let value?:
            throw APIError(
                .invalidRequest,
                "the route \"\(route)\" of \(Model.resourceSchema.typeName) cannot put \(value) in the path "
                    + "for :\(name); it takes a non-empty string or an integer")
        }
    }

    /// ``path(for:id:term:parameters:instance:)`` of a route that needs no parameters.
    func path(for route: RouteTemplate, id: ResourceID? = nil, term: String? = nil, instance: Model? = nil) throws
        -> APIPath
    {
        var none: [String: JSONValue] = [:]
        return try path(for: route, id: id, term: term, parameters: &none, instance: instance)
    }

    /// The wire value of the field whose wire key or Swift name is `name`.
    private func value(named name: String, of instance: Model) -> JSONValue? {
        let fields = decoderPlan.fields
        guard let index = wireKeys.firstIndex(of: name) ?? fields.firstIndex(where: { $0.name == name }) else {
            return nil
        }
        let coder = FieldCoder(options: coding)
        let value = instance._$state.state.withLock { try? fields[index].encode($0.values, coder) }
        return value?.isNull == true ? nil : value
    }

    /// The path of a next-page link, which must stay on the API's origin: a link is the server's
    /// word, and following it elsewhere would hand the API's credentials to another host.
    func path(following link: URL) throws -> APIPath {
        guard try isOnOrigin(link) else {
            let root = try client.url(for: "/")
            throw APIError(
                .inconsistentResponse,
                "the next page of \(Model.resourceSchema.typeName) is linked at \(link.absoluteString), off the "
                    + "API's origin \(root.scheme ?? "")://\(root.host ?? ""); it is not followed")
        }
        return APIPath(verbatim: link.absoluteString)
    }

    /// A path the app gave for a read (``ResourceModel/get(path:parameters:policy:in:)``): under the
    /// API's root, or an absolute URL on its origin. Anything else would send the app's credentials
    /// elsewhere, and is refused before any request.
    func path(at given: APIPath) throws -> APIPath {
        let text = given.encoded
        let pathPart = text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        if let url = URL(string: text), url.scheme != nil {
            guard try isOnOrigin(url) else {
                throw APIError(
                    .invalidRequest,
                    "\(text) is not on the API's origin; \(Model.resourceSchema.typeName) is read only from there")
            }
        } else if text.hasPrefix("//") || text.contains("\\") || text.contains("#") {
            throw APIError(.invalidRequest, "\(text) is not a path under the API's root")
        }
        let segments = pathPart.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        if segments.contains(where: { $0 == "." || $0 == ".." }) {
            throw APIError(.invalidRequest, "\(text) has a . or .. segment, which would leave the API's root")
        }
        return given
    }

    /// Whether a URL has the scheme, host and port of the API's root.
    private func isOnOrigin(_ url: URL) throws -> Bool {
        let root = try client.url(for: "/")
        guard let scheme = url.scheme?.lowercased(), scheme == root.scheme?.lowercased() else { return false }
        return url.host?.lowercased() == root.host?.lowercased()
            && (url.port ?? Self.defaultPort(scheme)) == (root.port ?? Self.defaultPort(scheme))
    }

    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    // MARK: - Responses

    /// A response's main record or records, where they sit, and what came beside them.
    struct Located<Main> {
        var main: Main
        var path: String
        /// The object around the main record(s), for side-loads; `nil` for a bare body.
        var container: [String: JSONValue]?
        var rootKey: String?
        /// The JSON:API document the records came in: its included records, and what its primary
        /// resource objects say of their `@Has` relationships.
        var document: JSONAPIDocument? = nil
    }

    /// The members that may hold a list body's records, when they are not a bare array.
    var listKeys: [String] {
        if jsonAPI != nil { return ["data"] }
        return switch conventions.responseRoot {
        case .modelName: [plural]
        case .fixed(_, let list): [list]
        case .bare: conventions.listKeys
        }
    }

    /// The single record in a response and where it sits.
    func record(in response: APIResponse) throws -> Located<JSONValue> {
        if jsonAPI != nil {
            let document = try document(in: response, expecting: .one)
            guard let resource = document.main.first else {
                throw APIError(
                    .inconsistentResponse, "the response's primary data is null: it holds no \(typeName)")
            }
            var located = Located(
                main: resource, path: document.path, container: document.container, rootKey: document.rootKey)
            located.document = document.document
            return located
        }
        let (roots, shape, required) = recordRoots
        let found = try locate(response, roots: roots, shape: shape, requiresRoot: required)
        return Located(main: found.value, path: found.path, container: found.container, rootKey: found.root)
    }

    /// The list of records in a response and the path of the list.
    func records(in response: APIResponse) throws -> Located<[JSONValue]> {
        if jsonAPI != nil { return try document(in: response, expecting: .many) }
        let found = try locate(response, roots: listKeys, shape: .array, requiresRoot: false)
        return Located(
            main: found.value.arrayValue ?? [], path: found.path, container: found.container, rootKey: found.root)
    }

    private func locate(
        _ response: APIResponse, roots: [String], shape: ResponseLocator.Shape, requiresRoot: Bool
    ) throws -> LocatedValue {
        try response.locate(
            with: locator, roots: roots, shape: shape, requiresRoot: requiresRoot,
            typeName: typeName)
    }

    /// Related records side-loaded beside the main ones (Objects' format), for models this one relates
    /// to and registered models; keys that name no such model are ignored.
    func sideloaded<Main>(_ located: Located<Main>, store: ResourceStore, keepsWire: Bool = false) throws
        -> [any RelatedPatch]
    {
        if let document = located.document {
            return try included(document.included, store: store, keepsWire: keepsWire)
        }
        guard let container = located.container else { return [] }
        let base = locator.basePath
        var patches: [any RelatedPatch] = []
        for (plural, loading) in sideLoads {
            guard plural != located.rootKey, let value = container[plural] else { continue }
            patches.append(
                try loading.decode(
                    value, "\(base).\(plural)",
                    EmbeddingContext(store: store, depth: 1, maxDepth: maxEmbeddingDepth, keepsWire: keepsWire)))
        }
        return patches
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
