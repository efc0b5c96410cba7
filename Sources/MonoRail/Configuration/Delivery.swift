/// Where the store calls the app back: the `success:` and `failure:` closures of the callback
/// style (`Train.get(id: 1, success: …)`).
///
/// ```swift
/// MonoRail.configure { $0.delivery = .mainActor }
/// Train.get(id: 1, success: { train in
///     MainActor.assumeIsolated { label.text = train.company }   // holds: called on the main actor
/// })
/// ```
public enum Delivery: Sendable, Hashable {
    /// On the task that finished the request (the default): a task of the cooperative pool, not the
    /// main thread; hop to the main actor inside the closure to touch UI.
    case immediate
    /// On the main actor, as UIKit and AppKit code expects.
    case mainActor
}
