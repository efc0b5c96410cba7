import Foundation
import Logging
import MonoRailTransport
import Tracing

// What an event does: find its model, merge or delete its records through the action pipeline,
// keep them with the cursor, tell who listens.
extension LiveUpdates {
    /// How many times in a row the stream is opened again from one cursor because an event after
    /// it could not be read; then the event is passed over (it was reported each time).
    static let unreadableRetries = 3

    /// Why the stream is opened again: an event could not be read (larger than the configured
    /// most, or not UTF-8). Reconnecting from the last event merged makes the server send again
    /// what followed it, rather than have it passed over.
    struct Unreadable: Error {
        var error: APIError
    }

    /// Applies what a chunk of the stream brought, in order. The record events in a row are merged
    /// together (``merge(_:store:settings:logger:)``); an event that cannot be applied is reported and
    /// passed over, and the cursor moves past it all the same, so a stream never stops on one bad event.
    /// An event that cannot be read at all throws ``Unreadable`` once what came before it is merged:
    /// the stream is opened again from the cursor; the same failure at the same cursor
    /// ``unreadableRetries`` times is passed over.
    func apply(
        _ outputs: [ServerSentEventParser.Output], store: ResourceStore, settings: LiveUpdatesConfiguration
    ) async throws {
        let logger = store.configuration.logger
        // What a change waits for once its bytes are here: the changes before it, the merge, the
        // record cache, the announce — `monorail.live.lag`.
        let arrived = ContinuousClock.now
        // The chunk's place among the store's answers: a clear() after it drops what is left of it.
        let stamp = store.stamp()
        var run: [RecordEvent] = []
        for output in outputs {
            switch output {
            case .event(let event):
                let named = settings.kind(of: event.type)
                if let named, named.kind != .reset {
                    run.append(RecordEvent(event: event, kind: named.kind, model: named.model))
                    continue
                }
                await merge(run, arrived: arrived, stamp: stamp, store: store, settings: settings, logger: logger)
                run = []
                if named?.kind == .reset {
                    await resetAll(in: store, logger: logger)
                    tell(.reset)
                } else {
                    let known = settings.events.keys.sorted().joined(separator: ", ")
                    report(
                        APIError(
                            .decodingFailed,
                            "an event named \"\(Self.shown(event.type))\" is none live updates know (\(known)); it was skipped"
                        ), logger: logger)
                }
                await keep(
                    PushOutcome(keys: []), cursor: event.id, stamp: stamp, store: store, settings: settings,
                    logger: logger)
            case .lastEventID(let id):
                await merge(run, arrived: arrived, stamp: stamp, store: store, settings: settings, logger: logger)
                run = []
                // A cursor without a change: kept as the next one to resume from.
                await keep(
                    PushOutcome(keys: []), cursor: id, stamp: stamp, store: store, settings: settings, logger: logger)
            case .retry(let delay):
                connection.withLock { $0.serverRetry = delay }
            case .failure(let error):
                await merge(run, arrived: arrived, stamp: stamp, store: store, settings: settings, logger: logger)
                run = []
                report(error, logger: logger)
                let cursor = lastEventID
                let attempts = connection.withLock { connection -> Int in
                    let count = connection.unreadable.map { $0.cursor == cursor ? $0.count + 1 : 1 } ?? 1
                    connection.unreadable = (cursor, count)
                    return count
                }
                guard attempts >= Self.unreadableRetries else { throw Unreadable(error: error) }
                // The server sends it again each time: passed over, as reported, and the stream goes on.
                connection.withLock { $0.unreadable = nil }
            }
        }
        await merge(run, arrived: arrived, stamp: stamp, store: store, settings: settings, logger: logger)
    }

    /// Merges record events in a row, each all or nothing, their changes told to live queries once
    /// for all of them (a burst of a thousand changes moves a list once, not a thousand times), and
    /// keeps them with the cursor after the last in one commit.
    ///
    /// - Parameter replaying: Whether the events are kept ones applied late: the cursor stays where
    ///   the stream has it.
    private func merge(
        _ events: [RecordEvent], arrived: ContinuousClock.Instant, stamp: FetchStamp, store: ResourceStore,
        settings: LiveUpdatesConfiguration, logger: Logger, replaying: Bool = false
    ) async {
        guard !events.isEmpty else { return }
        let telemetry = store.client.telemetry
        // Pushed changes start a trace of their own: no action of the app's caused them.
        let attributes: SpanAttributes = ["monorail.live.events": .int64(Int64(events.count))]
        await telemetry.withSpan("LiveUpdates.apply", context: .topLevel, attributes: attributes) { span in
            let applied = await merging(
                events, stamp: stamp, store: store, settings: settings, logger: logger, replaying: replaying)
            if let span {
                for event in applied { span.addEvent(event.spanEvent) }
            }
            if telemetry.metricsFactory != nil {
                let lag = ContinuousClock.now - arrived
                for _ in applied { telemetry.record(lag, in: "monorail.live.lag", []) }
            }
        }
    }

    /// ``merge(_:arrived:store:settings:logger:)``'s work; the events it applied.
    private func merging(
        _ events: [RecordEvent], stamp: FetchStamp, store: ResourceStore, settings: LiveUpdatesConfiguration,
        logger: Logger, replaying: Bool
    ) async -> [Event] {
        guard let last = events.last?.event else { return [] }
        var outcome = PushOutcome(keys: [])
        var applied: [Event] = []
        var problems: [APIError] = []
        var cursor = lastEventID
        QueryBatch.collecting {
            for record in events {
                let (event, kind) = (record.event, record.kind)
                defer { cursor = event.id ?? cursor }
                do {
                    let (model, isList) = try Self.model(of: event, named: record.model, in: store)
                    let one = try model.applyPushed(kind, body: event.data, isList: isList, arrived: stamp, in: store)
                    outcome.keys += one.keys
                    outcome.records += one.records
                    outcome.deleted += one.deleted
                    outcome.instances += one.instances
                    applied.append(
                        .applied(
                            kind, model: model.resourceName, ids: one.keys.map { ResourceID.string($0.id) },
                            eventID: event.id))
                } catch let unknown as UnknownModel {
                    // Kept for when the app uses the model, rather than passed over for good.
                    let held = HeldEvent(event: event, kind: kind, model: record.model, cursorBefore: cursor)
                    connection.withLock { $0.held.append(held) }
                    problems.append(unknown.error)
                } catch {
                    problems.append(APIError.wrapping(error, request: nil))
                }
            }
        }
        await store.announcer.settle()
        await keep(
            outcome, cursor: replaying ? nil : last.id, stamp: stamp, store: store, settings: settings, logger: logger)
        for problem in problems { report(problem, logger: logger) }
        for event in applied { tell(event) }
        return applied
    }

    /// A created, updated or destroyed event, with the kind and model its name gives.
    private struct RecordEvent {
        var event: ServerSentEvent
        var kind: PushedChangeKind
        var model: String?
    }

    /// The model an event is about, and whether its body holds a list: named by the event
    /// (`train.updated`), else by the root of its body (`{"train": …}` or `{"trains": […]}`) when the
    /// store's conventions put records under their model's name.
    static func model(of event: ServerSentEvent, named: String?, in store: ResourceStore) throws -> (
        any ResourceModel.Type, isList: Bool
    ) {
        if let named {
            guard let model = store.knownModel(named: named) else {
                throw UnknownModel(
                    "an event is about \"\(shown(named))\", a model this store has not used or registered "
                        + "(MonoRail.Configuration.models); it is kept until the app uses it")
            }
            return (model, named == model.resourcePlural && named != model.resourceName)
        }
        if store.configuration.conventions.bodyStyle == .jsonAPI { return try documentModel(of: event, in: store) }
        guard case .modelName = store.configuration.conventions.responseRoot else {
            throw APIError(
                .decodingFailed,
                "an event named \"\(shown(event.type))\" does not say its model, and bodies of these conventions "
                    + "have no root to say it; name it in the event (event: train.\(shown(event.type)))")
        }
        let body: JSONValue
        do {
            body = try JSONParser().parse(event.data)
        } catch {
            throw APIError(
                .decodingFailed, "an event's data is not JSON: \(error); it was skipped", underlyingError: error)
        }
        guard let members = body.objectValue else {
            throw APIError(.decodingFailed, "an event's data is no JSON object; it was skipped")
        }
        var singular: (any ResourceModel.Type)?
        var plurals: [any ResourceModel.Type] = []
        for key in members.keys.sorted() {
            guard let model = store.knownModel(named: key) else { continue }
            if key == model.resourceName {
                singular = model
            } else if key == model.resourcePlural {
                plurals.append(model)
            }
        }
        if let singular { return (singular, false) }
        if plurals.count == 1, let plural = plurals.first { return (plural, true) }
        let keys = members.keys.sorted().map { "\"\(shown($0))\"" }.joined(separator: ", ")
        guard plurals.isEmpty else {
            throw APIError(
                .decodingFailed,
                "an event's data names several lists (\(keys)); name its model in the event (event: trains.updated)")
        }
        throw UnknownModel(
            "an event's data (\(keys)) names no model this store has used or registered "
                + "(MonoRail.Configuration.models); it is kept until the app uses one it names")
    }

    /// The model of a JSON:API document an event carries, by the `type` of its primary data:
    /// `{"data": {"type": "trains", …}}`, or a list of one type.
    private static func documentModel(of event: ServerSentEvent, in store: ResourceStore) throws -> (
        any ResourceModel.Type, isList: Bool
    ) {
        let body: JSONValue
        do {
            body = try JSONParser().parse(event.data)
        } catch {
            throw APIError(
                .decodingFailed, "an event's data is not JSON: \(error); it was skipped", underlyingError: error)
        }
        let (resource, isList): (JSONValue?, Bool) =
            switch body["data"] {
            case .array(let items)?: (items.first, true)
            case let data?: (data, false)
            case nil: (nil, false)
            }
        guard case .string(let type)? = resource?["type"] else {
            throw APIError(
                .decodingFailed, "an event's data is no JSON:API document with a typed resource; it was skipped")
        }
        guard let model = store.knownModel(jsonAPIType: type) else {
            throw UnknownModel(
                "an event is about \"\(shown(type))\", a type no model this store has used or registered has "
                    + "(MonoRail.Configuration.models); it is kept until the app uses it")
        }
        return (model, isList)
    }

    /// An event about a model this store does not know yet: kept, and reported.
    struct UnknownModel: Error {
        var error: APIError
        init(_ message: String) { error = APIError(.decodingFailed, message) }
    }

    /// Applies the kept events a model the app just used can place, in order, then lets storage
    /// keep the cursor past them when none is kept any more.
    func modelBecameKnown(in store: ResourceStore) async {
        guard let settings = store.configuration.liveUpdates else { return }
        let logger = store.configuration.logger
        let held = connection.withLock { $0.held }
        // Looked up outside the lock: finding a model reads the store's configuration.
        let placed = held.indices.filter {
            (try? Self.model(of: held[$0].event, named: held[$0].model, in: store)) != nil
        }
        guard !placed.isEmpty else { return }
        let ready = placed.map { held[$0] }
        connection.withLock { connection in
            connection.held.removeAll { kept in
                ready.contains { $0.event == kept.event && $0.cursorBefore == kept.cursorBefore }
            }
        }
        let events = ready.map { RecordEvent(event: $0.event, kind: $0.kind, model: $0.model) }
        await merge(
            events, arrived: .now, stamp: store.stamp(), store: store, settings: settings, logger: logger,
            replaying: true)
    }

    /// Gives the record cache what an event brought, with the cursor after it, and moves the cursor.
    func keep(
        _ outcome: PushOutcome, cursor: String?, stamp: FetchStamp, store: ResourceStore,
        settings: LiveUpdatesConfiguration, logger: Logger
    ) async {
        // A sign-out since the chunk arrived: the last account's cursor and records are not kept.
        await store.signOutFence.keeping(stamp) {
            if let cursor { setLastEventID(cursor) }
            guard let storage = store.configuration.storage else { return }
            // Not past an event kept for a model not known yet: a restart gets it again.
            let held = connection.withLock { $0.held.first }
            let kept = held.map { $0.cursorBefore } ?? lastEventID
            guard kept != nil || !outcome.records.isEmpty || !outcome.deleted.isEmpty else { return }
            do {
                try await storage.keepPushed(
                    outcome.records, deleted: outcome.deleted,
                    cursor: kept.map { LiveCursor(feed: settings.path, lastEventID: $0) })
            } catch {
                logger.warning("live updates: the record cache could not keep a pushed change: \(error)")
            }
        }
    }

    /// A name from the stream, cut short for a message.
    static func shown(_ text: String) -> String {
        text.count > 80 ? String(text.prefix(80)) + "…" : text
    }
}

extension ResourceModel {
    /// Applies a pushed change of this model through its pipeline.
    static func applyPushed(
        _ kind: PushedChangeKind, body: Data, isList: Bool, arrived: FetchStamp, in store: ResourceStore
    ) throws -> PushOutcome {
        let pipeline = ActionPipeline<Self>(store: store)
        switch kind {
        case .created, .updated: return try pipeline.mergePushed(body, isList: isList, arrived: arrived)
        case .destroyed: return try pipeline.applyPushedDestroy(body, isList: isList, arrived: arrived)
        case .reset: return PushOutcome(keys: [])
        }
    }
}

extension LiveUpdates.Event {
    /// An applied change as an event of its run's span: `pushed`, with the model, the kind, the
    /// records and the event's id.
    var spanEvent: SpanEvent {
        guard case .applied(let kind, let model, let ids, let eventID) = self else { return SpanEvent(name: "pushed") }
        var attributes: SpanAttributes = [
            "monorail.model": "\(model)", "monorail.live.kind": "\(kind.rawValue)",
            "monorail.record.ids": .stringArray(ids.map(\.description)),
        ]
        if let eventID { attributes["monorail.live.event_id"] = eventID }
        return SpanEvent(name: "pushed", attributes: attributes)
    }
}
