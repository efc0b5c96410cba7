/// The part of a store that maps (model, id) to the one live instance.
///
/// Instances are held weakly: the map never keeps one alive. Entries of released instances are
/// swept when the table has doubled since the last sweep, so a long-lived store does not grow
/// with every record it ever saw. Not thread-safe by itself: the store keeps it behind its lock.
struct IdentityMap {
    /// The order of the stamp of the last ``ResourceStore/clear()``: a merge of an answer stamped at
    /// or before it is refused (``SignOutFence``).
    var fence = Int64.min

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
        /// The id as the server sent it, to notice when it comes back as another type.
        let id: ResourceID
    }

    private struct WeakInstance {
        weak var object: (any ResourceModel)?
    }

    private var entries: [Key: Entry] = [:]
    /// Records the store heard the server deleted, by the order of the stamp they were heard at:
    /// an answer asked for before that is older than the deletion, and does not bring one back.
    /// Only the newest ``deletionsKept`` are kept: an older one would speak only to an answer that
    /// came back after thousands of deletions since it was asked for.
    private(set) var deletions: [Key: Int64] = [:]
    /// How many deletions are kept.
    static let deletionsKept = 4096
    /// Counts removals of entries that may hold live instances. An instance found under its key
    /// while this stood at a value is still the one under it while this stands there: entries of
    /// live instances are not otherwise replaced.
    private(set) var removals = 0
    /// Counts entries made: while it stands, an id found absent is still absent.
    private(set) var insertions = 0
    /// Per model, the instance of its singleton resource (`GET /user.json`) when it has no id.
    private var singletons: [ObjectIdentifier: WeakInstance] = [:]
    /// Entries are swept of released instances when the table doubles past this size.
    private var sweepThreshold = 64

    /// The live instance under a key and the id it was stored under. Mutating only in form: the
    /// entry is read where it lies, through the dictionary's in-place access, because reading it
    /// copies its weak reference, which costs more than the lookup. Nothing changes.
    mutating func lookup(_ key: Key) -> (object: (any ResourceModel)?, id: ResourceID)? {
        Self.read(&entries[key])
    }

    private static func read(_ entry: inout Entry?) -> (object: (any ResourceModel)?, id: ResourceID)? {
        guard let id = entry?.id else { return nil }
        return (entry?.object, id)
    }

    /// The live instance of a model with an id.
    func instance<Model: ResourceModel>(of type: Model.Type, id: ResourceID) -> Model? {
        entries[Key(type: ObjectIdentifier(type), id: id)]?.object as? Model
    }

    /// The live instance under `key`, for code not generic over the model.
    func object(under key: Key) -> (any ResourceModel)? {
        entries[key]?.object
    }

    /// Every live instance of a model, in no particular order.
    func instances<Model: ResourceModel>(of type: Model.Type) -> [Model] {
        let identifier = ObjectIdentifier(type)
        return entries.compactMap { key, entry in key.type == identifier ? entry.object as? Model : nil }
    }

    /// Every live instance of every model, singletons' included.
    var allInstances: [any ResourceModel] {
        entries.values.compactMap(\.object) + singletons.values.compactMap(\.object)
    }

    /// The live instance of a model's singleton resource, if any.
    func singleton<Model: ResourceModel>(of type: Model.Type) -> Model? {
        singletons[ObjectIdentifier(type)]?.object as? Model
    }

    /// The instance of a model's singleton resource, made on first use so that concurrent reads
    /// merge into one.
    mutating func makeSingleton<Model: ResourceModel>(of type: Model.Type) -> Model {
        if let live = singleton(of: type) { return live }
        let made = Model()
        singletons[ObjectIdentifier(type)] = WeakInstance(object: made)
        return made
    }

    /// Makes `instance` the instance of its model's singleton resource, or forgets it.
    mutating func setSingleton<Model: ResourceModel>(_ instance: Model?, of type: Model.Type) {
        singletons[ObjectIdentifier(type)] = instance.map { WeakInstance(object: $0) }
    }

    /// The number of live instances.
    var count: Int { entries.values.reduce(0) { $0 + ($1.object == nil ? 0 : 1) } }

    /// The entries held, released instances' among them until the next sweep: `count` at no cost,
    /// for the `monorail.identity_map.size` gauge set after each merge.
    var entryCount: Int { entries.count }

    /// Whether no entry is held, not even a released instance's.
    var isEmpty: Bool { entries.isEmpty }

    /// Makes `instance` the one live instance for its key.
    mutating func insert<Model: ResourceModel>(_ instance: Model, for key: Key, id: ResourceID) {
        entries[key] = Entry(object: instance, id: id)
        insertions &+= 1
    }

    /// Forgets the entry for `key` when it holds `instance` or a released one.
    mutating func remove(_ key: Key, ifHolding instance: AnyObject) {
        if let entry = entries[key], entry.object === instance || entry.object == nil {
            entries[key] = nil
            removals &+= 1
        }
    }

    /// Notes that the record under `key` was deleted on the server, as heard at `order`.
    mutating func noteDeleted(_ key: Key, at order: Int64) {
        deletions[key] = max(deletions[key] ?? order, order)
        guard deletions.count > Self.deletionsKept else { return }
        // Halved at once, by order, so that a steady stream of deletions sorts rarely.
        let kept = deletions.sorted { $0.value > $1.value }.prefix(Self.deletionsKept / 2)
        deletions = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
    }

    /// Whether the record under `key` was heard deleted after `order`.
    func wasDeleted(_ key: Key, after order: Int64) -> Bool {
        deletions[key].map { $0 > order } ?? false
    }

    /// Forgets every entry of a model.
    mutating func removeAll<Model: ResourceModel>(of type: Model.Type) {
        let identifier = ObjectIdentifier(type)
        entries = entries.filter { $0.key.type != identifier }
        removals &+= 1
    }

    /// Sweeps released entries once the table has doubled since the last sweep.
    mutating func sweepIfGrown() {
        guard entries.count >= sweepThreshold else { return }
        entries = entries.filter { $0.value.object != nil }
        sweepThreshold = max(64, entries.count * 2)
    }

    /// Makes room for `incoming` more entries, so a large list does not grow the table several
    /// times while it is inserted.
    mutating func reserve(_ incoming: Int) {
        if incoming > 16 { entries.reserveCapacity(entries.count + incoming) }
    }
}
