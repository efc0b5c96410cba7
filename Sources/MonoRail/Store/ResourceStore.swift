import Atomics
import Foundation
import Logging
import MonoRailTransport
public import Observation

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
public final class ResourceStore: Observable, Sendable {
    /// The store models use unless told otherwise; configured by ``MonoRail/register(apiRootURL:)``
    /// and ``MonoRail/configure(_:)``.
    public static let `default` = ResourceStore()

    /// What the store's models are configured with, and what was worked out from it.
    struct Settings {
        var configuration: MonoRail.Configuration
        /// Bumped by every ``configure(_:)``; what was worked out from an older configuration is stale.
        var generation = 0
        /// The client of the current configuration, made on first use.
        var client: APIClient?
        /// Each a `ModelSetup` of the model it is keyed by; held as a class, since every action casts
        /// its own back, and a class cast is a compare where a cast from `any Sendable` is a search.
        var setups: [ObjectIdentifier: (generation: Int, setup: any AnyObject & Sendable)] = [:]
    }

    // Each job has its own lock, so reading the configuration never waits for a large merge.
    /// (model, id) → the live instance; merges hold this lock from their first check to their last change.
    let identityMap = Locked(IdentityMap())
    /// Between one account and the next: answers asked for before ``clear()`` are dropped.
    let signOutFence = SignOutFence()
    /// Whether an answer of the server was merged: a first live-updates stream, which starts from
    /// now, then reads again what was read before it.
    let hasMergedAnswers = ManagedAtomic(false)
    /// The order of the newest stamp merged. An answer stamped before it was overtaken by something
    /// the store heard since, perhaps of its records, in instances that may be gone by now; the
    /// record cache kept what they heard. Raised under the identity map's lock, read without it.
    let newestMerged = ManagedAtomic(Int64.min)
    let settings: Locked<Settings>
    let broadcasters = Broadcasters()
    let relationshipIndex = RelationshipIndex()
    let relationshipObservers = RelationshipObservers()
    let loadBatcher = LoadBatcher()
    let announcer: Announcer
    /// Instances kept alive by ``pin(_:)``.
    let pinned = Locked<[IdentityMap.Key: any ResourceModel]>([:])
    private let madeOutbox = Locked<Outbox?>(nil)
    private let madeLiveUpdates = Locked<LiveUpdates?>(nil)
    /// Every model an action of this store used, for pushed records that name one.
    private let usedModels = Locked<[ObjectIdentifier: any ResourceModel.Type]>([:])
    /// The one-time notices given, by what they are about.
    let notices = Locked<Set<String>>([])
    /// The JSON:API extensions the server's documents said it serves (`jsonapi.ext`).
    let advertisedExtensions = Locked<Set<String>>([])
    private let offline = Locked(false)
    private let registrar = ObservationRegistrar()

    /// Whether the server could not be reached the last time the store asked: a request got no
    /// answer at all (it could not connect, timed out or lost its connection), or a
    /// ``CachePolicy/networkFirst`` read answered from the cache at its
    /// ``MonoRail/Configuration/offlineDeadline``. Any answer of the server, whatever its status,
    /// makes it `false` again. Observable, for an "offline" banner:
    ///
    /// ```swift
    /// if ResourceStore.default.isOffline { OfflineBanner() }
    /// ```
    public var isOffline: Bool {
        registrar.access(self, keyPath: \.isOffline)
        return offline.withLock { $0 }
    }

    /// Notes whether a request was answered; observers of ``isOffline`` are told when that changes it.
    func noteReachability(answered: Bool) {
        let changed = offline.withLock { isOffline in
            defer { isOffline = !answered }
            return isOffline == answered
        }
        guard changed else { return }
        announcer.announce { [registrar] in
            registrar.willSet(self, keyPath: \.isOffline)
            registrar.didSet(self, keyPath: \.isOffline)
        }
    }

    /// The writes this store keeps until the server confirms them; see ``WritePolicy``.
    ///
    /// ```swift
    /// ResourceStore.default.outbox.pendingCount              // Int
    /// try await ResourceStore.default.outbox.flush()         // send what is kept, in order, exactly once
    /// ```
    public var outbox: Outbox {
        let (outbox, isNew) = madeOutbox.withLock { outbox in
            if let outbox { return (outbox, false) }
            let made = Outbox(store: self)
            outbox = made
            return (made, true)
        }
        // Outside the outbox's lock: reading the configuration takes the settings lock.
        if isNew { configuration.authentication?.addObserver(outbox) }
        return outbox
    }

    /// The connection to the server's change stream (``MonoRail/Configuration/liveUpdates``): what
    /// other clients change arrives in this store's instances, lists and caches as it happens.
    ///
    /// ```swift
    /// try await ResourceStore.default.liveUpdates.connect()
    /// ```
    public var liveUpdates: LiveUpdates {
        madeLiveUpdates.withLock { made in
            if let made { return made }
            let live = LiveUpdates(store: self)
            made = live
            return live
        }
    }

    /// The live updates, when something asked for them.
    var liveUpdatesIfMade: LiveUpdates? { madeLiveUpdates.withLock { $0 } }

    /// Whether no model is registered and none was used yet: a pushed record can name none.
    var knowsNoModel: Bool {
        configuration.models.models.isEmpty && usedModels.withLock { $0.isEmpty }
    }

    /// The model a pushed record names — a type name, a singular or a plural name — among the
    /// registered models and those this store used.
    func knownModel(named name: String) -> (any ResourceModel.Type)? {
        let registry = configuration.models
        if let registered = registry.model(named: name) ?? registry.model(plural: name) { return registered }
        return usedModels.withLock { used in
            used.values.first { $0.resourceName == name || $0.resourcePlural == name || $0.polymorphicName == name }
        }
    }

    /// The model a JSON:API `type` names, among the registered models and those used so far.
    func knownModel(jsonAPIType type: String) -> (any ResourceModel.Type)? {
        if let registered = configuration.models.model(jsonAPIType: type) { return registered }
        let normalized = JSONAPIDocument.normalized(type)
        return usedModels.withLock { used in used.values.first { $0.jsonAPITypes.contains(normalized) } }
    }

    /// Logs a notice the first time this store meets what `subject` names; later calls say nothing.
    func noticeOnce(_ subject: String, _ message: @autoclosure () -> Logger.Message) {
        guard notices.withLock({ $0.insert(subject).inserted }) else { return }
        configuration.logger.notice(message())
    }

    /// The outbox, if any action made it.
    var outboxIfMade: Outbox? { madeOutbox.withLock { $0 } }

    /// Creates a store.
    ///
    /// - Parameter configuration: The API and conventions its models talk to.
    public init(configuration: MonoRail.Configuration = MonoRail.Configuration()) {
        settings = Locked(Settings(configuration: configuration))
        announcer = Announcer(configuration.delivery)
        // Before any stamp, a pushed change's included: this launch's come after the file's.
        if let storage = configuration.storage { FetchStamp.raise(above: storage.highestOrder) }
        Self.diagnose(configuration)
    }

    /// Says at once what the first action would throw for: a queued write policy with storage that
    /// cannot keep writes.
    private static func diagnose(_ configuration: MonoRail.Configuration) {
        if let problem = configuration.queuedWritesProblem(for: configuration.writePolicy) {
            configuration.logger.error("\(problem)")
        }
        for name in configuration.models.ambiguousNames {
            configuration.logger.error(
                "two registered models are named \"\(name)\": a record or reference naming it is refused; give one a name of its own (@Resource(name:), static var polymorphicName)"
            )
        }
    }

    /// Creates a store that keeps its records in `storage`, such as a `SQLiteStorage` file that
    /// survives restarts.
    ///
    /// ```swift
    /// let store = ResourceStore(configuration: configuration, storage: try SQLiteStorage(path: path))
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: The API and conventions its models talk to; its ``MonoRail/Configuration/storage``
    ///     is replaced.
    ///   - storage: Where records are kept.
    public convenience init(configuration: MonoRail.Configuration = MonoRail.Configuration(), storage: any RecordCache)
    {
        var configuration = configuration
        configuration.storage = storage
        self.init(configuration: configuration)
    }

    /// The live instance of a created record other than `target`, taken out of the identity map so
    /// that `target` enters in its place, when it came since `since`: the record ahead of its
    /// create's answer. Throws when it came before: the answer names another record.
    private static func giveWay<Model: ResourceModel>(
        to target: Model, of patches: [RecordPatch<Model>], since: Int64, in map: inout IdentityMap
    ) throws -> Model? {
        guard patches.count == 1, let id = patches.first?.id else { return nil }
        let key = IdentityMap.Key(type: ObjectIdentifier(Model.self), id: id)
        guard let live = map.lookup(key)?.object as? Model, live !== target else { return nil }
        let born = live._$state.state.withLock { $0.born } ?? .max
        guard born >= since else {
            throw APIError(
                .inconsistentResponse,
                "the server answered a create of a \(Model.resourceSchema.typeName) with \(id.debugText), a record "
                    + "this store held before the create was sent (a server that upserts?); the answer was not merged")
        }
        map.remove(key, ifHolding: live)
        return live
    }

    /// Dates a create's answer before anything the store heard of its record another way: the answer
    /// describes the record as the create made it, whenever it arrives (a resend's is the server's
    /// replay of the first attempt's), and a read or a push of the record, even one sent before the
    /// answer's request, saw it made. Stamped so, the answer overwrites none of what came since, in
    /// an instance or in the record cache.
    ///
    /// - Returns: The live instance looked at, for the caller to release once the map is unlocked.
    private static func datedAsMade<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], target: Model?, fetched: FetchStamp, in map: inout IdentityMap
    ) -> Model? {
        guard patches.count == 1, let patch = patches.first, let id = patch.id,
            let live = map.lookup(IdentityMap.Key(type: ObjectIdentifier(Model.self), id: id))?.object as? Model,
            live !== target
        else { return nil }
        if let born = live._$state.state.withLock({ $0.born }), born > Int64.min {
            patch.fetched = FetchStamp(order: min(fetched.order, born - 1), date: fetched.date)
        }
        return live
    }

    /// The records of an answer but those the store heard deleted after the answer was asked for:
    /// the answer is older than the deletion, and does not bring them back.
    private static func droppingGone<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], fetched: FetchStamp, in map: IdentityMap
    ) -> [RecordPatch<Model>] {
        let type = ObjectIdentifier(Model.self)
        var anyGone = false
        for patch in patches {
            guard let id = patch.id,
                map.wasDeleted(IdentityMap.Key(type: type, id: id), after: (patch.fetched ?? fetched).order)
            else { continue }
            patch.isGone = true
            anyGone = true
        }
        return anyGone ? patches.filter { !$0.isGone } : patches
    }

    /// The id of the record a create's answer names, when the store heard it deleted since the create
    /// was kept (`since`; `nil` for a create an earlier launch kept, before every deletion heard in
    /// this one): the answer, the record as the create made it, is older than the deletion. Its
    /// record is not kept; the app's instance takes the id, and reads as deleted.
    private static func goneSince<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], _ since: Int64?, in map: IdentityMap
    ) -> ResourceID? {
        guard patches.count == 1, let patch = patches.first, let id = patch.id,
            let deleted = map.deletions[IdentityMap.Key(type: ObjectIdentifier(Model.self), id: id)],
            deleted >= since ?? .min
        else { return nil }
        patch.isGone = true
        return id
    }

    /// An instance that stood for a record until the app's own took its place: marked deleted for
    /// whoever holds it, and its observers, live queries and relationships told.
    private func retire<Model: ResourceModel>(_ duplicate: Model) {
        duplicate._$state.state.withLock { state in
            state.isDeleted = true
            state.isRetired = true
        }
        noteRelationships(of: duplicate, kind: .deleted, fields: [])
        duplicate._$state.announce(.deleted, fields: [], of: duplicate)
    }

    /// The error of an answer that came after ``clear()`` to a request sent before it.
    static let fencedOut = APIError(
        .cancelled, "the store was cleared (sign-out) while the request was under way; its answer was dropped")

    /// The stamp of a request sent now: after every one before it, at the configured wall clock's time.
    func stamp() -> FetchStamp {
        FetchStamp.next(date: now())
    }

    /// The wall clock's time, read without copying the whole configuration out of its lock.
    func now() -> Date {
        settings.withLock { $0.configuration.wallClock }()
    }

    /// The configuration models in this store use (before their own ``ResourceModel/configure(_:)``).
    public var configuration: MonoRail.Configuration {
        settings.withLock { $0.configuration }
    }

    /// Changes the configuration; later requests use the new one.
    ///
    /// Concurrent changes all take effect: `change` runs outside the store's lock, and runs again
    /// on the newer configuration when another change landed in the meantime.
    public func configure(_ change: (inout MonoRail.Configuration) -> Void) {
        while true {
            var (configuration, generation) = settings.withLock { ($0.configuration, $0.generation) }
            change(&configuration)
            let updated = configuration
            let applied = settings.withLock { state in
                guard state.generation == generation else { return false }
                state.configuration = updated
                // Under the lock, so two changes leave the announcer as the later one says.
                announcer.set(updated.delivery)
                state.generation += 1
                state.setups = [:]
                state.client = nil
                return true
            }
            if applied {
                if let storage = updated.storage { FetchStamp.raise(above: storage.highestOrder) }
                Self.diagnose(updated)
                if let outbox = outboxIfMade { updated.authentication?.addObserver(outbox) }
                return
            }
        }
    }

    /// The ``/MonoRailClient/APIClient`` of this store's configuration, shared by every model that does not
    /// change the client settings in its ``ResourceModel/configure(_:)``: one connection pool, one
    /// set of middleware, and de-duplication across models. Use it for endpoints that are not
    /// models:
    ///
    /// ```swift
    /// let status: ServerStatus = try await ResourceStore.default.client.get("/status")
    /// ```
    public var client: APIClient {
        settings.withLock { state in Self.client(in: &state) }
    }

    private static func client(in state: inout Settings) -> APIClient {
        if let client = state.client { return client }
        let client = APIClient(configuration: state.configuration.resolvedClient)
        state.client = client
        return client
    }

    /// The number of live instances in the store.
    public var count: Int {
        identityMap.withLock { $0.count }
    }

    /// The live instance of a model with an id, if any; makes no request.
    public func instance<Model: ResourceModel>(of type: Model.Type, id: some ResourceIDConvertible) -> Model? {
        identityMap.withLock { $0.instance(of: type, id: id.resourceID) }
    }

    /// The live instances of `ids`, of the model `type` identifies, in one look-up of the identity
    /// map: a `@References` field's related records for every owner of a merge. Not generic over the
    /// model, as code that is looks type metadata up for every owner.
    func liveInstances(of type: ObjectIdentifier, ids: [ResourceID?]) -> [(any ResourceModel)?] {
        identityMap.withLock { map in
            var live: [(any ResourceModel)?] = []
            live.reserveCapacity(ids.count)
            for id in ids { live.append(id.flatMap { map.object(under: IdentityMap.Key(type: type, id: $0)) }) }
            return live
        }
    }

    /// ``liveInstances(of:ids:)`` for a `@References(.many)` field: each owner's list of ids, those
    /// not live left out.
    func liveInstances(of type: ObjectIdentifier, lists: [[ResourceID]]) -> [[any ResourceModel]] {
        identityMap.withLock { map in
            var live: [[any ResourceModel]] = []
            live.reserveCapacity(lists.count)
            for ids in lists {
                var found: [any ResourceModel] = []
                found.reserveCapacity(ids.count)
                for id in ids {
                    if let object = map.object(under: IdentityMap.Key(type: type, id: id)) { found.append(object) }
                }
                live.append(found)
            }
            return live
        }
    }

    /// The live instance under `key`, the id it was stored under and the map's ``IdentityMap/removals``:
    /// ``instance(of:id:)`` for a reader of records, in code not generic over the model, which
    /// would look type metadata up at each call.
    func liveInstance(_ key: IdentityMap.Key) -> (object: any ResourceModel, id: ResourceID, removals: Int)? {
        identityMap.withLock { map in
            guard let entry = map.lookup(key), let object = entry.object else { return nil }
            return (object, entry.id, map.removals)
        }
    }

    /// Every live instance of a model, in no particular order; makes no request.
    public func instances<Model: ResourceModel>(of type: Model.Type) -> [Model] {
        identityMap.withLock { $0.instances(of: type) }
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
    /// - Throws: ``/MonoRailClient/APIError/Code/inconsistentResponse`` when an id changed type or `target` would
    ///   take an id a live instance already has.
    ///   - fetched: When the request that fetched the records was sent; a record read back from a
    ///     cache carries its own.
    func merge<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], sideloaded: [any RelatedPatch] = [], target: Model? = nil,
        mode: InstanceState<Model>.MergeMode = .read, coder: FieldCoder, fetched: FetchStamp
    ) throws -> [Model] {
        try mergeKeepingSideloads(
            patches, sideloaded: sideloaded, target: target, mode: mode, coder: coder, fetched: fetched
        ).instances
    }

    /// ``merge(_:sideloaded:target:mode:coder:fetched:)``, also returning the side-loaded
    /// instances so the caller can hand them to the records that relate to them before they are
    /// released.
    ///
    /// - Parameter adoptingSince: For the answer to a create into `target`: a live instance of the
    ///   record that came to the store at or after this order (a pushed `created`, a read, ahead of
    ///   the answer) gives its place to `target` and is retired — marked deleted, its observers told —
    ///   so that one instance stands for the record, and its server state, where newer than the
    ///   answer, goes with the place; one that was there before is another record, and the answer
    ///   is refused.
    /// - Parameter answersCreate: Whether the one record is a create's answer, which describes it as
    ///   the create made it (``datedAsMade(_:target:fetched:in:)``).
    func mergeKeepingSideloads<Model: ResourceModel>(
        _ patches: [RecordPatch<Model>], sideloaded: [any RelatedPatch], target: Model?,
        mode: InstanceState<Model>.MergeMode, coder: FieldCoder, fetched: FetchStamp, adoptingSince: Int64? = nil,
        answersCreate: Bool = false
    ) throws -> (instances: [Model], sideloaded: [any ResourceModel]) {
        // Strong references leave the lock only after it is released: releasing the last one inside
        // would run a model's deinit while the store is locked.
        var instances: [Model] = []
        var sideInstances: [any ResourceModel] = []
        var announcements: [() -> Void] = []
        var retired: Model?
        var heardOf: Model?
        var targetGone: (instance: Model, id: ResourceID)?
        defer {
            if let retired { retire(retired) }
            if let targetGone { noteDeletedOnServer(targetGone.instance, id: targetGone.id) }
            withExtendedLifetime(heardOf) {}
        }
        try identityMap.withLock { map in
            // Asked for by the account that signed out: nothing of it is merged.
            guard fetched.order > map.fence else { throw Self.fencedOut }
            // Merges are serialized by the lock: a load and a store raise it.
            if fetched.order > newestMerged.load(ordering: .relaxed) {
                newestMerged.store(fetched.order, ordering: .relaxed)
            }
            var patches = patches
            var goneID: ResourceID?
            if !map.deletions.isEmpty {
                if target == nil {
                    patches = Self.droppingGone(patches, fetched: fetched, in: map)
                } else if answersCreate {
                    goneID = Self.goneSince(patches, adoptingSince, in: map)
                } else if case .read = mode, let id = patches.first?.id {
                    // A fetch answered after its record's deletion was heard: nothing of it merges
                    // (the target would enter the identity map again), and the target reads as deleted.
                    let kept = Self.droppingGone(patches, fetched: fetched, in: map)
                    if kept.count < patches.count { (patches, goneID) = (kept, id) }
                }
            }
            if answersCreate { heardOf = Self.datedAsMade(patches, target: target, fetched: fetched, in: &map) }
            if let since = adoptingSince, let target {
                retired = try Self.giveWay(to: target, of: patches, since: since, in: &map)
            }
            let found = try Merger.check(patches, target: target, mode: mode, in: &map)
            for side in sideloaded { try side.check(in: &map) }
            map.sweepIfGrown()
            for side in sideloaded {
                sideInstances += side.apply(
                    in: &map, store: self, coder: coder, fetched: fetched, announcements: &announcements)
            }
            instances = Merger.apply(
                patches, found: found, target: target, mode: mode, store: self, map: &map, coder: coder,
                fetched: fetched, announcements: &announcements)
            // The answer describes the record as the create made it; the duplicate may have heard of
            // it since (a save of it answered first, a push). Its state goes with the place where it
            // is the newer.
            if let retired, let target,
                let held = retired._$state.serverPatch(fieldCount: Model.resourceSchema.fields.count)
            {
                _ = Merger.apply(
                    [held], target: target, mode: .read, store: self, map: &map, coder: coder, fetched: fetched,
                    announcements: &announcements)
            }
            if let goneID, let target { targetGone = (target, goneID) }
            if !announcements.isEmpty { relationshipIndex.mergeWillNote() }
        }
        guard !announcements.isEmpty else { return (instances, sideInstances) }
        defer { relationshipIndex.mergeNoted() }
        if broadcasters.hasLiveQueries {
            QueryBatch.collecting { for announce in announcements { announce() } }
        } else {
            for announce in announcements { announce() }
        }
        return (instances, sideInstances)
    }

    /// Forgets a deleted record.
    func remove<Model: ResourceModel>(_ instance: Model, id: ResourceID) {
        let key = IdentityMap.Key(type: ObjectIdentifier(Model.self), id: id)
        identityMap.withLock { $0.remove(key, ifHolding: instance) }
    }

    // MARK: - Per-model state

    func broadcaster<Model: ResourceModel>(for type: Model.Type) -> UpdateBroadcaster<ResourceUpdate<Model>> {
        broadcasters.broadcaster(for: type)
    }

    func setup<Model: ResourceModel>(for type: Model.Type) -> ModelSetup<Model> {
        // Every action asks, so a hit copies nothing out of the lock.
        let lookup = settings.withLock { state -> SetupLookup<Model> in
            if let entry = state.setups[ObjectIdentifier(type)], entry.generation == state.generation,
                let cached = entry.setup as? ModelSetup<Model>
            {
                return .cached(cached)
            }
            return .missing(generation: state.generation, state.configuration, Self.client(in: &state))
        }
        switch lookup {
        case .cached(let setup):
            return setup
        case .missing(let generation, let configuration, let client):
            // Made outside the lock: it runs the model's `configure(_:)`.
            let setup = ModelSetup<Model>(
                configuration: configuration, storeClient: client, advertisedExtensions: advertisedExtensions)
            let isFirstUse = usedModels.withLock { $0.updateValue(type, forKey: ObjectIdentifier(type)) == nil }
            settings.withLock { state in
                if state.generation == generation {
                    state.setups[ObjectIdentifier(type)] = (generation, setup)
                }
            }
            // Pushed changes kept until a model is known may be applied now.
            if isFirstUse, let live = liveUpdatesIfMade {
                Task { await live.modelBecameKnown(in: self) }
            }
            return setup
        }
    }
}

/// A model's setup as the store has it, or what making one needs.
private enum SetupLookup<Model: ResourceModel> {
    case cached(ModelSetup<Model>)
    case missing(generation: Int, MonoRail.Configuration, APIClient)
}

extension ResourceID {
    var debugText: String {
        switch self {
        case .int(let int): String(int)
        case .string(let string): "\"\(string)\""
        }
    }
}
