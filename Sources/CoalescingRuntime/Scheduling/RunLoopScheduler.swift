import CCoalescingSupport
import CoreFoundation
import Foundation

/// Delivers coalesced work when a thread's run loop turns.
///
/// A turn is the run loop about to wait (`BeforeWaiting`) or leaving a run (`Exit`): the end of
/// the current cycle, after everything the cycle handled. On Apple platforms this is also where
/// Core Animation commits, and the scheduler's observer runs before that commit.
///
/// Turns happen in the common modes — every mode that belongs to the run loop's common set, such as
/// UIKit's `UITrackingRunLoopMode` while the user scrolls — so work for `.common` is delivered during
/// scrolling as in the default mode. Work enqueued for another mode makes the scheduler observe that
/// mode too. Work scheduled from another thread wakes the run loop, so it is never lost.
///
/// Nothing is left waiting for an outside event: a guard observer at the end of the pass (after Core
/// Animation's commit, where `layoutSubviews` and `draw(_:)` run) wakes the loop when work that the pass's
/// mode admits is still waiting — asked for later in the pass, or around a nested run loop that used up
/// the wake-up — so the next pass delivers it. From the guard until the loop wakes, a request made on the
/// loop's thread wakes it itself: an observer of the same order added later, which runs after the guard,
/// is served too.
///
/// > Important: The thread must run its run loop. On Linux the main thread does under XCTest and in
/// > programs that call `RunLoop.main.run()`, but not under `dispatchMain()` or an `async` main: use
/// > ``DispatchMainScheduler`` there. A background thread's run loop with nothing but this observer
/// > counts as empty and returns at once; give it a timer or port.
public final class RunLoopScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: `runLoop` and the observers are CF objects whose APIs used here
    // (`CFRunLoopWakeUp`, `CFRunLoopAddObserver`, `CFRunLoopContainsObserver`) are thread-safe, written
    // once in `install()` before the scheduler is shared; `customModes` is behind a lock.
    private nonisolated(unsafe) let runLoop: CFRunLoop
    private let customModes = Locked<Set<RunLoop.Mode>>([])
    private nonisolated(unsafe) var commonObserver: CFRunLoopObserver?
    private nonisolated(unsafe) var customObserver: CFRunLoopObserver?
    private nonisolated(unsafe) var commonGuard: CFRunLoopObserver?
    private nonisolated(unsafe) var customGuard: CFRunLoopObserver?
    /// Whether the guard has run in the current pass of each run-loop level (the last element is the
    /// innermost, nested loops push one): a request made on the loop's thread from then until the loop
    /// sleeps comes after every check, so it wakes the loop itself. Touched only on the loop's thread (by
    /// the guard and by `requestTurn` there).
    private nonisolated(unsafe) var pastGuard: [Bool] = [false]
    /// A timer in the common modes, due now when a request comes after the guard: a wake-up alone can be
    /// used up by a nested loop in a private mode (run by a later observer), and the pass would then sleep;
    /// a due common-mode timer survives such a loop and keeps the pass from sleeping. Idle (fire date in
    /// the far future) otherwise. Written once in `install()`.
    private nonisolated(unsafe) var wakeTimer: CFRunLoopTimer?

    /// The main thread's run loop: ``CoalescingScheduler/mainRunLoop``.
    package static let mainScheduler = RunLoopScheduler(mainThread: ())

    /// The calling thread's run loop: ``CoalescingScheduler/currentRunLoop``.
    static var currentScheduler: RunLoopScheduler {
        if ThreadIdentity.isMainThread { return mainScheduler }
        let key = "NotificationCoalescing.RunLoopScheduler"
        if let existing = Thread.current.threadDictionary[key] as? RunLoopScheduler { return existing }
        let scheduler = RunLoopScheduler(currentThread: ())
        Thread.current.threadDictionary[key] = scheduler
        return scheduler
    }

    private init(mainThread: Void) {
        runLoop = CFRunLoopGetMain()
        super.init(
            label: DiagnosticLabel("main run loop", file: #fileID, line: #line), turnThread: .main)
        install()
    }

    private init(currentThread: Void) {
        runLoop = CFRunLoopGetCurrent()
        let thread = Thread.current.name.flatMap { $0.isEmpty ? nil : $0 } ?? "thread \(cvu_thread_serial())"
        super.init(
            label: DiagnosticLabel("run loop of \(thread)", file: #fileID, line: #line), turnThread: .creator)
        install()
    }

    /// Order of the turn observer among others on the same activity: before Core Animation's commit
    /// (2 000 000), so that views updated here are drawn in this frame.
    private static let observerOrder: CFIndex = 1_000
    /// Order of the guard: after every other observer of the pass, just before the thread sleeps.
    private static let guardOrder: CFIndex = CFIndex.max

    private func makeObserver(common: Bool) -> CFRunLoopObserver {
        let activities = CFRunLoopActivity([.beforeWaiting, .exit]).rawValue
        // Weak: the run loop holds the observer, and a strong capture would keep the scheduler (and its
        // thread's run loop) alive forever. `deinit` invalidates the observers, possibly on another thread
        // while a callout is under way here: weak, not unowned, so that such a callout finds nil.
        return CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, activities, true, Self.observerOrder) {
            [weak self] _, _ in
            guard let self else { return }
            let mode = RunLoop.current.currentMode
            runTurn(mode: mode, isCommonMode: common || mode.map(isCommon) ?? true)
        }
    }

    /// The liveness guard: at the end of the pass, just before the thread sleeps. Work asked for after the
    /// turn observer ran in this pass — by a later observer (Core Animation's commit, where `layoutSubviews`
    /// runs), inside a turn whose nested run loop used up the wake-up, or parked by a nested loop in another
    /// mode while this pass's turn was under way — would otherwise wait for an unrelated event. The guard
    /// wakes the loop, so the next pass turns at once.
    ///
    /// Its order, `CFIndex.max`, makes it last only among the observers added before it: one added later
    /// at the same order runs after it. So the guard also marks the pass as past it (``pastGuard``) until
    /// the loop wakes or the run ends, and a request made meanwhile on this thread wakes the loop itself.
    private func makeGuard() -> CFRunLoopObserver {
        let activities = CFRunLoopActivity([.entry, .beforeWaiting, .afterWaiting, .exit]).rawValue
        return CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, activities, true, Self.guardOrder) {
            [weak self] _, activity in
            guard let self else { return }
            switch activity {
            case .entry:
                pastGuard.append(false)  // a nested run begins
            case .afterWaiting:
                pastGuard[pastGuard.count - 1] = false
            case .exit:
                // Back in the level that ran the nested loop, where nothing says how far its pass got.
                if pastGuard.count > 1 { pastGuard.removeLast() }
            default:
                // Inside a turn (a nested loop run by a handler) the outer pass will get here after the turn.
                guard !isInsideTurn else { return }
                pastGuard[pastGuard.count - 1] = true
                // Parked work that this pass's mode admits is possible: a nested loop in another mode,
                // run by an updater during this pass's turn, parked it after the turn had taken its list.
                if hasWork(admittedBy: RunLoop.current.currentMode) {
                    CFRunLoopWakeUp(runLoop)
                }
            }
        }
    }

    private func install() {
        let common = makeObserver(common: true)
        let guardObserver = makeGuard()
        commonObserver = common
        commonGuard = guardObserver
        customObserver = makeObserver(common: false)
        customGuard = makeGuard()
        CFRunLoopAddObserver(runLoop, common, commonModesName)
        CFRunLoopAddObserver(runLoop, guardObserver, commonModesName)
        // Repeating with an interval of years, so that it stays valid after firing, idle until re-armed.
        let timer = CFRunLoopTimerCreateWithHandler(
            kCFAllocatorDefault, .greatestFiniteMagnitude, 1e9, 0, 0
        ) { _ in }
        wakeTimer = timer
        CFRunLoopAddTimer(runLoop, timer, commonModesName)
    }

    deinit {
        for observer in [commonObserver, customObserver, commonGuard, customGuard] {
            if let observer { CFRunLoopObserverInvalidate(observer) }
        }
        if let wakeTimer { CFRunLoopTimerInvalidate(wakeTimer) }
    }

    /// Whether `mode` belongs to the run loop's common modes (or is `.common` itself).
    ///
    /// Asked of the run loop itself: the common-mode observer is in exactly the common modes, including
    /// modes added to the common set later (`CFRunLoopAddCommonMode`), as UIKit does with its tracking mode.
    public override func isCommon(_ mode: RunLoop.Mode) -> Bool {
        if mode == .common || mode == .default { return true }
        guard let commonObserver else { return false }
        return CFRunLoopContainsObserver(runLoop, commonObserver, runLoopModeName(mode))
    }

    public override var currentMode: RunLoop.Mode? {
        isCurrent ? RunLoop.current.currentMode : nil
    }

    /// Adds the scheduler's observers to the modes in `modes` it does not turn in yet.
    ///
    /// The observers are added under the lock that records the modes: a concurrent caller asking for the
    /// same new mode returns only once the observers are in it, so its work cannot be scheduled into a
    /// mode that no observer turns yet.
    public override func prepare(modes: [RunLoop.Mode]) {
        customModes.insertNewCustomModes(modes) { mode in
            let name = runLoopModeName(mode)
            CFRunLoopAddObserver(runLoop, customObserver, name)
            CFRunLoopAddObserver(runLoop, customGuard, name)
        }
    }

    public override func requestTurn(insideTurn: Bool) {
        // On its own thread, outside a turn, the loop is busy running the caller: it reaches the turn
        // observer by itself, or, when the request comes later in the pass, the guard wakes it — unless
        // the guard has already run in this pass. Elsewhere, or when a turn is under way, make sure it
        // does not sleep.
        if insideTurn || !isCurrent {
            CFRunLoopWakeUp(runLoop)
        } else if pastGuard[pastGuard.count - 1], let wakeTimer {
            CFRunLoopTimerSetNextFireDate(wakeTimer, CFAbsoluteTimeGetCurrent())
            CFRunLoopWakeUp(runLoop)
        }
    }
}

extension Locked where Value == Set<RunLoop.Mode> {
    /// Records the modes of `modes` that are neither `.common` nor `.default` and not recorded yet, calls
    /// `add` for each of them while still holding the lock (`add` must not call out to user code), and
    /// returns them: the modes a scheduler must start turning in.
    @discardableResult
    package func insertNewCustomModes(_ modes: [RunLoop.Mode], add: (RunLoop.Mode) -> Void = { _ in }) -> [RunLoop.Mode]
    {
        withLock { known in
            let new = modes.filter { $0 != .common && $0 != .default && !known.contains($0) }
            known.formUnion(new)
            for mode in new { add(mode) }
            return new
        }
    }
}
