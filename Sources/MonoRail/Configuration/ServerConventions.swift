public import HTTPTypes

/// How a family of servers shapes its endpoints and bodies. Pick a preset and adjust what differs.
///
/// ```swift
/// MonoRail.configure {
///     $0.apiRootURL = URL(string: "http://127.0.0.1:8000/api")!
///     $0.conventions = .djangoREST
///     $0.conventions.updateMethod = .patch
/// }
/// ```
public struct ServerConventions: Sendable {
    /// Where records sit in response bodies.
    public enum ResponseRoot: Sendable, Hashable {
        /// The model's singular or plural name (`{"train": …}`, `{"trains": […]}`); a body without
        /// that key is read bare.
        case modelName
        /// Fixed keys for every model (Objects: `{"object": …}`, `{"objects": […]}`).
        case fixed(single: String, list: String)
        /// Bare records and arrays; a paginated list's records are also found under one of
        /// ``ServerConventions/listKeys``: `results` (DRF) or `items` (fastapi-pagination).
        case bare
    }

    /// The routes of each action.
    public var routes: ResourceRoutes
    /// The method `save()` uses for records that exist: `.put` (default) or `.patch`.
    public var updateMethod: HTTPRequest.Method
    /// Whether updates send only the changed fields. Default: `false`, every field is sent.
    public var sendsOnlyChanges: Bool
    /// Whether bodies sent are wrapped in the singular root, `{"train": {…}}`.
    public var wrapsRequestBody: Bool
    /// Where records sit in responses.
    public var responseRoot: ResponseRoot
    /// A namespace path wrapping every response, such as `"data"` or `"a.b.c"`.
    public var rootNamespace: String?
    /// Where a bare list's records sit when the body is an object around them (``ResponseRoot/bare``),
    /// tried in order: DRF's `results` and fastapi-pagination's `items` by default; an API answering
    /// `{"data": [...], "meta": {...}}` adds `"data"`.
    public var listKeys: [String] = ["results", "items"]
    /// The key of the value that orders a record's states, the server's version of it: newer
    /// wins whatever order two states arrive in (a push, a read that raced it, the answer to a
    /// save), so a record never goes back to an older state. Integers compare as numbers,
    /// timestamps as times. Default `"updated_at"` (written by Rails, and by most Django and
    /// FastAPI models); `"lock_version"` for Rails' optimistic locking; `nil` for none, when the
    /// order requests were sent in decides.
    public var versionKey: String? = "updated_at"
    /// Statuses whose bodies are validation errors.
    public var validationStatuses: Set<Int>
    /// The query parameter that carries a search term when the search route has no `:term`.
    public var searchParameter: String
    /// The key a `@References(.many)` field's ids travel under when it names none. Default
    /// ``ReferenceIDsKey/singularIDs`` (Rails' `depot_ids`); ``ReferenceIDsKey/name`` is the MonoRail
    /// seed's `related_models` and Objects' `"depots": [ids]`.
    public var referenceIDsKey: ReferenceIDsKey = .singularIDs

    /// Where a `@References(.many)` field's ids travel, for `@References(.many) var depots: [Depot]`.
    public enum ReferenceIDsKey: Sendable, Hashable {
        /// `depot_ids`: the singular of the field's name with `_ids`, as Rails' `has_many` writes it.
        case singularIDs
        /// `depots`: the field's name, as the MonoRail seed (`related_models`) and Objects send it.
        case name
    }
    /// The format request and response bodies use, when the server family has one: Objects speaks
    /// MessagePack both ways. `nil` (the default) leaves it to the configuration's
    /// ``MonoRail/Configuration/format``, which also wins over this one when the app sets it.
    public var format: WireFormat?
    /// Whether a save carries the record's id in its body, under the model's
    /// ``ResourceModel/primaryKey``, as Objects' push does (`POST /train/` with `{"id": 1, …}`); a
    /// delete whose route has no `:id` then sends it in its body too. Default `false`: the id is
    /// in the path.
    public var sendsIDInBody: Bool = false
    /// Whether records of one model wanted together (a `@References(.many)` load, concurrent
    /// `get(id:)` calls) are fetched in one request listing their ids. Default `nil`: one request
    /// per record, which every server understands.
    public var coalescedLoads: CoalescedLoads?
    /// The query parameter that asks for related records to be side-loaded: `include`, as in
    /// `GET /trains/1?include=cars,conductor` (JSON:API and most Rails serializers).
    public var includeParameter: String = "include"
    /// How a live query's `IN` and range conditions travel. Default ``FilterStyle/brackets``.
    public var filterStyle: FilterStyle = .brackets
    /// The query parameter that carries a live query's order, as keys separated by commas with `-`
    /// before a descending one (`order=-max_speed,company`); `nil` for a server that cannot sort,
    /// whose lists a query then sorts itself (pages then follow the server's order). Default
    /// `"order"`; DRF's `OrderingFilter` reads `"ordering"`.
    public var orderParameter: String? = "order"
    /// How lists are paged. Default ``Paging/rails``.
    public var paging: Paging = .rails
    /// How records sit in bodies, both ways: plain records (default), or JSON:API documents.
    public var bodyStyle: BodyStyle = .records
    /// The media type sent as `Content-Type` and asked for in `Accept` when bodies are JSON, in place
    /// of `application/json`: `application/vnd.api+json` for JSON:API. `nil` (the default) for
    /// `application/json`. An `Accept` in the configuration's default headers wins.
    public var mediaType: String?
    /// The `type` of a model's resource objects in JSON:API documents sent before the server named
    /// it; once a response names the type, what it named is sent. Default ``ResourceType/plural``.
    public var resourceType: ResourceType = .plural

    /// Where a JSON:API server's Atomic Operations extension is: the outbox sends a graph made
    /// offline — a record created with the writes that name it — there in one request, all or
    /// nothing. Default ``AtomicOperations/never``; the ``jsonAPI`` preset's is
    /// `.whenAdvertised(path: "/operations")`.
    public var atomicOperations: AtomicOperations = .never

    /// Whether, and where, the outbox sends writes together as JSON:API atomic operations.
    public enum AtomicOperations: Sendable, Hashable {
        /// Each write on its own.
        case never
        /// At `path`, once a document the server answered with names the extension
        /// (`"jsonapi": {"ext": ["https://jsonapi.org/ext/atomic"]}`).
        case whenAdvertised(path: String)
        /// At `path`, without waiting to be told.
        case always(path: String)

        /// Where graphs go once formed; `nil` for ``never``.
        var path: String? {
            switch self {
            case .never: nil
            case .whenAdvertised(let path), .always(let path): path
            }
        }
    }

    /// How records sit in request and response bodies.
    public enum BodyStyle: Sendable, Hashable {
        /// Records as objects of their fields, placed by ``ServerConventions/responseRoot``.
        case records
        /// JSON:API 1.1 documents: resource objects with `type`, `id`, `attributes` and
        /// `relationships` under `data`, related records in `included`.
        case jsonAPI
    }

    /// What a model's JSON:API `type` is called: reading accepts any of these spellings, in any case,
    /// with or without dashes and underscores (`trains`, `Train`, `train-cars`); this says which one
    /// a write sends before the server has named it.
    public enum ResourceType: Sendable {
        /// The plural name, `trains` (`@Resource(plural:)`): what the JSON:API specification's
        /// examples and Ember send.
        case plural
        /// The singular name, `train`.
        case singular
        /// The Swift class name, `Train`: djangorestframework-jsonapi's type when neither
        /// `JSONAPIMeta.resource_name` nor `JSON_API_PLURALIZE_TYPES` says otherwise.
        case typeName
        /// A name of your own for each model, from its Swift class name.
        case custom(@Sendable (_ typeName: String) -> String)
    }

    /// Creates conventions; the defaults are Rails'.
    public init(
        routes: ResourceRoutes = .rails,
        updateMethod: HTTPRequest.Method = .put,
        sendsOnlyChanges: Bool = false,
        wrapsRequestBody: Bool = true,
        responseRoot: ResponseRoot = .modelName,
        rootNamespace: String? = nil,
        validationStatuses: Set<Int> = [422],
        searchParameter: String = "q"
    ) {
        self.routes = routes
        self.updateMethod = updateMethod
        self.sendsOnlyChanges = sendsOnlyChanges
        self.wrapsRequestBody = wrapsRequestBody
        self.responseRoot = responseRoot
        self.rootNamespace = rootNamespace
        self.validationStatuses = validationStatuses
        self.searchParameter = searchParameter
    }

    /// Rails: `/trains/1`, bodies wrapped in `{"train": {…}}`, `PUT` updates, 422 validation errors.
    public static let rails = ServerConventions()

    /// Django REST framework: trailing slashes, bare bodies, 400 validation errors in
    /// `{field: [message]}`, `?search=` for searches (DRF's `SearchFilter`), `?ordering=` for order
    /// (`OrderingFilter`), django-filter lookups (`max_speed__gte`), and `page`/`page_size` pages in
    /// the `{"count", "next", "results"}` envelope.
    public static let djangoREST: ServerConventions = {
        var django = ServerConventions(
            routes: .djangoREST, wrapsRequestBody: false, responseRoot: .bare, validationStatuses: [400, 422],
            searchParameter: "search")
        django.filterStyle = .lookups
        django.orderParameter = "ordering"
        django.paging = .djangoREST
        return django
    }()

    /// FastAPI, and the "bare JSON" services written like it (Express, NestJS, Spring, Go): bare
    /// bodies both ways, paths without trailing slashes (`/books/1`), updates as `PATCH` with only
    /// the changed fields, `limit`/`offset` pages with the total in `X-Total-Count` or a
    /// fastapi-pagination envelope (``Paging/fastAPI``), 422 validation errors in FastAPI's
    /// `{"detail": [{"loc", "msg"}]}` (read under every preset), and filters as `field=value`, with
    /// `IN` and ranges as fastapi-filter's lookups (`year__gte=1900`).
    ///
    /// FastAPI has no ordering convention, so a query sorts its records itself
    /// (``orderParameter`` is `nil`); set it to the parameter your API reads. For an API that
    /// replaces records with `PUT`, set ``updateMethod`` to `.put` and ``sendsOnlyChanges`` to `false`.
    public static let fastAPI: ServerConventions = {
        var fastAPI = ServerConventions(
            updateMethod: .patch, sendsOnlyChanges: true, wrapsRequestBody: false, responseRoot: .bare)
        fastAPI.filterStyle = .lookups
        fastAPI.orderParameter = nil
        fastAPI.paging = .fastAPI
        return fastAPI
    }()

    /// Objects: MessagePack both ways; singular paths; a push (`POST /train/`) creates a record
    /// without an id and updates one whose id travels in the body; `{"object": …}` and
    /// `{"objects": […]}` roots with dependencies side-loaded beside them; dependencies sent as
    /// `"<plural>": [ids]`.
    ///
    /// A delete goes where the seed lists it, `DELETE /train/`, with the id in the body,
    /// `{"id": 1}`; for a server that takes it in the path (`DELETE /train/1`), set
    /// `routes.destroy = "/:singular/:id"`.
    public static let objects: ServerConventions = {
        var objects = ServerConventions(
            routes: .objects, updateMethod: .post, wrapsRequestBody: false,
            responseRoot: .fixed(single: "object", list: "objects"))
        objects.referenceIDsKey = .name
        objects.format = .messagePack
        objects.sendsIDInBody = true
        return objects
    }()

    /// JSON:API 1.1: documents both ways as `application/vnd.api+json`, routes without trailing
    /// slashes (`/articles/1`), ids as strings, `included` records merged, saves as `PATCH` with only
    /// the changed attributes and relationships, filters as `filter[key]=value`
    /// (`filter[year.gte]=1900` for ranges), `sort=-year,title`, `page[number]`/`page[size]` pages
    /// followed by `links.next`, the total from `meta`, and error objects with `source.pointer`
    /// as per-field validation errors whatever their status.
    ///
    /// Member names follow the configuration's ``/MonoRailClient/CodingOptions/keyMapping``
    /// (snake_case by default, as djangorestframework-jsonapi and jsonapi-serializer send them);
    /// for a server that camelCases them, as the specification recommends, set it to `.identity`.
    ///
    /// ```swift
    /// MonoRail.configure { $0.conventions = .jsonAPI }
    /// ```
    public static let jsonAPI: ServerConventions = {
        var jsonAPI = ServerConventions(
            updateMethod: .patch, sendsOnlyChanges: true, wrapsRequestBody: false, responseRoot: .bare,
            validationStatuses: [400, 403, 409, 422])
        jsonAPI.bodyStyle = .jsonAPI
        jsonAPI.mediaType = JSONAPIDocument.mediaType
        jsonAPI.filterStyle = .jsonAPI
        jsonAPI.orderParameter = "sort"
        jsonAPI.searchParameter = "filter[search]"
        jsonAPI.paging = .jsonAPI
        jsonAPI.atomicOperations = .whenAdvertised(path: "/operations")
        return jsonAPI
    }()
}
