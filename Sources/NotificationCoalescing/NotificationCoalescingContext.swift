import Foundation

/// A coalescing notification queue: notifications enqueued during a cycle are merged and posted once,
/// at the end of the cycle, through this context's own `NotificationCenter`.
///
/// It follows `NotificationQueue.enqueue(_:postingStyle:coalesceMask:forModes:)`, so code can move
/// over from Foundation's queue, and fixes what that queue gets wrong on Linux: an enqueue costs O(1)
/// however many notifications are pending, pending notifications post in the order they were
/// enqueued, pure-Swift senders coalesce by identity, enqueueing from any thread is safe and never
/// loses a notification, enqueueing from a handler is delivered on a later turn, and a released
/// context frees everything it held.
///
/// ```swift
/// import Foundation
/// import NotificationCoalescing
///
/// extension Notification.Name { static let modelChanged = Notification.Name("modelChanged") }
/// func reload() {}
///
/// let queue = NotificationCoalescingContext()
/// queue.observe(.modelChanged) { _, note in reload() }
/// queue.enqueue(Notification(name: .modelChanged))   // many times per cycle…
/// // …one post, when the run loop is about to wait
/// ```
///
/// > Important: Notifications post, and handlers run, only on the thread of the context's
/// > ``scheduler`` (by default, the run loop of the thread that created the context). `enqueue` with
/// > `.asap` or `.whenIdle` may be called from any thread; `.now` posts synchronously and must be
/// > called on the scheduler's thread.
public final class NotificationCoalescingContext: Sendable {
    private let core: CoalescingCore
    private let registry: ObserverRegistry
    /// Keeps the scheduler alive for as long as the context; the core (which the scheduler holds while
    /// work is pending) does not, so releasing the context frees both at once.
    private let retainedScheduler: CoalescingScheduler
    /// The scheduler's ``CoalescingScheduler/isMainThreadScheduler``, read once: the inlined enqueue of a
    /// main-actor message checks it without touching the scheduler (a shared scheduler's reference count
    /// is contended, and often has a side table).
    @usableFromInline let schedulerIsMainThreads: Bool
    /// Where a context whose scheduler is not the main thread's holds its main-actor messages (made on the
    /// first one): a core of its own on ``CoalescingScheduler/dispatchMain``, posting through the same center
    /// on the main actor.
    private let mainActorLane = Locked<CoalescingCore?>(nil)

    /// The center notifications are posted through; observe it with the `observe` methods of this context.
    public var center: NotificationCenter { core.center }

    /// The scheduler whose turns post pending notifications.
    public var scheduler: CoalescingScheduler { retainedScheduler }

    /// What diagnostics call this context: the label given to the initialiser, or where it was created
    /// (`MyModule/File.swift:12`, the `#fileID`). Any thread.
    public var label: String { core.label.string }

    /// Creates a context posting through `center` at the turns of the calling thread's run loop: the
    /// seed's initialiser, kept for references to it by name (`NotificationCoalescingContext.init(center:)`).
    /// A call such as `NotificationCoalescingContext(center: center)` uses
    /// ``init(label:center:scheduler:file:line:)``, whose default label is the call site; this one's is
    /// "NotificationCoalescingContext".
    ///
    /// - Parameter center: The center to post through. A fresh one by default.
    @_disfavoredOverload
    public convenience init(center: NotificationCenter = NotificationCenter()) {
        self.init(label: "NotificationCoalescingContext", center: center, scheduler: .currentRunLoop)
    }

    /// Creates a context posting through `center` at the turns of `scheduler` (by default, of the
    /// calling thread's run loop).
    ///
    /// ```swift
    /// import Foundation
    /// import NotificationCoalescing
    ///
    /// let queue = NotificationCoalescingContext(label: "inbox badge")
    /// ```
    ///
    /// - Parameters:
    ///   - label: What diagnostics call it (``label``); by default the creation site, `#fileID:#line`.
    ///   - center: The center to post through. A fresh one by default, so that only this context's
    ///     observers see its notifications.
    ///   - scheduler: When to post. By default the run loop of the calling thread
    ///     (``CoalescingScheduler/currentRunLoop``); ``CoalescingScheduler/dispatchMain`` for programs without
    ///     a turning run loop; a ``ManualScheduler`` in tests.
    ///   - file: The creation site's file (`#fileID`): the default label.
    ///   - line: The creation site's line: the default label.
    public init(
        label: String? = nil, center: NotificationCenter = NotificationCenter(),
        scheduler: CoalescingScheduler = .currentRunLoop, file: StaticString = #fileID, line: UInt = #line
    ) {
        core = CoalescingCore(
            label: DiagnosticLabel(label, file: file, line: line), center: center, scheduler: scheduler)
        registry = ObserverRegistry(center: center)
        retainedScheduler = scheduler
        schedulerIsMainThreads = scheduler.isMainThreadScheduler
    }

    deinit {
        core.cancel()
        mainActorLane.withLock { $0 }?.cancel()
        registry.removeAll()
    }

    /// Posts `notification` now, or holds it for the end of the cycle, coalescing it with pending ones.
    ///
    /// - Parameters:
    ///   - notification: The notification. Its `object` is the sender, matched by identity (for any
    ///     class); a value-type sender has no identity and never matches on sender.
    ///   - postingStyle: `.now` posts synchronously, after removing pending notifications that match it;
    ///     it is itself never coalesced, and it is dropped when the scheduler's loop is running in a mode
    ///     not in `forModes` (outside a running loop it posts). `.asap` holds it until the next turn;
    ///     `.whenIdle` holds it until the next turn too, and posts after that turn's `.asap` ones.
    ///   - coalesceMask: Which pending notifications the new one replaces: those with the same name
    ///     (`.onName`), the same sender (`.onSender`), or both. The newest wins and takes its place at the
    ///     end of the queue. An empty mask coalesces nothing.
    ///   - forModes: The run-loop modes it may post in; `nil` means the default mode. `.common` stands for
    ///     every common mode.
    ///
    /// > Important: `.asap` and `.whenIdle` are safe from any thread and from inside a handler (the
    /// > notification posts on a later turn, never re-entrantly: a nested run loop inside one of this context's
    /// > handlers does not post it before the rest of the batch, so a handler that waits there for it waits
    /// > until it returns). `.now` must be called on the scheduler's thread: that is where handlers run.
    public func enqueue(
        _ notification: Notification,
        postingStyle: NotificationQueue.PostingStyle = .asap,
        coalesceMask: NotificationQueue.NotificationCoalescing = [.onName, .onSender],
        forModes: [RunLoop.Mode]? = nil
    ) {
        let modes = forModes ?? CoalescingCore.defaultModes
        switch postingStyle {
        case .now:
            if !core.scheduler.isCurrent {
                fatalError(
                    "NotificationCoalescingContext.enqueue(postingStyle: .now) called off its scheduler's thread; "
                        + "handlers run only there. Use .asap from other threads.")
            }
            core.removeMatching(notification, mask: coalesceMask)
            if let mode = core.scheduler.currentMode {
                let turn = SchedulerTurn(
                    mode: mode, isCommonMode: core.scheduler.isCommon(mode), serial: 0)
                guard turn.admits(modes) else { return }
            }
            core.center.post(notification)
        case .whenIdle:
            core.hold(notification, style: .whenIdle, mask: coalesceMask, modes: modes)
        default:
            core.hold(notification, style: .asap, mask: coalesceMask, modes: modes)
        }
    }

    /// Enqueues a typed value; the same rules as ``enqueue(_:postingStyle:coalesceMask:forModes:)``.
    ///
    /// ```swift
    /// import Foundation
    /// import NotificationCoalescing
    ///
    /// struct ScoreChanged: ObservableNotification { var score: Int }
    ///
    /// let queue = NotificationCoalescingContext()
    /// queue.enqueue(ScoreChanged(score: 3))
    /// ```
    public func enqueue<N: ObservableNotification>(
        _ value: N,
        object: AnyObject? = nil,
        postingStyle: NotificationQueue.PostingStyle = .asap,
        coalesceMask: NotificationQueue.NotificationCoalescing = [.onName, .onSender],
        forModes: [RunLoop.Mode]? = nil
    ) {
        enqueue(
            value.notification(object: object), postingStyle: postingStyle, coalesceMask: coalesceMask,
            forModes: forModes)
    }

    /// Holds a main-actor message for the main actor's next cycle (see `enqueue(_:subject:)`), when this
    /// context's scheduler is not the main thread's. `post` comes back holding what it replaced.
    @usableFromInline
    func enqueueOnMainActorLane(_ post: inout any MessagePosting, key: MessageKey, subject: AnyObject?) {
        let lane = mainActorLane.withLock { lane -> CoalescingCore in
            if let lane { return lane }
            let made = CoalescingCore(
                label: DiagnosticLabel("\(core.label.string) (main-actor messages)", file: #fileID, line: #line),
                center: core.center, scheduler: .dispatchMain)
            lane = made
            return made
        }
        lane.hold(message: &post, key: key, subject: subject)
    }

    /// The registrations of the `observe` methods (the typed-message forms live in another file).
    var observerRegistry: ObserverRegistry { registry }

    /// Holds a typed message for a later turn (see `enqueue(_:subject:)`, inlined into its caller, which
    /// calls this). `post` comes back holding what it replaced (or a copy of itself), which the caller
    /// releases: outside every lock.
    @usableFromInline
    func enqueueHeld(_ post: inout any MessagePosting, key: MessageKey, subject: AnyObject?) {
        core.hold(message: &post, key: key, subject: subject)
    }

    /// How many notifications (and typed messages) are held for a later turn.
    public var pendingCount: Int {
        core.pendingCount + (mainActorLane.withLock { $0 }?.pendingCount ?? 0)
    }

    /// Observes notifications named `name` posted through this context's center.
    ///
    /// The handler runs on the scheduler's thread for notifications this context posts.
    @discardableResult
    public func observe(
        _ name: Notification.Name,
        object: AnyObject? = nil,
        _ handler: @escaping (NotificationObserver, Notification) -> Void
    ) -> NotificationObserver {
        registry.observe(name, object: object, handler)
    }

    /// Observes a typed notification posted through this context's center; the handler gets the value.
    @discardableResult
    public func observe<N: ObservableNotification>(
        _ type: N.Type = N.self,
        object: AnyObject? = nil,
        _ handler: @escaping (NotificationObserver, N) -> Void
    ) -> NotificationObserver {
        registry.observe(type, object: object, handler)
    }

    /// Removes every observation made through this context. Pending notifications stay pending.
    public func removeObservers() {
        registry.removeAll()
    }
}

extension NotificationCoalescingContext: CustomDebugStringConvertible {
    /// The context as a person chasing a missing notification wants it: its label, its scheduler, and the
    /// notifications it holds, by name in posting order, with the modes they wait for. Any thread.
    public var debugDescription: String {
        let (names, modes) = core.pendingSummary
        var text = "NotificationCoalescingContext \"\(label)\" on \(type(of: scheduler)) \"\(scheduler.label)\": "
        if names.isEmpty {
            text += "nothing pending"
        } else {
            text +=
                "\(names.count) pending (\(names.map(\.rawValue).joined(separator: ", "))), waiting for a turn in "
                + modes.map(\.rawValue).joined(separator: " or ")
        }
        return text
    }
}
