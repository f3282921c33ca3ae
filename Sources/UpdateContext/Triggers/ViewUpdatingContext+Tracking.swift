#if canImport(Observation)
import Observation

extension ViewUpdatingContext {
    /// Registers an updater that runs under Observation tracking: a change to any `@Observable`
    /// property it read requests an update, coalesced like any other request.
    ///
    /// Only what the updater actually read in its last delivery is tracked, and it tracks again on every
    /// delivery, so a branch it takes later is followed then. What UIKit does from iOS 26 in
    /// `updateProperties()`, on every platform that has the Observation module.
    ///
    /// ```swift
    /// import Observation
    ///
    /// @Observable final class Model { var title = "" }
    ///
    /// final class TitleViewController: UIViewController {
    ///     let context = ViewUpdatingContext()
    ///     let model = Model()
    ///
    ///     func start() {
    ///         context.onUpdate(tracking: true) { [weak self] animated in
    ///             guard let self else { return }
    ///             titleLabel.text = model.title    // a change to model.title requests an update
    ///         }
    ///         context.update()                      // the first delivery starts tracking
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - tracking: `true` to track; `false` is the same as ``onUpdate(_:)``.
    ///   - closure: The updater, called on the main thread with the delivery's flag.
    /// - Returns: The updater's token.
    ///
    /// > Note: Needs the Observation module: iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, and Linux.
    ///
    /// > Important: Tracking starts with the first delivery. A change made on any thread requests an
    /// > update (delivered on the main thread). An updater that changes what it reads requests again
    /// > every cycle: mutate state elsewhere.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    @discardableResult
    public func onUpdate(tracking: Bool, _ closure: @escaping (_ animated: Bool) -> Void) -> ViewUpdater {
        guard tracking else { return onUpdate(closure) }
        let link = storage.link
        return onUpdate { animated in
            withObservationTracking {
                closure(animated)
            } onChange: {
                link.setNeedsUpdate(nil)
            }
        }
    }
}
#endif
