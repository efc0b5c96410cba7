import Foundation

#if canImport(UIKit) && !os(watchOS)
    import UIKit
#endif

// The app's life cycle: a stream is closed while the app is in the background, where the system
// would suspend it anyway, and resumed from its cursor when the app returns.
extension LiveUpdates {
    /// Closes the stream for a while — the app went to the background — keeping the cursor; ``resume()``
    /// opens it again. Does nothing when the stream was not connected or connecting.
    ///
    /// On iOS, tvOS and visionOS the store does this by itself when the app enters the background,
    /// unless ``LiveUpdatesConfiguration/pausesInBackground`` is `false`. Elsewhere (a macOS app, a
    /// SwiftUI `scenePhase`), call it.
    public func pause() {
        let task = connection.withLock { connection -> Task<Void, Never>? in
            guard let task = connection.task else { return nil }
            connection.isPaused = true
            connection.generation += 1
            connection.task = nil
            return task
        }
        guard let task else { return }
        task.cancel()
        setState(.stopped(nil))
    }

    /// Opens the stream again after ``pause()``, from the cursor; does nothing when it was not paused.
    public func resume() {
        let generation: Int? = connection.withLock { connection in
            guard connection.isPaused, connection.task == nil else { return nil }
            connection.isPaused = false
            connection.generation += 1
            return connection.generation
        }
        guard let generation else { return }
        start(generation: generation)
    }

    /// Follows the app into the background and back, where the platform tells.
    func observeAppLifecycle() {
        #if canImport(UIKit) && !os(watchOS)
            let center = NotificationCenter.default
            let background = center.addObserver(
                forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: nil
            ) { [weak self] _ in
                guard let self, self.pausesInBackground else { return }
                self.pause()
            }
            let foreground = center.addObserver(
                forName: UIApplication.willEnterForegroundNotification, object: nil, queue: nil
            ) { [weak self] _ in
                self?.resume()
            }
            lifecycleObservers.withLock { $0 = [ObserverToken(token: background), ObserverToken(token: foreground)] }
        #endif
    }

    /// Whether the store's configuration wants the stream closed in the background.
    private var pausesInBackground: Bool {
        connection.withLock { $0.store }?.configuration.liveUpdates?.pausesInBackground ?? false
    }
}
