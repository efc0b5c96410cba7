import Foundation

/// The values of one instance that live queries read, taken together under its lock.
struct InstanceValues: Sendable {
    var id: JSONValue?
    /// By schema field index; `nil` where nothing was read. An array, not a dictionary: a large
    /// merge looks values up once per change and query.
    var fields: [JSONValue?] = []
    /// Deleted, or its delete kept in the outbox: no query shows it.
    var isGone = false
    /// Whether the id is a local one, of a create the outbox keeps.
    var isLocal = false
    /// The ``FetchStamp/order`` of the newest server state merged in.
    var fetchOrder: Int64?
    /// Whether the app has edited a field since.
    var isEdited = false

    /// Whether the instance changed here after an answer fetched at `answeredAt` was asked for:
    /// edited since, or merged from a newer response. Such an answer cannot speak for it.
    func isNewer(than answeredAt: FetchStamp?) -> Bool {
        isEdited || (fetchOrder ?? .min) > (answeredAt?.order ?? .max)
    }

    subscript(slot: QuerySlot) -> JSONValue? {
        switch slot {
        case .id: id
        case .field(let index): index < fields.count ? fields[index] : nil
        }
    }

    /// Reads the slots of an instance.
    static func read<Model: ResourceModel>(
        _ instance: Model, slots: Set<QuerySlot>, coder: FieldCoder
    ) -> InstanceValues {
        read([instance], slots: slots, coder: coder)[0]
    }

    /// Reads the slots of many instances, looking the schema up once.
    static func read<Model: ResourceModel>(
        _ instances: [Model], slots: Set<QuerySlot>, coder: FieldCoder
    ) -> [InstanceValues] {
        let schema = Model.resourceSchema.fields
        let indices = slots.compactMap { slot -> Int? in
            guard case .field(let index) = slot, index < schema.count else { return nil }
            return index
        }
        var read: [InstanceValues] = []
        read.reserveCapacity(instances.count)
        for position in instances.indices {
            read.append(
                instances[position]._$state.state.withLock { state in
                    var values = InstanceValues()
                    values.id = state.id?.jsonValue
                    values.isLocal = state.id?.isLocal ?? false
                    values.isGone = state.isDeleted || state.isDeletePending
                    values.fetchOrder = state.fetched?.order
                    values.isEdited = state.edits.contains { $0 != 0 }
                    if !indices.isEmpty {
                        values.fields = Array(repeating: nil, count: schema.count)
                        for index in indices {
                            values.fields[index] = (try? schema[index].encode(state.values, coder)) ?? .null
                        }
                    }
                    return values
                })
        }
        return read
    }
}
