/// A running ``ViewUpdatingContext/setNeedsUpdate(on:animated:)``: ``cancel()`` stops it.
public final class UpdateSubscription: Sendable {
    private let task: Task<Void, Never>?

    init(task: Task<Void, Never>?) {
        self.task = task
    }

    /// Stops requesting updates. Idempotent, any thread.
    public func cancel() {
        task?.cancel()
    }

    /// Whether ``cancel()`` was called, or the context was released.
    public var isCancelled: Bool {
        task?.isCancelled ?? true
    }
}

extension ViewUpdatingContext {
    /// Requests an update every time `sequence` yields an element.
    ///
    /// The elements themselves are ignored: each is an event that makes the view out of date, such as
    /// a notification or a value stream. Requests coalesce like any other.
    ///
    /// ```swift
    /// let subscription = context.setNeedsUpdate(on: NotificationCenter.default.notifications(named: .modelDidChange))
    /// ```
    ///
    /// - Parameters:
    ///   - sequence: The sequence to follow (`Sendable`: `AsyncStream`, `Observations`, a center's
    ///     `notifications(named:)`…). It is iterated on a task of its own, off the main thread.
    ///   - animated: The flag of each request.
    /// - Returns: A subscription whose ``UpdateSubscription/cancel()`` stops following the sequence.
    ///   It also ends by itself when the sequence finishes (or throws) and when this context is released.
    @discardableResult
    public func setNeedsUpdate<S: AsyncSequence & Sendable>(on sequence: S, animated: Bool? = nil) -> UpdateSubscription
    {
        let link = core.link
        let key = link.reserveKey()
        let task = Task.detached {
            defer { link.finished(key) }
            do {
                for try await _ in sequence {
                    if Task.isCancelled || link.isCut { return }
                    link.setNeedsUpdate(animated)
                }
            } catch {
                // A sequence that throws ends the subscription, like one that finishes.
            }
        }
        link.register(task, key: key)
        return UpdateSubscription(task: task)
    }

    /// How many ``setNeedsUpdate(on:animated:)`` subscriptions are still running.
    public var runningSubscriptions: Int {
        core.runningSubscriptions
    }
}
