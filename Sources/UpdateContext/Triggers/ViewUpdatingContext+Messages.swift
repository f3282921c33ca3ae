import Foundation
import NotificationCoalescing

// Foundation's typed messages exist with Swift 6.2's Foundation on Linux and in the Apple 26 SDKs (see
// NotificationCoalescing's TypedMessages.swift for why the SDK's Foundation version decides).
#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
extension ViewUpdatingContext {
    /// Starts a subscription that requests an update every time `center` posts a main-actor message of
    /// `messageType` (for `subject`, or for any subject when `nil`): with the transaction `transaction` makes
    /// of the message — the animation it calls for (a keyboard message's duration and curve:
    /// `UpdateAnimation/keyboard(_:)`), custom values, completions — or, without one (no closure, or it
    /// returns `nil`), a request with the flag `animated`.
    ///
    /// N messages in a cycle make one delivery, whose transaction merges theirs (the last animation wins). A
    /// message posted inside `withUpdateTransaction` (or `withUpdateAnimation`) carries that transaction:
    /// Foundation calls main-actor observers synchronously inside the post, where the scope is current; a
    /// transaction made of the message wins over the scope's, and the scope's completions wait for it too.
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// final class Inbox: Sendable {}
    ///
    /// struct UnreadChanged: NotificationCenter.MainActorMessage {
    ///     typealias Subject = Inbox
    ///     var unread: Int
    /// }
    ///
    /// let inbox = Inbox()
    /// let updateContext = ViewUpdatingContext()
    /// let subscription = updateContext.requestUpdates(on: UnreadChanged.self, of: inbox)
    /// let animated = updateContext.requestUpdates(on: UnreadChanged.self) { message in
    ///     message.unread > 0 ? UpdateTransaction(animation: .spring(duration: 0.3)) : nil
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - messageType: The message type.
    ///   - subject: Only messages posted for this subject (by identity); `nil` for every subject.
    ///   - center: The center to observe.
    ///   - animated: The flag of a request without a transaction.
    ///   - transaction: The transaction of a message's request, made on the main actor inside the post;
    ///     `nil` (or a closure that returns `nil`): a request with `animated`.
    ///   - file: The caller's file (`#fileID`): diagnostics name this creation site for the requests the
    ///     messages make.
    ///   - line: The caller's line.
    /// - Returns: The subscription: ``UpdateSubscription/cancel()`` or releasing it removes the observation
    ///   (no request follows, even for a post under way); it also ends when this context is released. Any
    ///   thread.
    public func requestUpdates<M: NotificationCenter.MainActorMessage>(
        on messageType: M.Type, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        animated: Bool? = nil, transaction: (@MainActor (M) -> UpdateTransaction?)? = nil,
        file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateSubscription where M.Subject: AnyObject {
        let storage = self.storage
        let site = RequestSite(file: file, line: line)
        return MessageTrigger.start(storage: storage, center: center, cancelsOnRelease: true) { trigger in
            center.addObserver(of: subject, for: messageType) { message in
                if trigger.isCancelled { return }
                if let request = transaction?(message) {
                    storage.requestFromOutside(request, site: site)
                } else {
                    storage.setNeedsUpdateFromOutside(animated, site: site)
                }
            }
        }
    }

    /// Starts a subscription that requests an update every time `center` posts an async message of
    /// `messageType` (for `subject`, or for any subject when `nil`), with the transaction `transaction` makes
    /// of it or, without one, the flag `animated`.
    ///
    /// Foundation calls async observers on tasks of their own, after the post: the requests coalesce as
    /// usual (N messages in a cycle, one delivery), but they do not see a `withUpdateTransaction` around
    /// the post: `animated` or `transaction` is how such a message's request animates.
    ///
    /// - Parameters:
    ///   - messageType: The message type.
    ///   - subject: Only messages posted for this subject (by identity); `nil` for every subject.
    ///   - center: The center to observe.
    ///   - animated: The flag of a request without a transaction.
    ///   - transaction: The transaction of a message's request, made on Foundation's task for the message;
    ///     `nil` (or a closure that returns `nil`): a request with `animated`.
    ///   - file: The caller's file (`#fileID`): diagnostics name this creation site for the requests the
    ///     messages make.
    ///   - line: The caller's line.
    /// - Returns: The subscription: ``UpdateSubscription/cancel()`` or releasing it removes the observation;
    ///   an observer call that begins after `cancel()` returned requests nothing, even from a task Foundation
    ///   started before it (a call already past that check on another thread may still make its one
    ///   request). It also ends when this context is released. Any thread.
    public func requestUpdates<M: NotificationCenter.AsyncMessage>(
        on messageType: M.Type, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        animated: Bool? = nil, transaction: (@Sendable (M) -> UpdateTransaction?)? = nil,
        file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateSubscription where M.Subject: AnyObject {
        let storage = self.storage
        let site = RequestSite(file: file, line: line)
        return MessageTrigger.start(storage: storage, center: center, cancelsOnRelease: true) { trigger in
            center.addObserver(of: subject, for: messageType) { message in
                if trigger.isCancelled { return }
                if let request = transaction?(message) {
                    storage.requestFromOutside(request, site: site)
                } else {
                    storage.setNeedsUpdateFromOutside(animated, site: site)
                }
            }
        }
    }

    // MARK: Foundation's identifier spelling

    /// `requestUpdates(on:of:center:animated:transaction:file:line:)` for a message named in Foundation's
    /// identifier spelling: `updateContext.requestUpdates(on: .keyboardWillShow)`. Where the SDK declares the
    /// identifier for more than one message type, name the subject or pass the type (see
    /// `refreshes(on:of:center:)`).
    public func requestUpdates<
        Identifier: NotificationCenter.MessageIdentifier, M: NotificationCenter.MainActorMessage
    >(
        on identifier: Identifier, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        animated: Bool? = nil, transaction: (@MainActor (M) -> UpdateTransaction?)? = nil,
        file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateSubscription where Identifier.MessageType == M, M.Subject: AnyObject {
        requestUpdates(
            on: M.self, of: subject, center: center, animated: animated, transaction: transaction, file: file,
            line: line)
    }

    /// The async-message form of `requestUpdates(on:of:center:animated:transaction:file:line:)` in
    /// Foundation's identifier spelling.
    public func requestUpdates<Identifier: NotificationCenter.MessageIdentifier, M: NotificationCenter.AsyncMessage>(
        on identifier: Identifier, of subject: M.Subject? = nil, center: NotificationCenter = .default,
        animated: Bool? = nil, transaction: (@Sendable (M) -> UpdateTransaction?)? = nil,
        file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateSubscription where Identifier.MessageType == M, M.Subject: AnyObject {
        requestUpdates(
            on: M.self, of: subject, center: center, animated: animated, transaction: transaction, file: file,
            line: line)
    }

    /// `refreshes(on:of:center:)` for a lifecycle message named in Foundation's identifier
    /// spelling: `updateContext.refreshes(on: .willEnterForeground, of: UIApplication.shared)`.
    ///
    /// Name the subject: iOS 26's SDK declares `.willEnterForeground` for UIKit's `UIApplication` and `UIScene`
    /// messages and Foundation's `NSExtensionContext` one, and `.didBecomeActive` for two, so without `of:`
    /// the identifier is ambiguous (a compile error). Or pass the type:
    /// `updateContext.refreshes(on: UIApplication.WillEnterForegroundMessage.self)`.
    @discardableResult
    public func refreshes<Identifier: NotificationCenter.MessageIdentifier, M: NotificationCenter.MainActorMessage>(
        on identifier: Identifier, of subject: M.Subject? = nil, center: NotificationCenter = .default
    ) -> UpdateSubscription where Identifier.MessageType == M, M.Subject: AnyObject {
        refreshes(on: M.self, of: subject, center: center)
    }

    /// Makes this context refresh on a main-actor lifecycle message, as it does on the names of its
    /// `refreshEvents`: a synchronous ``update(animated:file:line:)`` inside the post, on the main thread.
    ///
    /// With UIKit 26, `UIApplication.WillEnterForegroundMessage` is the typed face of
    /// `UIApplication.willEnterForegroundNotification`, which the context already refreshes on by default. On
    /// a context that already refreshes on a message's notification name on `center` (its `refreshEvents`),
    /// this adds nothing: Foundation delivers the message to that notification's observers, and the context
    /// refreshes once per event, not twice.
    ///
    /// ```swift
    /// import UIKit
    /// import UpdateContext
    ///
    /// @available(iOS 26, *)
    /// final class FeedViewController: UIViewController, ViewUpdating {
    ///     let updateContext = ViewUpdatingContext(refreshEvents: [])
    ///
    ///     override func viewDidLoad() {
    ///         super.viewDidLoad()
    ///         updateContext.refreshes(on: UIApplication.WillEnterForegroundMessage.self)
    ///         startUpdatingView()
    ///     }
    ///
    ///     func updateView(animated: Bool) {}
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - messageType: The lifecycle message type.
    ///   - subject: Only messages posted for this subject (by identity); `nil` for every subject.
    ///   - center: The center to observe.
    /// - Returns: A subscription that lasts as long as the context (releasing it does not end it);
    ///   ``UpdateSubscription/cancel()`` ends it earlier. Any thread.
    @discardableResult
    public func refreshes<M: NotificationCenter.MainActorMessage>(
        on messageType: M.Type, of subject: M.Subject? = nil, center: NotificationCenter = .default
    ) -> UpdateSubscription where M.Subject: AnyObject {
        let storage = self.storage
        #if canImport(Darwin)
        // (Only Darwin's Foundation makes a message's notification name public.) The refresh events observe
        // every sender: they cover a message for one subject too.
        if RefreshHub.covers(storage, name: M.name, center: center) {
            return coveredRefresh(storage: storage)
        }
        #endif
        return MessageTrigger.start(storage: storage, center: center, cancelsOnRelease: false) { trigger in
            center.addObserver(of: subject, for: messageType) { _ in
                if trigger.isCancelled { return }
                storage.refresh()
            }
        }
    }

    /// The subscription of a `refreshes(on:)` that the context's refresh events already cover: it observes
    /// nothing, and lasts (counted by `runningSubscriptions`) as long as the context or until cancelled.
    func coveredRefresh(storage: UpdateStorage) -> UpdateSubscription {
        let runner = CoveredRefresh(storage: storage)
        storage.subscriptions.register(runner, key: runner.key)
        return UpdateSubscription(runner: runner, storage: storage, cancelsOnRelease: false)
    }
}

/// A refresh that the context's own refresh events already make: nothing to observe (see
/// `coveredRefresh(storage:)`).
final class CoveredRefresh: LinkedRunner, Sendable {
    private let cancelled = Locked(false)
    private let storage: UpdateStorage
    let key: UInt64

    init(storage: UpdateStorage) {
        self.storage = storage
        key = storage.subscriptions.reserveKey()
    }

    var isCancelled: Bool { cancelled.withLock { $0 } }

    func cancel() {
        let first = cancelled.withLock { cancelled -> Bool in
            defer { cancelled = true }
            return !cancelled
        }
        if first { storage.subscriptionFinished(key) }
    }
}

/// One typed-message observation that requests updates: the runner of an ``UpdateSubscription``.
/// Cancelling it (or cutting its storage) removes the observation; its observer checks ``isCancelled`` first,
/// so that no request follows a cancellation, even from an observer task Foundation started before it.
@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
final class MessageTrigger: LinkedRunner, Sendable {
    private struct State {
        var token: NotificationCenter.ObservationToken?
        var isCancelled = false
    }

    private let state = Locked(State())
    private let center: NotificationCenter
    private let storage: UpdateStorage
    private let key: UInt64

    private init(center: NotificationCenter, storage: UpdateStorage) {
        self.center = center
        self.storage = storage
        key = storage.subscriptions.reserveKey()
    }

    /// Observes with `observe` (given the trigger, whose cancellation the observer checks) and registers
    /// the trigger with `storage`, which cancels it when the context goes.
    static func start(
        storage: UpdateStorage, center: NotificationCenter, cancelsOnRelease: Bool,
        observe: (MessageTrigger) -> NotificationCenter.ObservationToken
    ) -> UpdateSubscription {
        let trigger = MessageTrigger(center: center, storage: storage)
        let token = observe(trigger)
        let removeNow = trigger.state.withLock { state -> Bool in
            if state.isCancelled { return true }
            state.token = token
            return false
        }
        if removeNow { center.removeObserver(token) }
        storage.subscriptions.register(trigger, key: trigger.key)
        return UpdateSubscription(runner: trigger, storage: storage, cancelsOnRelease: cancelsOnRelease)
    }

    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    func cancel() {
        let (first, token) = state.withLock { state -> (Bool, NotificationCenter.ObservationToken?) in
            if state.isCancelled { return (false, nil) }
            state.isCancelled = true
            defer { state.token = nil }
            return (true, state.token)
        }
        guard first else { return }
        // Outside the lock: removal releases the observer block (and what it captured).
        if let token { center.removeObserver(token) }
        storage.subscriptionFinished(key)
    }
}
#endif
