import Foundation
import MonoRailTransport
import Observation

// Membership: which records a live list holds as instances change, are created and deleted.
extension ResourceQuery {
    func read(_ instances: [Model]) -> [InstanceValues] {
        let coder = FieldCoder(options: setup.coding)
        return InstanceValues.read(instances, slots: plan.slots, coder: coder)
    }

    /// Instances of creates the outbox keeps that match: the server does not list them yet.
    func pendingCreates() -> [(Model, InstanceValues)] {
        guard plan.isEvaluable, let outbox = store.outboxIfMade, outbox.pendingCount > 0 else { return [] }
        let coder = FieldCoder(options: setup.coding)
        return store.instances(of: Model.self).compactMap { instance in
            guard instance.id?.isLocal == true else { return nil }
            let values = InstanceValues.read(instance, slots: plan.slots, coder: coder)
            return !values.isGone && plan.matches(values) ? (instance, values) : nil
        }
    }

    /// Adds what an answer lists, in its order, or sorted when the server does not sort. An
    /// instance that changed here after the request was sent is tested here.
    func admit(
        _ instances: [Model], values: [InstanceValues], answeredAt: FetchStamp?, sorting: Bool, into state: inout State
    ) {
        for (instance, values) in zip(instances, values) {
            guard !values.isGone, !state.membership.contains(ObjectIdentifier(instance)) else { continue }
            if plan.isEvaluable, values.isNewer(than: answeredAt), !plan.matches(values) { continue }
            let key = plan.sortKey(values)
            if sorting {
                insert(instance, key: key, into: &state)
            } else {
                state.membership.append(ObjectIdentifier(instance), key: key)
                state.members.append(instance)
            }
        }
    }

    /// Puts an instance in its place: after the ones it ties with, or last when unsorted.
    func insert(_ instance: Model, key: SortKey, into state: inout State) {
        state.members.insert(instance, at: state.membership.insert(ObjectIdentifier(instance), key: key))
    }

    /// Applies changes to instances of the model, as the store tells them: one per instance,
    /// `changes.facts[i]` of `instances[i]`. Returns what tells the query's observers, to run once
    /// the store's lock is released, if anything changed.
    func apply(_ changes: ChangeTable, instances: [Model]) -> (@Sendable () -> Void)? {
        // The query's own answer decides what it shows when it arrives, and a stale one nothing:
        // the changes its merge makes are not told to it.
        guard QueryBatch.fetchingQuery != ObjectIdentifier(self) else { return nil }
        // A query that cannot evaluate its filter asks again when a record may have joined.
        let refetches =
            !plan.isEvaluable
            && changes.facts.contains { ($0.kind == .created || $0.kind == .merged) && !$0.isGone }
        let changed = state.withLock { state -> Bool in
            // Before the first answer there is nothing to keep true; the answer decides.
            guard state.shownGeneration > 0 else { return false }
            var total = state.total
            let rearrangement = state.membership.apply(changes, total: &total, isPartial: state.next != nil)
            guard rearrangement != nil || total != state.total else { return false }
            state.total = total
            switch rearrangement {
            case nil: break
            case .steps(let removals, let insertions):
                for position in removals { state.members.remove(at: position) }
                for (position, change) in insertions { state.members.insert(instances[change], at: position) }
            case .rebuilt(let sources):
                Self.rearrange(&state.members, by: sources, instances: instances)
            }
            publish(state)
            return true
        }
        guard changed || refetches else { return nil }
        return { [refetches] in
            if changed { self.announce() }
            if refetches { self.scheduleRefetch() }
        }
    }

    /// One refresh at a time for a query that cannot evaluate its filter; changes while it runs
    /// schedule the next.
    private func scheduleRefetch() {
        let schedules = state.withLock { state in
            defer { state.isRefetchScheduled = true }
            return !state.isRefetchScheduled
        }
        guard schedules else { return }
        Task { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.isRefetchScheduled = false }
            let failure: APIError?
            do {
                try await self.refresh()
                failure = nil
            } catch {
                failure = error as? APIError ?? APIError(.transport, "\(error)", underlyingError: error)
            }
            self.state.withLock { $0.refetchError = failure }
            self.store.announcer.announce { self.registrar.withMutation(of: self, keyPath: \.refetchError) {} }
        }
    }

    /// Puts the instances in a rebuilt order. Members that stay are moved, not copied: a copy
    /// touches an instance's reference count, a cache miss per instance in a large list. Only
    /// joining instances are retained and departing ones released.
    private static func rearrange(_ members: inout [Model], by sources: [QueryMembers.Source], instances: [Model]) {
        var kept = [Bool](repeating: false, count: members.count)
        for case .member(let position) in sources { kept[position] = true }
        // Slots of departing members take joining instances; the rest are dropped at the end.
        var spare = kept.indices.filter { !kept[$0] }[...]
        // Where each instance of the new order is now.
        var slots: [Int] = []
        slots.reserveCapacity(Swift.max(sources.count, members.count))
        for source in sources {
            switch source {
            case .member(let position):
                slots.append(position)
            case .change(let change):
                if let slot = spare.popFirst() {
                    members[slot] = instances[change]
                    slots.append(slot)
                } else {
                    members.append(instances[change])
                    slots.append(members.count - 1)
                }
            }
        }
        slots.append(contentsOf: spare)
        // Every instance moves once, none is copied.
        Permutation.apply(slots, to: &members)
        members.removeLast(members.count - sources.count)
    }
}
