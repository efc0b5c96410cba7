import Atomics
import Foundation
import MonoRailTransport
import Observation

/// Orders reference changes across all instances.
let referenceClock = ReferenceClock()

final class ReferenceClock: Sendable {
    private let value = ManagedAtomic<UInt64>(0)
    func next() -> UInt64 { value.wrappingIncrementThenLoad(ordering: .relaxed) }
}

/// The box behind one model instance: its field values, the last server state, which fields the
/// app edited, and its id. Generated code reads and writes fields through it.
///
/// All state sits behind one lock, so a reader sees a merge entirely or not at all, and any task may
/// read or write. Observation and update notifications are sent after the lock is released, so an
/// observer may read the instance without deadlocking.
@_documentation(visibility: internal)
public final class InstanceState<Model: ResourceModel>: Sendable {
    struct State: Sendable {
        /// The values the instance shows, edits included.
        var values: Model.FieldValues {
            _read { yield storedValues }
            _modify {
                separateServer()
                yield &storedValues
            }
        }
        /// The record as the server last described it; what ``ResourceModel/revert()`` restores.
        var server: Model.FieldValues {
            _read {
                if serverIsValues {
                    yield storedValues
                } else {
                    yield storedServer
                }
            }
            _modify {
                separateServer()
                defer { serverDigest = nil }
                yield &storedServer
            }
        }
        // The values and the server values are kept once until either changes: an instance that is
        // only read (most are) holds one copy, and a merge does not copy what it takes.
        private var storedValues = Model.FieldValues()
        private var storedServer = Model.FieldValues()
        private var serverIsValues = true
        /// The ``RecordDigest`` of the bytes ``server`` was decoded from, whole: set by a merge of
        /// a complete record read in place, forgotten by any other change to ``server``.
        var serverDigest: Int?
        /// Per schema field: 0 when unedited, else the sequence number of its latest edit. Empty until
        /// the first edit, so instances that are only read never allocate it.
        var edits: [UInt64] = []
        var editSequence: UInt64 = 0
        var id: ResourceID?
        var isDeleted = false
        /// Whether another instance took this one's place as its record's (the app's own, when a
        /// create's answer came after the record arrived another way): it stays deleted whatever its
        /// kept writes' answers bring, which go to that instance.
        var isRetired = false
        /// Whether a server answer was merged in: a record the server has, with or without an id
        /// (a singleton resource's record may have none).
        var isPersisted = false
        var store: ResourceStore?
        /// Related instances this instance keeps alive once loaded or assigned, by the relationship's value path.
        var related = [ValuePathKey: [any ResourceModel]]()
        /// When a reference of this instance last changed, on ``referenceClock``: when two instances point
        /// at one `@Has(.one)`, the one that pointed last wins.
        var referenceStamp: UInt64 = 0
        /// Subscribers to this instance's ``ResourceModel/updates``; made on the first subscription,
        /// since most instances never have one and a broadcaster costs three allocations.
        var updates: UpdateBroadcaster<ResourceUpdate<Model>>?
        /// What the server refused in the last create or save; empty once one succeeds.
        var errors = ValidationErrors()
        /// `@Has` assignments made before this instance had an id, carried out once it has one.
        var pendingAssignments = [ValuePathKey: @Sendable (Model) -> Void]()
        /// `@Has` assignments the next save or create of this instance carries out on the server,
        /// by saving the records they re-pointed.
        var membership = [ValuePathKey: Membership<Model>]()
        /// A JSON:API server's `links.related` of each `@Has` relationship, by Swift name: where its
        /// `load()` reads the related records.
        var relatedLinks = [String: URL]()
        /// When the request of the newest server state merged in was sent; a read answered with an
        /// older state does not overwrite it.
        var fetched: FetchStamp?
        /// The order of the first server state merged in: whether the instance came to the store
        /// before or after a create was sent, when the create is answered with its id.
        var born: Int64?
        /// The server's version of the state merged last (``ServerConventions/versionKey``): a state
        /// with an older one does not overwrite it, whenever it arrives.
        var serverVersion: RecordVersion?
        /// Per schema field: 0, or the sequence number of the edit the outbox keeps to send. A field is
        /// pending while its edit is that one or a later one. Empty until the first queued write.
        var pending: [UInt64] = []
        /// Whether the outbox keeps a delete of this record: reads do not bring it back meanwhile.
        var isDeletePending = false
        /// Why the server refused the last write the outbox sent for this record.
        var rejection: APIError?
        /// The writes refused with it, oldest first, for ``ResourceModel/resolve(keepLocal:)``.
        var rejectedWrites: [PendingWrite] = []

        /// The registrar, once ``registrar()`` made it.
        private(set) var madeRegistrar: ObservationRegistrar?

        /// ``InstanceState/registrar``, made the first time it is asked for.
        mutating func registrar() -> ObservationRegistrar {
            if let madeRegistrar { return madeRegistrar }
            let made = ObservationRegistrar()
            madeRegistrar = made
            return made
        }

        /// Keeps the registrar of the state this one replaces: observers registered with it stay.
        mutating func adopt(_ registrar: ObservationRegistrar) { madeRegistrar = registrar }

        /// Gives the server values a copy of their own before either they or the values change.
        private mutating func separateServer() {
            guard serverIsValues else { return }
            storedServer = storedValues
            serverIsValues = false
        }

        /// Takes a whole record's values, decoded from bytes of `digest`, as both the values and the
        /// server values: swapped out of `values` (a patch's, not read after its merge), since
        /// copying them retained every string and array in them.
        mutating func takeWhole(_ values: inout Model.FieldValues, digest: Int?) {
            swap(&storedValues, &values)
            if !serverIsValues {
                // What the server values held is no longer needed.
                storedServer = Model.FieldValues()
                serverIsValues = true
            }
            serverDigest = digest
        }
    }

    let state = Locked(State())

    /// The instance's observation registrar, made on first use: most instances a merge makes are
    /// never read, let alone observed, and a registrar costs two allocations.
    var registrar: ObservationRegistrar { state.withLock { $0.registrar() } }

    /// The registrar when one was made: nobody can observe an instance none was made for, whose
    /// properties were never read, so there is nobody to tell of a change.
    var registrarIfMade: ObservationRegistrar? { state.withLock { $0.madeRegistrar } }

    /// Creates an empty box. Called by generated code.
    @_documentation(visibility: internal)
    public init() {}

    // MARK: - Generated accessors

    /// Reads a property. Called by generated code.
    @_documentation(visibility: internal)
    public func value<Value: Sendable>(
        _ valuePath: any KeyPath<Model.FieldValues, Value> & Sendable, of model: Model, property: KeyPath<Model, Value>
    ) -> Value {
        let (registrar, value) = state.withLock { ($0.registrar(), $0.values[keyPath: valuePath]) }
        registrar.access(model, keyPath: property)
        return value
    }

    /// Writes a property as a local edit. Called by generated code.
    @_documentation(visibility: internal)
    public func setValue<Value: Sendable, Property>(
        _ value: Value, for valuePath: any WritableKeyPath<Model.FieldValues, Value> & Sendable, of model: Model,
        property: KeyPath<Model, Property>
    ) {
        let index = Model.resourceSchema.indexByValuePath[ValuePathKey(valuePath)]
        let registrar = state.withLock { state in
            state.values[keyPath: valuePath] = value
            if let index { Self.markEdited(index, in: &state) }
            return state.madeRegistrar
        }
        registrar?.willSet(model, keyPath: property)
        registrar?.didSet(model, keyPath: property)
        if let index { announce(.edited, fields: [index], of: model) }
    }

    /// Records a local edit of the field at `index`: its edit sequence, and the reference stamp of
    /// a reference. Called with the lock held.
    static func markEdited(_ index: Int, in state: inout State) {
        if state.edits.isEmpty { state.edits = Array(repeating: 0, count: Model.resourceSchema.fields.count) }
        state.editSequence += 1
        state.edits[index] = state.editSequence
        if Model.resourceSchema.fields[index].isReference { state.referenceStamp = referenceClock.next() }
    }

    /// Forgets the edit of the field at `index`, which is saved or undone, and its place in the
    /// outbox. Called with the lock held.
    static func clearEdit(_ index: Int, in state: inout State) {
        state.edits[index] = 0
        if index < state.pending.count { state.pending[index] = 0 }
    }

    /// Whether the field at `index` holds an edit the outbox keeps, or a later one made on top of it.
    static func isPending(_ index: Int, in state: State) -> Bool {
        index < state.pending.count && state.pending[index] != 0 && index < state.edits.count
            && state.edits[index] != 0
    }

    /// Whether the field at `index` holds an edit not yet handed to a save.
    static func isUnsaved(_ index: Int, in state: State) -> Bool {
        index < state.edits.count && state.edits[index] != 0
            && !(index < state.pending.count && state.pending[index] == state.edits[index])
    }

    /// Reads the id. Called by generated code.
    @_documentation(visibility: internal)
    public func id(of model: Model) -> ResourceID? {
        let (registrar, id) = state.withLock { ($0.registrar(), $0.id) }
        registrar.access(model, keyPath: \.id)
        return id
    }

    // MARK: - Merging

    /// How a server state is applied.
    enum MergeMode {
        /// A read: unedited fields take the server's values.
        case read
        /// The answer to a create or update that sent these edit sequence numbers: the edits sent
        /// are now saved, later edits stay pending.
        case saved(sent: [UInt64])
    }

    /// Applies a decoded record. Returns the indices of fields whose visible value changed.
    ///
    /// Called with the store's lock held; takes only this instance's lock, never the store's.
    ///
    /// - Parameters:
    ///   - fields: The schema's fields, passed in so that a merge of many records reads them once.
    ///   - fetched: When the request for this state was sent. A read older than the state merged
    ///     last changes nothing: answers can arrive out of order, and a cache's copy can be older.
    ///   - comparesFields: `false` when no change needs reporting (a new instance nobody observes
    ///     yet, of a model without references, whose changes would stamp them): nothing is compared.
    func apply(
        _ patch: RecordPatch<Model>, mode: MergeMode, store: ResourceStore, coder: FieldCoder,
        fields: [ResourceField<Model>], fetched: FetchStamp, comparesFields: Bool = true
    ) -> [Int] {
        state.withLock { state in
            // The server's versions decide when both states have one; else the order the requests
            // were sent in does.
            let isOlder: Bool? =
                state.isPersisted && !state.isDeleted
                ? patch.version.flatMap { incoming in state.serverVersion.flatMap { incoming.isOlder(than: $0) } }
                : nil
            let isSameVersion = isOlder == false && patch.version == state.serverVersion
            let isStale: Bool =
                if let isOlder, !isSameVersion {
                    isOlder
                } else {
                    state.fetched.map { fetched < $0 } ?? false && state.isPersisted && !state.isDeleted
                }
            switch mode {
            case .read where isStale:
                state.store = store
                return []
            case .saved(let sent) where isOlder == true:
                // A newer state arrived first (a push): the edits sent are saved, and show it.
                state.store = store
                return Self.markSaved(sent: sent, in: &state, fields: fields, showingServerWith: coder)
            default:
                break
            }
            if let version = patch.version { state.serverVersion = version }
            if state.fetched.map({ $0 < fetched }) ?? true { state.fetched = fetched }
            if state.born == nil { state.born = fetched.order }
            if let id = patch.id { state.id = id }
            state.store = store
            if !state.isDeletePending, !state.isRetired { state.isDeleted = false }
            state.isPersisted = true
            if case .saved(let sent) = mode, !state.edits.isEmpty {
                for index in state.edits.indices where state.edits[index] != 0 {
                    guard index < sent.count, sent[index] == state.edits[index] else { continue }
                    Self.clearEdit(index, in: &state)
                    fields[index].copy(&state.server, state.values)
                }
            }
            let isComplete = !patch.present.contains(false)
            // The bytes the server values came from, again: nothing can change (unedited fields hold
            // the server values), so nothing is compared.
            if let digest = patch.digest, digest == state.serverDigest, isComplete { return [] }
            // A record found unchanged carries no values, and its instance's server values changed
            // after the merge checked them (``Merger/check(_:target:mode:in:)``), so by a local
            // change, since a merge would have waited for the lock the check held. They stand: the
            // outcome is that of this merge before that change.
            if patch.isUnchanged { return [] }
            // Set where the server values are written whole (the digest describes the whole record).
            let digest = isComplete ? patch.digest : nil
            var changed: [Int] = []
            // The common case, an instance with no pending edits that the response describes in full,
            // is taken whole: one struct copy instead of one key-path write per field.
            if state.edits.isEmpty && isComplete {
                if !comparesFields {
                    state.takeWhole(&patch.values, digest: digest)
                    return changed
                }
                let same = patch.values._$sameFields(as: state.values)
                for index in fields.indices {
                    let isSame = same.isSame(index) ?? fields[index].isEqual(state.values, patch.values, coder)
                    if isSame { continue }
                    changed.append(index)
                    if fields[index].isReference { state.referenceStamp = referenceClock.next() }
                }
                state.takeWhole(&patch.values, digest: digest)
                return changed
            }
            for index in fields.indices where patch.present[index] {
                let field = fields[index]
                field.copy(&state.server, patch.values)
                let isEdited = !state.edits.isEmpty && state.edits[index] != 0
                if !isEdited && !field.isEqual(state.values, patch.values, coder) {
                    field.copy(&state.values, patch.values)
                    changed.append(index)
                    if field.isReference { state.referenceStamp = referenceClock.next() }
                }
            }
            if isComplete { state.serverDigest = digest }
            return changed
        }
    }

    /// Takes the server state of `live`, the store's instance of this record, into this detached
    /// one (``ResourceModel/init(json:using:)``): the record as the server answered, merged as
    /// `mode` says. Its observers are told; the store is not: the instance is not the store's.
    func take(serverStateOf live: Model, into model: Model, mode: MergeMode) {
        let (server, id, fetched, version) = live._$state.state.withLock {
            ($0.server, $0.id, $0.fetched, $0.serverVersion)
        }
        let fields = Model.resourceSchema.fields
        let changed = state.withLock { state in
            state.id = id ?? state.id
            state.isPersisted = true
            if !state.isRetired { state.isDeleted = false }
            state.fetched = fetched
            state.serverVersion = version
            if case .saved(let sent) = mode, !state.edits.isEmpty {
                for index in state.edits.indices where state.edits[index] != 0 {
                    guard index < sent.count, sent[index] == state.edits[index] else { continue }
                    Self.clearEdit(index, in: &state)
                }
            }
            var changed: [Int] = []
            for index in fields.indices {
                fields[index].copy(&state.server, server)
                let isEdited = !state.edits.isEmpty && state.edits[index] != 0
                guard !isEdited else { continue }
                fields[index].copy(&state.values, server)
                changed.append(index)
            }
            return changed
        }
        guard let registrar = registrarIfMade else { return }
        for index in changed { fields[index].notify(model, registrar) }
    }

    /// The server state this instance holds, whole and stamped as it was merged, for the instance
    /// that takes its place as its record's: merged there as a read, it wins only where it is the
    /// newer. `nil` while it holds no server state.
    func serverPatch(fieldCount: Int) -> RecordPatch<Model>? {
        state.withLock { state in
            guard state.isPersisted, let fetched = state.fetched else { return nil }
            let patch = RecordPatch<Model>(
                id: state.id, values: state.server, present: Array(repeating: true, count: fieldCount),
                embedded: [])
            patch.fetched = fetched
            patch.version = state.serverVersion
            patch.digest = state.serverDigest
            return patch
        }
    }

    /// When the request of the newest server state merged in was sent.
    var fetched: FetchStamp? { state.withLock { $0.fetched } }

    /// Whether the values the server last described were decoded from bytes of this digest.
    func hasServerDigest(_ digest: Int) -> Bool {
        state.withLock { $0.serverDigest == digest }
    }

    /// Notes that the server confirmed the state this instance holds (`304 Not Modified`) as of
    /// `fetched`.
    func confirm(fetched: FetchStamp) {
        state.withLock { state in
            if state.fetched.map({ $0 < fetched }) ?? true { state.fetched = fetched }
        }
    }

    /// Marks the fields sent in an update as saved when the server answered without a body.
    func markSaved(sent: [UInt64]) {
        let fields = Model.resourceSchema.fields
        state.withLock { state in _ = Self.markSaved(sent: sent, in: &state, fields: fields, showingServerWith: nil) }
    }

    /// Clears the edits `sent` names: they are saved. The values they held become the server's, or,
    /// with a `coder`, give way to the server's newer ones. Returns the fields whose value changed.
    private static func markSaved(
        sent: [UInt64], in state: inout State, fields: [ResourceField<Model>], showingServerWith coder: FieldCoder?
    ) -> [Int] {
        guard !state.edits.isEmpty else { return [] }
        var changed: [Int] = []
        for index in state.edits.indices where state.edits[index] != 0 && index < sent.count {
            guard sent[index] == state.edits[index] else { continue }
            clearEdit(index, in: &state)
            if let coder {
                guard !fields[index].isEqual(state.values, state.server, coder) else { continue }
                fields[index].copy(&state.values, state.server)
                changed.append(index)
            } else {
                fields[index].copy(&state.server, state.values)
            }
        }
        return changed
    }

    /// Empties the instance for sign-out: a new instance's values, no id, nothing edited, pending,
    /// refused or related, and deleted; observers of every field, of `id` and of `errors` are told.
    func empty(of model: Model) {
        state.withLock { state in
            var emptied = State()
            emptied.isDeleted = true
            emptied.updates = state.updates
            emptied.store = state.store
            if let registrar = state.madeRegistrar { emptied.adopt(registrar) }
            state = emptied
        }
        announce(.deleted, fields: Array(Model.resourceSchema.fields.indices), of: model)
        announceIdentity(of: model)
        tellObservers(of: \.errors, of: model)
    }

    /// Sends Observation and update notifications for fields that changed. Call without any lock.
    func announce(_ kind: ResourceUpdate<Model>.Kind, fields indices: [Int], of model: Model) {
        let fields = Model.resourceSchema.fields
        let (store, updates) = state.withLock { ($0.store, $0.updates) }
        // Before the fields' observers are told, so one that reads a `@Has` sees the change.
        store?.noteRelationships(of: model, kind: kind, fields: indices)
        // The app's own edit told its field's observers as it set it.
        if kind != .edited, let registrar = registrarIfMade {
            deliver(in: store) { for index in indices { fields[index].notify(model, registrar) } }
        }
        if let queries = store?.broadcasters.queries(of: Model.self), let store {
            let change = QueryChange(instance: model, kind: ChangeFacts.Kind(kind), mask: QueryPlan.mask(indices))
            queries.note(change, in: store)
        }
        let perType = store?.broadcaster(for: Model.self)
        guard updates?.hasSubscribers == true || perType?.hasSubscribers == true else { return }
        let update = ResourceUpdate(kind: kind, fields: indices.map { fields[$0].name }, instance: model)
        deliver(in: store) {
            updates?.yield(update)
            perType?.yield(update)
        }
    }

    /// Runs `tell` where the store's ``MonoRail/Configuration/delivery`` says: at once, or queued
    /// for the main actor behind every earlier announcement.
    func deliver(in store: ResourceStore?, _ tell: @escaping @Sendable () -> Void) {
        guard let store else { return tell() }
        store.announcer.announce(tell)
    }

    /// Tells the observers of `property` that it changed, where the store's delivery says.
    func tellObservers<Value>(of property: any KeyPath<Model, Value> & Sendable, of model: Model) {
        guard let registrar = registrarIfMade else { return }
        deliver(in: state.withLock(\.store)) {
            registrar.willSet(model, keyPath: property)
            registrar.didSet(model, keyPath: property)
        }
    }

    /// The broadcaster of this instance's updates, made on first use.
    func updateBroadcaster() -> UpdateBroadcaster<ResourceUpdate<Model>> {
        state.withLock { state in
            if let existing = state.updates { return existing }
            let created = UpdateBroadcaster<ResourceUpdate<Model>>()
            state.updates = created
            return created
        }
    }

    /// The validation errors of the last create or save, observed like a field.
    func errors(of model: Model) -> ValidationErrors {
        registrar.access(model, keyPath: \.errors)
        return state.withLock { $0.errors }
    }

    /// Keeps what the server refused, or clears it after a write that succeeded; observers of
    /// `errors` hear of it only when it changed.
    func setErrors(_ errors: ValidationErrors, of model: Model) {
        let changed = state.withLock { state in
            guard state.errors != errors else { return false }
            state.errors = errors
            return true
        }
        guard changed else { return }
        tellObservers(of: \.errors, of: model)
    }

    /// Announces a new id to observers of `id`.
    func announceIdentity(of model: Model) {
        tellObservers(of: \.id, of: model)
    }

    // MARK: - Snapshots

    /// The values, the edit sequence numbers and the id, read together.
    func snapshot() -> (values: Model.FieldValues, edits: [UInt64], id: ResourceID?, store: ResourceStore?) {
        state.withLock { ($0.values, $0.edits, $0.id, $0.store) }
    }
}
