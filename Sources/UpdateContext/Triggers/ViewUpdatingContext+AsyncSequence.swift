/// A running ``ViewUpdatingContext/requestUpdates(from:animated:file:line:)`` (an async sequence, or on Apple
/// platforms a Combine publisher): ``cancel()`` stops it, and so does releasing it.
///
/// It behaves like Combine's `AnyCancellable` wherever it is stored: kept in a property, it runs as long
/// as its holder; put in a `Set<AnyCancellable>` with `store(in:)`, as long as the set. It also ends by
/// itself when its source finishes and when the context is released. The compiler warns when the result
/// of `requestUpdates(from:)` is not kept: a subscription nobody holds stops at once.
public final class UpdateSubscription: Sendable {
    private let runner: any LinkedRunner
    private let storage: UpdateStorage
    /// `false` only for `refreshes(on:)`, which lasts as long as the context, kept or not.
    private let cancelsOnRelease: Bool

    package init(runner: any LinkedRunner, storage: UpdateStorage, cancelsOnRelease: Bool = true) {
        self.runner = runner
        self.storage = storage
        self.cancelsOnRelease = cancelsOnRelease
    }

    deinit {
        if cancelsOnRelease { runner.cancel() }
    }

    /// Stops requesting updates. Idempotent, any thread.
    public func cancel() {
        runner.cancel()
    }

    /// Whether ``cancel()`` was called, or the context was released (whether or not the source had
    /// already finished). Any thread.
    public var isCancelled: Bool {
        runner.isCancelled || storage.isCancelled
    }
}

extension ViewUpdatingContext {
    /// Starts a subscription that requests an update every time `sequence` yields an element.
    ///
    /// The elements themselves are ignored: each is an event that makes the view out of date, such as
    /// a notification or a value stream. Requests coalesce like any other. Keep the subscription as long
    /// as the updates should follow the sequence: releasing it stops them, as with `AnyCancellable`.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let updateContext = ViewUpdatingContext()
    /// let (changes, continuation) = AsyncStream.makeStream(of: Int.self)
    /// let subscription = updateContext.requestUpdates(from: changes)
    /// continuation.yield(1)     // from any thread: one coalesced request
    /// subscription.cancel()     // or release it
    /// ```
    ///
    /// - Parameters:
    ///   - sequence: The sequence to follow (`Sendable`: `AsyncStream`, `Observations`, on Apple platforms
    ///     a center's `notifications(named:)`…). It is iterated on a task of its own, off the main thread.
    ///   - animated: The flag of each request.
    ///   - file: The caller's file (`#fileID`): diagnostics name this creation site for the requests the
    ///     sequence's elements make.
    ///   - line: The caller's line.
    /// - Returns: The subscription: ``UpdateSubscription/cancel()`` or releasing it stops following the
    ///   sequence. It also ends by itself when the sequence finishes (or throws) and when this context is
    ///   released. Any thread.
    public func requestUpdates<S: AsyncSequence & Sendable>(
        from sequence: S, animated: Bool? = nil, file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateSubscription {
        subscribe(to: sequence, animated: animated, site: RequestSite(file: file, line: line))
    }

    /// ``requestUpdates(from:animated:file:line:)`` whose requests each carry `transaction`: its animation, its values,
    /// and its completions, each called once per delivery that shows the requests of one or more elements,
    /// after that delivery (elements coalesced into one delivery call it once; an element that arrives while
    /// that delivery runs, or whose animated request flushes the earlier ones early, is shown — and calls
    /// it — by a delivery of its own). It is told ``UpdateCompletion/dropped(_:)`` when the context is
    /// released with an element's request pending. The elements are consumed on a task of their own, which
    /// does not see a `withUpdateTransaction` around the code that produced them: this is how a sequence's
    /// requests carry one.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let updateContext = ViewUpdatingContext()
    /// let (changes, continuation) = AsyncStream.makeStream(of: Int.self)
    /// let subscription = updateContext.requestUpdates(
    ///     from: changes, transaction: UpdateTransaction(animation: .easeOut(duration: 0.2)))
    /// continuation.yield(1)
    /// ```
    ///
    /// - Parameters:
    ///   - sequence: The sequence to follow (see ``requestUpdates(from:animated:file:line:)``).
    ///   - transaction: What each element's request carries.
    ///   - file: The caller's file (`#fileID`): diagnostics name this creation site for the requests the
    ///     sequence's elements make.
    ///   - line: The caller's line.
    public func requestUpdates<S: AsyncSequence & Sendable>(
        from sequence: S, transaction: UpdateTransaction, file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateSubscription {
        let renewable = transaction.withRenewableCompletions
        let site = RequestSite(file: file, line: line)
        return subscribe(to: sequence) { storage in
            storage.requestFromOutside(renewable, site: site)
        }
    }

    private func subscribe<S: AsyncSequence & Sendable>(
        to sequence: S, animated: Bool?, site: RequestSite
    ) -> UpdateSubscription {
        subscribe(to: sequence) { $0.setNeedsUpdateFromOutside(animated, site: site) }
    }

    /// Follows `sequence` on a task of its own: each element makes `request` on the storage, until the
    /// sequence ends, the subscription is cancelled or released, or the context goes.
    private func subscribe<S: AsyncSequence & Sendable>(
        to sequence: S, request: @escaping @Sendable (UpdateStorage) -> Void
    ) -> UpdateSubscription {
        let storage = self.storage
        let subscriptions = storage.subscriptions
        let key = subscriptions.reserveKey()
        let task = Task.detached {
            defer { storage.subscriptionFinished(key) }
            do {
                for try await _ in sequence {
                    if Task.isCancelled || storage.isCancelled { return }
                    request(storage)
                }
            } catch {
                // A sequence that throws ends the subscription, like one that finishes.
            }
        }
        subscriptions.register(task, key: key)
        return UpdateSubscription(runner: task, storage: storage)
    }

    /// How many of this context's ``UpdateSubscription``s are still running: those of
    /// `requestUpdates(from:)` (an async sequence; on Apple platforms a Combine publisher), of
    /// `requestUpdates(on:)` (a typed message) and of `refreshes(on:)`. A subscription stops counting when it
    /// is cancelled or released (not `refreshes(on:)`'s: it lasts as long as the context unless cancelled),
    /// when its sequence finishes or throws, and with the context, which counts none once it is gone. Any
    /// thread: a snapshot (a sequence's task may end right after).
    public var runningSubscriptions: Int {
        storage.face(Subscriptions.self)?.count ?? 0
    }
}
