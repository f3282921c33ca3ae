import Foundation

// Foundation's typed messages (`NotificationCenter.MainActorMessage`, `AsyncMessage`): Swift 6.2's
// Foundation on Linux; the iOS/macOS/tvOS/watchOS/visionOS 26 SDKs on Apple platforms. An older SDK (whose
// Foundation is 35xx, such as iPhoneOS 18.6 or MacOSX 15.5) has no such types, and a Swift 6.3 compiler reads
// either kind of SDK, so the SDK's Foundation version decides, not the compiler's.
#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))

/// Posts a held main-actor message with Foundation's `post(_:subject:)`, on the main actor. (Made by the
/// inlined `enqueue`, in the caller's module: `@usableFromInline`.)
@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
@usableFromInline
struct MainActorMessagePost<M: NotificationCenter.MainActorMessage>: MessagePosting where M.Subject: AnyObject {
    let message: M

    @usableFromInline
    init(message: sending M) {
        self.message = message
    }

    @usableFromInline
    func post(to center: NotificationCenter, subject: AnyObject?) {
        guard MainActorPlace.isCurrent else {
            Misuse.unrecoverable(
                "A NotificationCoalescingContext posts the main-actor message \(M.self) at a "
                    + "turn off the main thread: a MainActorMessage is posted on the main actor. Give the context "
                    + "the main thread's scheduler (.mainRunLoop, .dispatchMain), or create and turn its "
                    + "ManualScheduler on the main thread (in Swift Testing, mark the test @MainActor)",
                file: #fileID, line: #line)
        }
        // nonisolated(unsafe): the message was handed over with `sending` at the enqueue, and is held
        // until now, on the main thread, where `assumeIsolated` runs its body in place.
        nonisolated(unsafe) let message = message
        // The subject the message was enqueued with, of its type (the queue keeps it as `AnyObject`).
        nonisolated(unsafe) let subject = subject.map { unsafeDowncast($0, to: M.Subject.self) }
        MainActor.assumeIsolated {
            if let subject {
                center.post(message, subject: subject)
            } else {
                center.post(message)
            }
        }
    }

    @usableFromInline
    var typeName: String { String(reflecting: M.self) }
}

/// Posts a held async message with Foundation's `post(_:subject:)` (Foundation runs its observers on
/// tasks of their own).
@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
@usableFromInline
struct AsyncMessagePost<M: NotificationCenter.AsyncMessage>: MessagePosting where M.Subject: AnyObject {
    let message: M

    @usableFromInline
    init(message: M) {
        self.message = message
    }

    @usableFromInline
    func post(to center: NotificationCenter, subject: AnyObject?) {
        if let subject = subject.map({ unsafeDowncast($0, to: M.Subject.self) }) {
            center.post(message, subject: subject)
        } else {
            center.post(message)
        }
    }

    @usableFromInline
    var typeName: String { String(reflecting: M.self) }
}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
extension NotificationCoalescingContext {
    /// Holds a main-actor message for the end of the cycle, coalesced with the others of its type and subject.
    ///
    /// Any number of enqueues of one message type for one subject (by identity; `nil` is "no subject", a key
    /// of its own) in one cycle post **once**, at the end of the cycle, the latest message enqueued, with
    /// Foundation's own `post(_:subject:)` through ``center``. Observers registered with Foundation's
    /// `addObserver(of:for:using:)` therefore receive it coalesced, as do this context's
    /// `observe(_:of:_:)`.
    ///
    /// ```swift
    /// import Foundation
    /// import NotificationCoalescing
    ///
    /// final class Inbox: Sendable {}
    ///
    /// struct UnreadChanged: NotificationCenter.MainActorMessage {
    ///     typealias Subject = Inbox
    ///     var unread: Int
    /// }
    ///
    /// @MainActor func follow(_ inbox: Inbox) {
    ///     let queue = NotificationCoalescingContext(scheduler: .mainRunLoop)
    ///     let token = queue.center.addObserver(of: inbox, for: UnreadChanged.self) { message in
    ///         print(message.unread)    // once per cycle: 3
    ///     }
    ///     for unread in 1...3 { queue.enqueue(UnreadChanged(unread: unread), subject: inbox) }
    ///     _ = token
    /// }
    /// ```
    ///
    /// It posts at the next turn of the ``scheduler`` in the default mode, as an `.asap` notification does,
    /// in one first-in-first-out order with the notifications: a message's key takes its place at its first
    /// enqueue since the last turn, and a later message of the key replaces it *in that place* (unlike a
    /// notification, which moves to the end, as in Foundation's queue), so that an enqueue of a key already
    /// pending costs one lookup and a swap. Never re-entrantly: an enqueue from inside an observer posts at the
    /// next turn. A released context posts nothing and frees what it held. Memory follows what is held, one
    /// message per key, not how many enqueues there were; a replaced message is released at once (outside
    /// every lock: its deinit may use the context).
    ///
    /// - Parameters:
    ///   - message: The message, handed over to the turn that posts it (`sending`: it may be enqueued from
    ///     any thread, and the caller does not use it afterwards).
    ///   - subject: The subject it is posted for, and part of the coalescing key, by identity; `nil` posts it
    ///     with no subject (`post(_:)`), which observers of every subject receive.
    ///   - file: Unused (kept for the calls written for 0.2.0, where it named a refused enqueue).
    ///   - line: Unused.
    ///
    /// > Important: Any thread. The message is posted on the main actor. On a context whose scheduler is the
    /// > main thread's (``CoalescingScheduler/isMainThreadScheduler``) it posts at the scheduler's turn, in
    /// > the FIFO order above; on any other — a context made on a background thread takes that thread's run
    /// > loop by default — main-actor messages are held apart, coalesced the same way, and posted from the main
    /// > queue (``CoalescingScheduler/dispatchMain``), after the turn that follows their first enqueue there,
    /// > not in order with the context's notifications. A ``ManualScheduler`` must be turned on the main
    /// > thread: a turn on another thread that would post a main-actor message stops the program there, saying
    /// > so.
    // Inlinable: the caller's module knows the message's type, so an enqueue makes no runtime metadata
    // lookup (the target is a twentieth of a post).
    @inlinable
    public func enqueue<M: NotificationCenter.MainActorMessage>(
        _ message: sending M, subject: M.Subject? = nil, file: StaticString = #fileID, line: UInt = #line
    ) where M.Subject: AnyObject {
        var post: any MessagePosting = MainActorMessagePost(message: message)
        if schedulerIsMainThreads {
            enqueueHeld(&post, key: MessageKey(type: M.self, subject: subject), subject: subject)
        } else {
            enqueueOnMainActorLane(&post, key: MessageKey(type: M.self, subject: subject), subject: subject)
        }
    }

    /// Holds an async message for the end of the cycle, coalesced with the others of its type and subject:
    /// the same rules as `enqueue(_:subject:)`, on a context with any scheduler.
    ///
    /// ```swift
    /// import Foundation
    /// import NotificationCoalescing
    ///
    /// final class Library: Sendable {}
    ///
    /// struct CatalogChanged: NotificationCenter.AsyncMessage {
    ///     typealias Subject = Library
    ///     var count: Int
    /// }
    ///
    /// let library = Library()
    /// let queue = NotificationCoalescingContext()
    /// queue.observe(CatalogChanged.self, of: library) { message in print(message.count) }
    /// queue.enqueue(CatalogChanged(count: 1), subject: library)
    /// queue.enqueue(CatalogChanged(count: 2), subject: library)   // one post, at the end of the cycle: 2
    /// ```
    ///
    /// - Parameters:
    ///   - message: The message (`Sendable`, as every async message is).
    ///   - subject: The subject it is posted for, and part of the coalescing key, by identity; `nil` posts it
    ///     with no subject.
    ///   - file: Unused; for symmetry with the main-actor form, so that a call reads the same for both kinds.
    ///   - line: Unused.
    ///
    /// > Important: Any thread. The post happens at the turn, on the scheduler's thread; Foundation then
    /// > runs each observer on a task of its own.
    @inlinable
    public func enqueue<M: NotificationCenter.AsyncMessage>(
        _ message: M, subject: M.Subject? = nil, file: StaticString = #fileID, line: UInt = #line
    ) where M.Subject: AnyObject {
        var post: any MessagePosting = AsyncMessagePost(message: message)
        enqueueHeld(&post, key: MessageKey(type: M.self, subject: subject), subject: subject)
    }

    /// Observes a main-actor message posted through this context's ``center`` (the coalesced posts of
    /// `enqueue(_:subject:)`, and any other post there), owned by this context.
    ///
    /// - Parameters:
    ///   - messageType: The message type.
    ///   - subject: Only messages posted for this subject (by identity); `nil` for every subject.
    ///   - handler: Called on the main actor, synchronously inside each post.
    /// - Returns: The token: ``NotificationObserver/remove()`` ends this one observation, finally. The
    ///   context removes it too, with ``removeObservers()`` or when it goes.
    @discardableResult
    public func observe<M: NotificationCenter.MainActorMessage>(
        _ messageType: M.Type, of subject: M.Subject? = nil, _ handler: @escaping @MainActor (M) -> Void
    ) -> NotificationObserver where M.Subject: AnyObject {
        observerRegistry.observe(messageType, subject: subject, handler)
    }

    /// Observes an async message posted through this context's ``center``, owned by this context.
    ///
    /// - Parameters:
    ///   - messageType: The message type.
    ///   - subject: Only messages posted for this subject (by identity); `nil` for every subject.
    ///   - handler: Called after each post, on a task Foundation starts for it (any thread).
    /// - Returns: The token: ``NotificationObserver/remove()`` ends this one observation, finally (a call
    ///   Foundation has not started yet is never made). The context removes it too.
    @discardableResult
    public func observe<M: NotificationCenter.AsyncMessage>(
        _ messageType: M.Type, of subject: M.Subject? = nil, _ handler: @escaping @Sendable (M) -> Void
    ) -> NotificationObserver where M.Subject: AnyObject {
        observerRegistry.observe(messageType, subject: subject, handler)
    }
}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
extension NotificationObservingContext {
    /// Observes a main-actor message with Foundation's `addObserver(of:for:using:)`, owned by this context:
    /// removed with it, with ``removeObservers()``, or by the token's ``NotificationObserver/remove()``, which
    /// is final (see ``NotificationObserver``).
    ///
    /// ```swift
    /// import Foundation
    /// import NotificationCoalescing
    ///
    /// final class Inbox: Sendable {}
    ///
    /// struct UnreadChanged: NotificationCenter.MainActorMessage {
    ///     typealias Subject = Inbox
    ///     var unread: Int
    /// }
    ///
    /// final class BadgeController {
    ///     private let messages = NotificationObservingContext()
    ///     init(inbox: Inbox) {
    ///         messages.observe(UnreadChanged.self, of: inbox) { message in print(message.unread) }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - messageType: The message type.
    ///   - subject: Only messages posted for this subject (by identity); `nil` for every subject.
    ///   - handler: Called on the main actor, synchronously inside each post.
    /// - Returns: The token.
    ///
    /// > Important: `observe` may be called from any thread; the handler runs on the main actor.
    @discardableResult
    public func observe<M: NotificationCenter.MainActorMessage>(
        _ messageType: M.Type, of subject: M.Subject? = nil, _ handler: @escaping @MainActor (M) -> Void
    ) -> NotificationObserver where M.Subject: AnyObject {
        observerRegistry.observe(messageType, subject: subject, handler)
    }

    /// Observes an async message with Foundation's `addObserver(of:for:using:)`, owned by this context.
    ///
    /// - Parameters:
    ///   - messageType: The message type.
    ///   - subject: Only messages posted for this subject (by identity); `nil` for every subject.
    ///   - handler: Called after each post, on a task Foundation starts for it (any thread).
    /// - Returns: The token: its ``NotificationObserver/remove()`` is final (a call Foundation has not
    ///   started yet is never made).
    @discardableResult
    public func observe<M: NotificationCenter.AsyncMessage>(
        _ messageType: M.Type, of subject: M.Subject? = nil, _ handler: @escaping @Sendable (M) -> Void
    ) -> NotificationObserver where M.Subject: AnyObject {
        observerRegistry.observe(messageType, subject: subject, handler)
    }
}
#endif
