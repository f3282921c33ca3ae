import Foundation

/// The schedulers that turn on one thread: each joins the list of a thread where it lists work, turns, or
/// gets a view context created (``CoalescingScheduler/joinCurrentThread()``). An animating scope that
/// begins on the thread flushes what waits on them (`UpdateContextCore`'s `AnimatedScopeFlush`), besides
/// `.dispatchMain`, whose turns run on whichever thread runs the main queue's blocks (no one thread's list
/// can hold it).
///
/// It lives in the thread's `threadDictionary` (as the thread's run-loop scheduler does), goes with the
/// thread, and is touched only by its thread: no lock, nothing process-wide. It holds the schedulers weakly.
package final class ThreadSchedulers {
    private struct Entry {
        weak var scheduler: CoalescingScheduler?
    }

    private static let key = "CoalescingRuntime.ThreadSchedulers"
    private var entries: [Entry] = []

    private init() {}

    /// The calling thread's list, made on first use.
    static var current: ThreadSchedulers {
        if let existing = currentIfMade { return existing }
        let made = ThreadSchedulers()
        Thread.current.threadDictionary[key] = made
        return made
    }

    /// The calling thread's list, if a scheduler joined it.
    static var currentIfMade: ThreadSchedulers? {
        Thread.current.threadDictionary[key] as? ThreadSchedulers
    }

    func add(_ scheduler: CoalescingScheduler) {
        if entries.contains(where: { $0.scheduler === scheduler }) { return }
        entries.removeAll { $0.scheduler == nil }
        entries.append(Entry(scheduler: scheduler))
    }

    /// The schedulers whose turns the calling thread runs now: those of its list that are alive and current,
    /// and `.dispatchMain` when the thread runs a main-queue block.
    package static var schedulersOfCurrentThread: [CoalescingScheduler] {
        var found = currentIfMade?.entries.compactMap { $0.scheduler.flatMap { $0.isCurrent ? $0 : nil } } ?? []
        let dispatchMain = CoalescingScheduler.dispatchMain
        if dispatchMain.isCurrent && !found.contains(where: { $0 === dispatchMain }) { found.append(dispatchMain) }
        return found
    }
}
