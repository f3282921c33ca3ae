/// A running ``ViewUpdatingContext/setNeedsUpdate(on:animated:)`` (an async sequence, or on Apple
/// platforms a Combine publisher): ``cancel()`` stops it.
///
/// The subscription runs until it is cancelled, its source finishes, or the context is released —
/// releasing this object does not stop it (unlike Combine's `AnyCancellable`); on Apple platforms
/// `store(in:)` ties it to a set of `AnyCancellable`s instead.
public final class UpdateSubscription: Sendable {
    private let runner: any LinkedRunner
    private let link: UpdateLink

    init(runner: any LinkedRunner, link: UpdateLink) {
        self.runner = runner
        self.link = link
    }

    /// Stops requesting updates. Idempotent, any thread.
    public func cancel() {
        runner.cancel()
    }

    /// Whether ``cancel()`` was called, or the context was released (whether or not the source had
    /// already finished). Any thread.
    public var isCancelled: Bool {
        runner.isCancelled || link.isCut
    }
}

extension ViewUpdatingContext {
    /// Requests an update every time `sequence` yields an element.
    ///
    /// The elements themselves are ignored: each is an event that makes the view out of date, such as
    /// a notification or a value stream. Requests coalesce like any other.
    ///
    /// ```swift
    /// let context = ViewUpdatingContext()
    /// let (changes, continuation) = AsyncStream.makeStream(of: Int.self)
    /// let subscription = context.setNeedsUpdate(on: changes)
    /// continuation.yield(1)     // from any thread: one coalesced request
    /// ```
    ///
    /// - Parameters:
    ///   - sequence: The sequence to follow (`Sendable`: `AsyncStream`, `Observations`, on Apple platforms
    ///     a center's `notifications(named:)`…). It is iterated on a task of its own, off the main thread.
    ///   - animated: The flag of each request.
    /// - Returns: A subscription whose ``UpdateSubscription/cancel()`` stops following the sequence.
    ///   It also ends by itself when the sequence finishes (or throws) and when this context is released.
    @discardableResult
    public func setNeedsUpdate<S: AsyncSequence & Sendable>(on sequence: S, animated: Bool? = nil) -> UpdateSubscription
    {
        let link = storage.link
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
        return UpdateSubscription(runner: task, link: link)
    }

    /// How many ``setNeedsUpdate(on:animated:)`` subscriptions are still running.
    public var runningSubscriptions: Int {
        storage.runningSubscriptions
    }
}
