import Logging

// `@Has` assignments on the server: `train.cars = [a, b]` re-points the cars here at once, and the
// train's next save saves every car whose key it changed, so the server and the identity map agree.

/// A `@Has` assignment waiting for its owner's save.
struct Membership<Model: ResourceModel>: Sendable {
    /// The records it pointed nowhere, still to be saved: a later assignment that does not list
    /// them again leaves them out too.
    var leaving: [any ResourceModel]
    var save: @Sendable (Model) async throws -> Void
}

extension InstanceState {
    /// Notes an assignment for the next save or create of this record to carry out on the server.
    func keepMembership<Target: ResourceModel>(
        _ targets: [Target], leaving: [Target], valuePath: any AnyKeyPath & Sendable, foreignKey: String?,
        inverse: String?
    ) {
        state.withLock { state in
            // An earlier assignment's leavers still leave, unless this one lists them.
            let earlier = (state.membership[ValuePathKey(valuePath)]?.leaving ?? []).compactMap { $0 as? Target }
            let leaving = (earlier + leaving).filter { candidate in !targets.contains { $0 === candidate } }
            state.membership[ValuePathKey(valuePath)] = Membership(leaving: leaving) { owner in
                try await owner._$state.saveMembers(
                    targets, leaving: leaving, of: owner, valuePath: valuePath, foreignKey: foreignKey, inverse: inverse
                )
            }
        }
    }

    /// Carries out the assignments kept since the last save, once this record has an id. Called by
    /// `save()` and `create()` after the record's own request.
    func saveMembership(of model: Model) async throws {
        let pending = state.withLock { state -> [ValuePathKey: Membership<Model>] in
            guard state.id != nil else { return [:] }
            defer { state.membership = [:] }
            return state.membership
        }
        for (_, assignment) in pending {
            do {
                try await assignment.save(model)
            } catch {
                // Kept for the next save, unless a newer assignment replaced it: carrying one out
                // again re-points and saves only what still differs.
                state.withLock { state in
                    for (key, assignment) in pending where state.membership[key] == nil {
                        state.membership[key] = assignment
                    }
                }
                throw error
            }
        }
    }

    /// Re-points `targets` here and every other record that points here nowhere — those the server
    /// lists and the store did not hold included — and saves each one whose key changed.
    private func saveMembers<Target: ResourceModel>(
        _ targets: [Target], leaving: [Target], of model: Model, valuePath: any AnyKeyPath & Sendable,
        foreignKey: String?, inverse: String?
    ) async throws {
        let (id, store) = state.withLock { ($0.id, $0.store ?? .default) }
        guard let id else { return }
        let key = store.foreignKey(foreignKey, inverse: inverse, from: Model.self, to: Target.self)
        guard let index = store.setup(for: Target.self).wireKeys.firstIndex(of: key) else {
            throw Self.missingKey(key, valuePath: valuePath, of: Target.self)
        }
        // The records the server holds here: those not live in the store leave too.
        let listed = ModelAction<Target>(
            operation: .list(filter: [key: id.jsonValue]), store: store, policy: .networkOnly)
        // Held until they are saved: the store alone would let them go.
        var held: [Target] = []
        do {
            held = try await ActionPipeline(store: store).everyPage(listed).value
        } catch let error as APIError where error.isUnanswered {
            // Offline: the records live in the store are all that can be re-pointed; their saves
            // wait in the outbox if the store keeps writes.
            store.configuration.logger.notice(
                "\(Model.resourceSchema.typeName)'s assignment could not list the server's \(Target.resourceSchema.typeName) records (\(error)); only those live in the store are re-pointed"
            )
        }
        let left = point(targets, at: model, valuePath: valuePath, foreignKey: foreignKey, inverse: inverse)
        var moved: [Target] = []
        for candidate in targets + leaving + left where !moved.contains(where: { $0 === candidate }) {
            if candidate._$state.isUnsaved(field: index) { moved.append(candidate) }
        }
        for child in moved {
            if child.id == nil {
                try await child.create(in: store)
            } else {
                try await child.save()
            }
        }
        withExtendedLifetime(held) {}
    }

    /// Whether a field holds an edit not yet saved.
    func isUnsaved(field index: Int) -> Bool {
        state.withLock { Self.isUnsaved(index, in: $0) }
    }

    /// The error of a `@Has` whose related model has no field for its key, naming both models.
    static func missingKey<Target: ResourceModel>(
        _ key: String, valuePath: any AnyKeyPath & Sendable, of target: Target.Type
    ) -> APIError {
        let schema = Model.resourceSchema
        let name =
            schema.hasRelationships.first { ValuePathKey($0.valuePath) == ValuePathKey(valuePath) }?.name
            ?? schema.indexByValuePath[ValuePathKey(valuePath)].map { schema.fields[$0].name } ?? "?"
        return APIError(
            .invalidConfiguration,
            "\(schema.typeName).\(name) lists the \(Target.resourceSchema.typeName) records whose \"\(key)\" holds a "
                + "\(schema.typeName)'s id, but \(Target.resourceSchema.typeName) has no field with that key: declare "
                + "@References var \(Model.resourceName): \(schema.typeName)? on \(Target.resourceSchema.typeName), "
                + "or name the key with @Has(foreignKey:) or @Has(inverse:)")
    }
}

extension ResourceStore {
    /// Logs an error once: for what cannot be thrown where it is found (a property read).
    func reportOnce(_ error: APIError) {
        guard notices.withLock({ $0.insert(error.message).inserted }) else { return }
        configuration.logger.error("\(error.message)")
    }
}
