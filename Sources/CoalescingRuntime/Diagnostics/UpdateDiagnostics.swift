import CCoalescingSupport
import Foundation

/// Why a view updated, and why it did not: the reports of every context, scheduler and coalescing queue.
///
/// Two kinds of report reach ``handler``:
///
/// - **Always on**, made where an event shows them — a request, a turn, a delivery, a release, a description
///   asked — and changing nothing about what is delivered (nothing polls; no timer):
///   - ``Report/Kind-swift.struct/updateLoop``: a context re-requested from inside its own delivery in 60
///     consecutive cycles (not on a frame-paced scheduler); once per context.
///   - ``Report/Kind-swift.struct/slowTurn``: a turn slower than a frame (16 ms), with the contexts it served; at
///     most once a second per scheduler.
///   - ``Report/Kind-swift.struct/slowUpdater``: a delivery outside a turn slower than a frame, naming its context.
///     A context is named at most once a second, by either slow report.
///   - ``Report/Kind-swift.struct/releasedWithPendingUpdate``: a context released with an update pending (saying
///     when it was suspended); once, as it goes.
///   - ``Report/Kind-swift.struct/unbalancedSuspend``: a request on a context suspended for more than a second;
///     once per context.
///   - ``Report/Kind-swift.struct/schedulerNotTurning``: a turn asked for more than a second ago that has not
///     begun, seen when a context is newly listed on the scheduler's thread, another thread requests, or a
///     description is asked; once per scheduler.
///   - ``Report/Kind-swift.struct/nothingConnected``: a `ViewUpdating` object's context requested and delivered
///     with no updater, `startUpdatingView()` never called (a view controller once its view is loaded); once
///     per context.
///   - ``Report/Kind-swift.struct/trackedChangeOffMainThread``: a change to an `@Observable` value a tracked
///     updater read, made off the main thread: in release builds the first per updater; in debug builds every
///     one, counted, at most once a second per updater.
///   - ``Report/Kind-swift.struct/writeBack``: a tracked updater changed a value it read while it ran; once per
///     updater.
///   - ``Report/Kind-swift.struct/unboundPropertiesPass``, ``Report/Kind-swift.struct/missedPropertiesPass``: an
///     update-properties context not bound to its view, or whose view's pass does not deliver (UIKit 26);
///     once per context.
///   - ``Report/Kind-swift.struct/misuse``: a call the package recovered from (an extra `resume()`, `update()` off
///     the main thread, a number out of range), each time.
/// - **While ``isRecording``**: one ``Report/Kind-swift.struct/delivery`` report per delivery, with the
///   context's label, the thread and call site of the first request it absorbed, how many requests it
///   absorbed, its flag or transaction, and how long its updaters took.
///
/// ```swift
/// import Foundation
/// import NotificationCoalescing
///
/// UpdateDiagnostics.isRecording = true          // while chasing a problem
/// UpdateDiagnostics.handler = { report in print(report) }
/// ```
///
/// > Important: Both properties may be read and set from any thread. The handler is called on the thread
/// > that made the report (the main thread for deliveries), never under one of the package's locks: it may
/// > call back into the package, and replacing it while reports are made elsewhere loses none of them (each
/// > report goes to the handler that was set when it was made).
public enum UpdateDiagnostics {
    /// Whether every delivery is reported (off by default). Cheap to leave off: a delivery then reads one
    /// byte. Any thread.
    public static var isRecording: Bool {
        get { cvu_diagnostics_is_recording() }
        set { cvu_diagnostics_set_recording(newValue) }
    }

    /// Where reports go. By default the unified log on Apple platforms (`os_log`, subsystem
    /// `NotificationCoalescing`, category `UpdateDiagnostics`), and standard error elsewhere. Any thread; see ``UpdateDiagnostics`` for when it is called.
    public static var handler: @Sendable (Report) -> Void {
        get { current.withLock { $0.box }.handler }
        set {
            // The old handler is released after the lock: its captures' deinits are the user's code (one
            // may own a context whose release reports, which reads the handler again).
            var box = HandlerBox(newValue)
            current.withLock { swap(&$0.box, &box) }
            _ = box
        }
    }

    /// Whether a misuse the package recovers from (an extra `resume()`, `update()` off the main thread, a
    /// number out of range) stops a debug build at the caller's line, as `assertionFailure` does — `true` by
    /// default — before it is reported (``Report/Kind-swift.struct/misuse``) and recovered from. Release builds
    /// never stop there. Set it to `false` in a test that checks what your code does after such a misuse (it
    /// then runs the release path, in any build). Any thread.
    public static var stopsAtMisuseInDebugBuilds: Bool {
        get { current.withLock { $0.stopsAtMisuse } }
        set { current.withLock { $0.stopsAtMisuse = newValue } }
    }

    /// The handler ``handler`` starts with: the unified log on Apple platforms, standard error elsewhere.
    public static let defaultHandler: @Sendable (Report) -> Void = { report in DefaultLog.write(report) }

    /// The handler, boxed: a closure stored in a generic container is re-abstracted on every read and
    /// write, and a handler read and set back (as a test's restoring its predecessor does) would grow a
    /// thunk around itself each time.
    private final class HandlerBox: Sendable {
        let handler: @Sendable (Report) -> Void
        init(_ handler: @escaping @Sendable (Report) -> Void) { self.handler = handler }
    }

    private struct State {
        var box = HandlerBox(defaultHandler)
        var stopsAtMisuse = true
    }

    private static let current = Locked(State())

    /// A frame: a turn or a delivery outside a turn slower than this is reported (`slowTurn`, `slowUpdater`).
    /// (A constant the other modules inline, not a stored `let` they reach through an accessor.)
    @inlinable
    package static var frameNanoseconds: UInt64 { 16_000_000 }

    /// A second: a scheduler reports a slow turn, and a slow report names a context, at most this often.
    package static var reportInterval: UInt64 { 1_000_000_000 }

    /// `nanoseconds` as milliseconds with three decimals, without `String(format:)` (slow on Linux).
    package static func milliseconds(_ nanoseconds: UInt64) -> String {
        let microseconds = nanoseconds / 1_000
        let fraction = String(microseconds % 1_000)
        return "\(microseconds / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// Hands `report` to the handler, outside every lock of the package (the caller holds none).
    package static func emit(_ report: Report) {
        let box = current.withLock { $0.box }
        box.handler(report)
    }

    /// Hands a report of `kind` about `label` to the handler (see ``emit(_:)``).
    package static func emit(
        _ kind: Report.Kind, label: String, message: String, callSite: Report.CallSite? = nil,
        duration: TimeInterval? = nil
    ) {
        emit(Report(kind: kind, label: label, message: message, callSite: callSite, duration: duration))
    }
}

extension UpdateDiagnostics {
    /// One report: what happened, to what (``label``), and what to do about it (``message``).
    ///
    /// Its `description` is one line that starts with the kind and the label, as the default handler
    /// writes it.
    public struct Report: Sendable, CustomStringConvertible {
        /// What a report is about.
        public struct Kind: Hashable, Sendable, CustomStringConvertible {
            /// The name, as `description` writes it ("delivery", "update loop", …).
            public let name: String

            /// While ``UpdateDiagnostics/isRecording``: one delivery.
            public static let delivery = Kind(name: "delivery")
            /// A context re-requested from inside its own delivery in 60 consecutive cycles.
            public static let updateLoop = Kind(name: "update loop")
            /// A delivery made outside a turn — `update()`, `updateIfNeeded()`, a first render, the rules' early
            /// flush or a scope's flush, made where no turn is under way — that took longer than a frame (16 ms),
            /// naming its context: its updaters' whole calls (a nested run loop, what their requests run, what
            /// goes when one removes itself) and nothing else. A delivery inside a turn is the turn's time
            /// (``slowTurn``). A context is named at most once a second, by this report or ``slowTurn``.
            public static let slowUpdater = Kind(name: "slow updater")
            /// A scheduler's turn that took longer than a frame (16 ms): how long, and the labels of the
            /// contexts (and queues) it served. Nothing in the turn is blamed: its time is all of theirs. At most
            /// one report a second per scheduler, and a context named at most once a second (by this report or
            /// ``slowUpdater``), so that a slow launch does not use the report up.
            public static let slowTurn = Kind(name: "slow turn")
            /// A context released while an update was pending: that update is never delivered (the report says
            /// when the context was suspended).
            public static let releasedWithPendingUpdate = Kind(name: "released with pending update")
            /// A request reached a context that has been suspended for more than a second: nothing is delivered
            /// until every `suspend()` has its `resume()`. Reported once per context, when a request shows it (a
            /// suspended context that nothing requests is described, not reported).
            public static let unbalancedSuspend = Kind(name: "suspended with pending update")
            /// A scheduler asked for a turn that has not begun for more than a second: noticed when a context is
            /// newly listed on its thread (every 16th listing), when another thread requests, or when a
            /// description is asked; reported once per scheduler. A turn that begins late after a hang is not
            /// reported.
            public static let schedulerNotTurning = Kind(name: "scheduler not turning")
            /// A `ViewUpdating` object's context was requested and delivered with no updater, and the object
            /// never called `startUpdatingView()` (a view controller is counted only once its view is loaded):
            /// `updateView(animated:)` is never called. Reported once per context.
            public static let nothingConnected = Kind(name: "nothing connected")
            /// An update-properties context that was never bound to its view, delivering from the main
            /// queue instead.
            public static let unboundPropertiesPass = Kind(name: "unbound update-properties pass")
            /// An update-properties context bound to a view in a window, delivered from the main queue because
            /// no pass delivered it: the view's `updateProperties()` does not call `updateViewIfNeeded()`.
            /// Reported once per context.
            public static let missedPropertiesPass = Kind(name: "missed update-properties pass")
            /// A call made where it is not allowed (off the main thread, an extra `resume()`), recovered
            /// from as documented.
            public static let misuse = Kind(name: "misuse")
            /// A change to an `@Observable` value that a tracked updater read, made off the main thread:
            /// Observation reports it before the value is stored, so a delivery may show the value before it
            /// and nothing tells the library when it is stored. Naming the updater and the fix (change it on the
            /// main actor, or request an update after the change): in release builds the first such change per
            /// updater; in debug builds every one, counted, at most once a second per updater.
            public static let trackedChangeOffMainThread = Kind(name: "tracked change off the main thread")
            /// A tracked updater changed an `@Observable` value it had read, while it ran (a write-back): it was
            /// delivered again to show the value. Reported once per updater, naming it; doing it every cycle is
            /// also an ``updateLoop``. Change state outside the updater: a write-back in its first delivery, or
            /// in one that a tracked change caused, is not heard (a stated limit of Observation).
            public static let writeBack = Kind(name: "write-back")

            public var description: String { name }
        }

        /// Where a request was made: `#fileID`, `#line`, and the thread.
        public struct CallSite: Hashable, Sendable, CustomStringConvertible {
            /// The caller's `#fileID`.
            public let file: String
            /// The caller's `#line`; 0 when the request came from the user's code through the library, with
            /// no line to name: then ``file`` says what it was (`@NeedsUpdate ProfileViewController.name`, a
            /// change to an `@Observable` value that a tracked updater read, …).
            public let line: UInt
            /// The thread: "main", the thread's name, or its number.
            public let thread: String

            public init(file: String, line: UInt, thread: String) {
                self.file = file
                self.line = line
                self.thread = thread
            }

            /// A call site on the calling thread.
            package init(file: StaticString, line: UInt) {
                self.init(file: "\(file)", line: line, thread: Self.currentThread)
            }

            /// A site with no line, on the calling thread: `what` says what it was.
            package static func named(_ what: String) -> CallSite {
                CallSite(file: what, line: 0, thread: currentThread)
            }

            /// The calling thread, as reports name it.
            package static var currentThread: String {
                if cvu_is_main_thread() { return "main" }
                if let name = Thread.current.name, !name.isEmpty { return name }
                return "thread \(cvu_thread_serial())"
            }

            public var description: String {
                line == 0 ? "\(file) (\(thread) thread)" : "\(file):\(line) (\(thread) thread)"
            }
        }

        /// What the report is about.
        public let kind: Kind
        /// The label of the context, scheduler or queue it is about.
        public let label: String
        /// What happened and, for a mistake, what to do instead: one sentence or two.
        public let message: String
        /// For a delivery, the first request it absorbed (`nil` when recording began after it was made);
        /// for an update loop, the request made from inside the delivery; for a misuse, the call.
        public let callSite: CallSite?
        /// For a delivery: how many requests it absorbed (on the main thread and from other threads).
        public let absorbedRequests: Int?
        /// For a delivery: the flag every updater got.
        public let animated: Bool?
        /// For a delivery carrying a transaction: the transaction, as its `description` writes it.
        public let transaction: String?
        /// For a delivery or a slow updater: how long the updaters took, in seconds (a monotonic clock).
        public let duration: TimeInterval?

        public init(
            kind: Kind, label: String, message: String, callSite: CallSite? = nil, absorbedRequests: Int? = nil,
            animated: Bool? = nil, transaction: String? = nil, duration: TimeInterval? = nil
        ) {
            self.kind = kind
            self.label = label
            self.message = message
            self.callSite = callSite
            self.absorbedRequests = absorbedRequests
            self.animated = animated
            self.transaction = transaction
            self.duration = duration
        }

        /// One line: the kind, the label, the message, the delivery's transaction (its animation and how
        /// many completions it carries) when it had one, and the call site.
        public var description: String {
            var text = "[\(kind)] \(label): \(message)"
            if let transaction { text += ", with \(transaction)" }
            if let callSite { text += " — at \(callSite)" }
            return text
        }
    }
}

/// The default handler's destination.
enum DefaultLog {
    static func write(_ report: UpdateDiagnostics.Report) {
        #if canImport(os)
        AppleLog.write(report)
        #else
        FileHandle.standardError.write(Data("UpdateDiagnostics: \(report)\n".utf8))
        #endif
    }
}
