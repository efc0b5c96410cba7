import Foundation
import MonoRailTransport

/// The identity map: at most one live instance per (model type, id), shared by every request that
/// goes through the store.
///
/// Every response is merged into the instance already in the store, and the caller gets that
/// instance back; the most recent server state wins for fields the app has not edited. The store
/// holds its instances weakly, so it never keeps a model alive.
///
/// Most apps use ``default``. Create more stores to keep separate worlds apart, for example two
/// signed-in accounts or two servers:
///
/// ```swift
/// let staging = ResourceStore(configuration: .init(apiRootURL: stagingURL))
/// let train = try await Train.get(id: 1, in: staging)
/// ```
public final class ResourceStore: Sendable {
    /// The store models use unless told otherwise; configured by ``MonoRail/register(apiRootURL:)``
    /// and ``MonoRail/configure(_:)``.
    public static let `default` = ResourceStore()

    struct Key: Hashable {
        /// An id with `1` and `"1"` made equal, so a changed id type is noticed, not duplicated.
        enum Normalized: Hashable {
            case int(Int64)
            case string(String)

            init(_ id: ResourceID) {
                switch id {
                case .int(let int): self = .int(int)
                case .string(let string):
                    if let int = Int64(string), String(int) == string {
                        self = .int(int)
                    } else {
                        self = .string(string)
                    }
                }
            }
        }

        let type: ObjectIdentifier
        let id: Normalized

        init(type: ObjectIdentifier, id: ResourceID) {
            self.type = type
            self.id = Normalized(id)
        }
    }

    struct Entry {
        weak var object: (any ResourceModel)?
        let id: ResourceID
    }

    struct State {
        var entries: [Key: Entry] = [:]
        /// Entries are swept of released instances when the table doubles past this size.
        var sweepThreshold = 64
        var configuration: MonoRail.Configuration
        /// Bumped by every ``configure(_:)``; what was worked out from an older configuration is stale.
        var generation = 0
        /// The client of the current configuration, made on first use.
        var client: APIClient?
        var setups: [ObjectIdentifier: (generation: Int, setup: any Sendable)] = [:]
        var broadcasters: [ObjectIdentifier: any Sendable] = [:]
    }

    let state: Locked<State>

    /// Creates a store.
    ///
    /// - Parameter configuration: The API and conventions its models talk to.
    public init(configuration: MonoRail.Configuration = MonoRail.Configuration()) {
        state = Locked(State(configuration: configuration))
    }

    /// The configuration models in this store use (before their own ``ResourceModel/configure(_:)``).
    public var configuration: MonoRail.Configuration {
        state.withLock { $0.configuration }
    }

    /// Changes the configuration; later requests use the new one.
    ///
    /// Concurrent changes all take effect: `change` runs outside the store's lock, and runs again
    /// on the newer configuration when another change landed in the meantime.
    public func configure(_ change: (inout MonoRail.Configuration) -> Void) {
        while true {
            var (configuration, generation) = state.withLock { ($0.configuration, $0.generation) }
            change(&configuration)
            let updated = configuration
            let applied = state.withLock { state in
                guard state.generation == generation else { return false }
                state.configuration = updated
                state.generation += 1
                state.setups = [:]
                state.client = nil
                return true
            }
            if applied { return }
        }
    }

    /// The ``APIClient`` of this store's configuration, shared by every model that does not
    /// change the client settings in its ``ResourceModel/configure(_:)``: one connection pool, one
    /// set of middleware, and de-duplication across models. Use it for endpoints that are not
    /// models:
    ///
    /// ```swift
    /// let status: ServerStatus = try await ResourceStore.default.client.get("/status")
    /// ```
    public var client: APIClient {
        state.withLock { state in Self.client(in: &state) }
    }

    private static func client(in state: inout State) -> APIClient {
        if let client = state.client { return client }
        let client = APIClient(configuration: state.configuration.resolvedClient)
        state.client = client
        return client
    }

    /// The number of live instances in the store.
    public var count: Int {
        state.withLock { state in state.entries.values.reduce(0) { $0 + ($1.object == nil ? 0 : 1) } }
    }

    /// The live instance of a model with an id, if any; makes no request.
    public func instance<Model: ResourceModel>(of type: Model.Type, id: some ResourceIDConvertible) -> Model? {
        let key = Key(type: ObjectIdentifier(type), id: id.resourceID)
        return state.withLock { $0.entries[key]?.object as? Model }
    }

    /// Every live instance of a model, in no particular order; makes no request.
    public func instances<Model: ResourceModel>(of type: Model.Type) -> [Model] {
        let identifier = ObjectIdentifier(type)
        return state.withLock { state in
            state.entries.compactMap { key, entry in key.type == identifier ? entry.object as? Model : nil }
        }
    }

    // MARK: - Merging

    /// Merges decoded records, creating instances for ids the store does not hold.
    ///
    /// Every check happens before anything changes, under one lock, so a failing response changes
    /// nothing and readers of the store never see half a response. Embedded and side-loaded records
    /// merge in the same step.
    ///
    /// - Parameters:
    ///   - patches: The records, in response order.
    ///   - sideloaded: Related records that came beside them.
    ///   - target: The instance a create, save or fetch answers for; it takes the record's id.
    ///   - mode: Whether the records answer a save.
    /// - Throws: ``APIError/Code/inconsistentResponse`` when an id changed type or `target` would
    ///   take an id a live instance already has.
    func merge<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], sideloaded: [any EmbeddedPatch] = [], target: Model? = nil,
        mode: ResourceRecord<Model>.MergeMode = .read, coder: FieldCoder
    ) throws -> [Model] {
        try mergeKeepingSideloads(patches, sideloaded: sideloaded, target: target, mode: mode, coder: coder).instances
    }

    /// ``merge(_:sideloaded:target:mode:coder:)``, also returning the side-loaded instances so the
    /// caller can hand them to the records that relate to them before they are released.
    func mergeKeepingSideloads<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], sideloaded: [any EmbeddedPatch], target: Model?,
        mode: ResourceRecord<Model>.MergeMode, coder: FieldCoder
    ) throws -> (instances: [Model], sideloaded: [any ResourceModel]) {
        // Strong references leave the lock only after it is released: releasing the last one inside
        // would run a model's deinit while the store is locked.
        var instances: [Model] = []
        var sideInstances: [any ResourceModel] = []
        var announcements: [() -> Void] = []
        try state.withLock { state in
            let found = try Self.check(patches, target: target, in: state)
            for side in sideloaded { try side.check(in: state) }
            if state.entries.count >= state.sweepThreshold {
                state.entries = state.entries.filter { $0.value.object != nil }
                state.sweepThreshold = max(64, state.entries.count * 2)
            }
            for side in sideloaded {
                sideInstances += side.apply(in: &state, store: self, coder: coder, announcements: &announcements)
            }
            instances = Self.apply(
                patches, found: found, target: target, mode: mode, store: self, state: &state, coder: coder,
                announcements: &announcements)
        }
        for announce in announcements { announce() }
        return (instances, sideInstances)
    }

    /// The checks of ``merge(_:sideloaded:target:mode:coder:)``, embedded records included.
    ///
    /// - Returns: The live instance for each patch, if any, so the merge need not look them up again.
    @discardableResult
    static func check<Model: ResourceModel>(_ patches: [RecordPatch<Model>], target: Model?, in state: State) throws
        -> [Model?]
    {
        let type = ObjectIdentifier(Model.self)
        var found: [Model?] = []
        found.reserveCapacity(patches.count)
        for patch in patches {
            for nested in patch.embedded { try nested.patch.check(in: state) }
            let id = patch.id
            let key = Key(type: type, id: id)
            guard let entry = state.entries[key], let object = entry.object as? Model else {
                found.append(nil)
                continue
            }
            found.append(object)
            if entry.id != id {
                throw APIError(
                    .inconsistentResponse,
                    "\(Model.resourceSchema.typeName) \(entry.id.debugText) came back as \(id.debugText): "
                        + "the id changed type")
            }
            if let target, object !== target {
                throw APIError(
                    .inconsistentResponse,
                    "another live \(Model.resourceSchema.typeName) already has id \(id.debugText)")
            }
        }
        return found
    }

    /// The changes of ``merge(_:sideloaded:target:mode:coder:)``, once every check passed.
    static func apply<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], found: [Model?] = [], target: Model?, mode: ResourceRecord<Model>.MergeMode,
        store: ResourceStore, state: inout State, coder: FieldCoder, announcements: inout [() -> Void]
    ) -> [Model] {
        let type = ObjectIdentifier(Model.self)
        let fields = Model.resourceSchema.fields
        let hasReferences = fields.contains { $0.isReference }
        let perTypeListening =
            (state.broadcasters[type] as? UpdateBroadcaster<ResourceUpdate<Model>>)?.hasSubscribers ?? false
        var instances: [Model] = []
        instances.reserveCapacity(patches.count)
        // A large list would otherwise grow the map several times while it is inserted.
        if patches.count > 16 { state.entries.reserveCapacity(state.entries.count + patches.count) }
        for position in patches.indices {
            let patch = patches[position]
            for nested in patch.embedded {
                let children = nested.patch.apply(in: &state, store: store, coder: coder, announcements: &announcements)
                fields[nested.index].embedded?.assign(&patch.values, children)
            }
            let id = patch.id
            let key = Key(type: type, id: id)
            let instance: Model
            let isNew: Bool
            if let existing = (position < found.count ? found[position] : nil)
                ?? state.entries[key]?.object as? Model
            {
                instance = existing
                isNew = false
            } else {
                instance = target ?? Model()
                isNew = true
                state.entries[key] = Entry(object: instance, id: id)
            }
            // An instance made here has no observers yet; only a per-model stream could be listening.
            let isUnobserved = isNew && target == nil && !perTypeListening
            let changed = instance._$record.apply(
                patch, mode: mode, store: store, coder: coder, fields: fields,
                comparesFields: !isUnobserved || hasReferences)
            instances.append(instance)
            if isUnobserved { continue }
            if !changed.isEmpty || isNew {
                let kind: ResourceUpdate<Model>.Kind = isNew && target != nil ? .created : .merged
                announcements.append {
                    if isNew { instance._$record.announceIdentity(of: instance) }
                    instance._$record.announce(kind, fields: changed, of: instance)
                }
            }
        }
        return instances
    }

    /// Forgets a deleted record.
    func remove<Model: ResourceModel>(_ instance: Model, id: ResourceID) {
        let key = Key(type: ObjectIdentifier(Model.self), id: id)
        state.withLock { state in
            if let entry = state.entries[key], entry.object === instance || entry.object == nil {
                state.entries[key] = nil
            }
        }
    }

    // MARK: - Per-model state

    func broadcaster<Model: ResourceModel>(for type: Model.Type) -> UpdateBroadcaster<ResourceUpdate<Model>> {
        state.withLock { state in
            if let existing = state.broadcasters[ObjectIdentifier(type)] as? UpdateBroadcaster<ResourceUpdate<Model>> {
                return existing
            }
            let created = UpdateBroadcaster<ResourceUpdate<Model>>()
            state.broadcasters[ObjectIdentifier(type)] = created
            return created
        }
    }

    func setup<Model: ResourceModel>(for type: Model.Type) -> ModelSetup<Model> {
        let (generation, cached, configuration, client) = state.withLock { state in
            let entry = state.setups[ObjectIdentifier(type)]
            let cached = entry?.generation == state.generation ? entry?.setup as? ModelSetup<Model> : nil
            return (state.generation, cached, state.configuration, cached == nil ? Self.client(in: &state) : nil)
        }
        if let cached { return cached }
        // Made outside the lock: it runs the model's `configure(_:)`.
        let setup = ModelSetup<Model>(configuration: configuration, storeClient: client ?? self.client)
        state.withLock { state in
            if state.generation == generation {
                state.setups[ObjectIdentifier(type)] = (generation, setup)
            }
        }
        return setup
    }
}

extension ResourceID {
    var debugText: String {
        switch self {
        case .int(let int): String(int)
        case .string(let string): "\"\(string)\""
        }
    }
}
