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
/// > Important: The thread must run its run loop. On Linux the main thread does under XCTest and in
/// > programs that call `RunLoop.main.run()`, but not under `dispatchMain()` or an `async` main: use
/// > ``DispatchMainScheduler`` there. A background thread's run loop with nothing but this observer
/// > counts as empty and returns at once; give it a timer or port.
public final class RunLoopScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: `runLoop` and the observer are CF objects whose APIs used here
    // (`CFRunLoopWakeUp`, `CFRunLoopAddObserver`) are thread-safe; `modes` is behind a lock.
    private nonisolated(unsafe) let runLoop: CFRunLoop
    private let observesMainThread: Bool
    private let customModes = Locked<Set<RunLoop.Mode>>([])
    private nonisolated(unsafe) var commonObserver: CFRunLoopObserver?
    private nonisolated(unsafe) var customObserver: CFRunLoopObserver?

    /// The main thread's run loop.
    public static let main = RunLoopScheduler(mainThread: ())

    /// The calling thread's run loop (one scheduler per thread, created on first use and kept in the
    /// thread's dictionary, so it goes with the thread once no context uses it).
    public static var current: RunLoopScheduler {
        if ThreadIdentity.isMainThread { return main }
        let key = "NotificationCoalescing.RunLoopScheduler"
        if let existing = Thread.current.threadDictionary[key] as? RunLoopScheduler { return existing }
        let scheduler = RunLoopScheduler(currentThread: ())
        Thread.current.threadDictionary[key] = scheduler
        return scheduler
    }

    private init(mainThread: Void) {
        runLoop = CFRunLoopGetMain()
        observesMainThread = true
        super.init()
        install()
    }

    private init(currentThread: Void) {
        runLoop = CFRunLoopGetCurrent()
        observesMainThread = false
        super.init()
        install()
    }

    /// Order of the observer among others on the same activity: before Core Animation's commit (2 000 000).
    private static let observerOrder: CFIndex = 1_000

    private func makeObserver(common: Bool) -> CFRunLoopObserver {
        let activities = CFRunLoopActivity([.beforeWaiting, .exit]).rawValue
        // Unowned: the run loop holds the observer, and a strong capture would keep the scheduler (and
        // its thread's run loop) alive forever. `deinit` invalidates the observers before `self` goes.
        return CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, activities, true, Self.observerOrder) {
            [unowned self] _, _ in
            let mode = RunLoop.current.currentMode
            runTurn(mode: mode, isCommonMode: common || mode.map(isCommon) ?? true)
        }
    }

    private func install() {
        let common = makeObserver(common: true)
        commonObserver = common
        customObserver = makeObserver(common: false)
        CFRunLoopAddObserver(runLoop, common, commonModesName)
    }

    deinit {
        if let commonObserver { CFRunLoopObserverInvalidate(commonObserver) }
        if let customObserver { CFRunLoopObserverInvalidate(customObserver) }
    }

    public override var isCurrent: Bool {
        // A background thread's scheduler is created on that thread: the base class's owner is it.
        observesMainThread ? ThreadIdentity.isMainThread : super.isCurrent
    }

    /// `true` for ``main``: its turns are the main thread's cycles.
    public override var isMainThreadScheduler: Bool { observesMainThread }

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

    public override func prepare(modes: [RunLoop.Mode]) {
        for mode in customModes.insertNewCustomModes(modes) {
            CFRunLoopAddObserver(runLoop, customObserver, runLoopModeName(mode))
        }
    }

    public override func requestTurn(insideTurn: Bool) {
        // On its own thread, outside a turn, the loop is busy running the caller and will reach
        // BeforeWaiting by itself. Elsewhere, or when a turn is under way, make sure it does not sleep.
        if insideTurn || !isCurrent {
            CFRunLoopWakeUp(runLoop)
        }
    }
}

extension Locked where Value == Set<RunLoop.Mode> {
    /// Records the modes of `modes` that are neither `.common` nor `.default` and not recorded yet, and
    /// returns them: the modes a scheduler must start turning in.
    func insertNewCustomModes(_ modes: [RunLoop.Mode]) -> [RunLoop.Mode] {
        withLock { known in
            let new = modes.filter { $0 != .common && $0 != .default && !known.contains($0) }
            known.formUnion(new)
            return new
        }
    }
}
