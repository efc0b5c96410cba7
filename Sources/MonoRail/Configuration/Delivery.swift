/// Where and when a store tells the app of changes: Observation of instances, relationships,
/// live queries and ``ResourceStore/isOffline``; the update streams (``ResourceModel/updates``,
/// ``ResourceQuery`` iteration, ``Outbox/events``); and the `success:` and `failure:` closures of
/// the callback style. Set ``MonoRail/Configuration/delivery``.
///
/// ```swift
/// MonoRail.configure { $0.delivery = .mainActor }
/// Train.get(id: 1, success: { train in
///     MainActor.assumeIsolated { label.text = train.company }   // holds: called on the main actor
/// })
/// ```
///
/// An update stream's `for await` loop resumes where the loop runs, whatever the delivery (write it
/// in a `.task {}` or a `@MainActor` function for the main actor); ``Delivery/mainActor`` makes the
/// store hand each element over from the main actor, in order with the Observation it belongs to.
public enum Delivery: Sendable, Hashable {
    /// At once, on the task that made the change (the default): a response's changes are told on
    /// a task of the cooperative pool, not the main thread, before the action returns. Hop to the
    /// main actor to touch UIKit or AppKit.
    case immediate
    /// Queued, in order, for the main actor, as SwiftUI, UIKit and AppKit code expects. The
    /// store's state has already changed when an observer is told, so it reads the new values;
    /// an action returns once everything it changed has been told, so main-actor code after
    /// `try await train.save()` sees its observers up to date. The app's own `train.company = …`
    /// still tells that property's observers at once, where it is set. The blocking variants
    /// (`blocking`) do not wait for the main actor, which may be the thread they
    /// block.
    case mainActor
}
