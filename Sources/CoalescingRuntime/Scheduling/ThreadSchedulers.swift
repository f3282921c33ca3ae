import CCoalescingSupport
import Foundation

/// The schedulers that turn on one thread: each joins the list of a thread where it lists work, turns, or
/// gets a view context created (``CoalescingScheduler/joinCurrentThread()``). An animating scope that
/// begins on the thread flushes what waits on them (`UpdateContextCore`'s `AnimatedScopeFlush`), besides
/// `.dispatchMain` off the main thread, whose turns run on whichever thread runs the main queue's blocks
/// under `dispatchMain()` (no one thread's list can hold it there).
///
/// It hangs off the thread's record (the package's one thread-local, `cvu_thread_record_t`), where finding it
/// is a load; the thread's `threadDictionary` owns it, so that it goes with the thread (its `deinit` then
/// clears the record). Touched only by its thread: no lock, nothing process-wide. It holds the schedulers
/// weakly.
package final class ThreadSchedulers {
    private struct Entry {
        weak var scheduler: CoalescingScheduler?
    }

    private static let key = "CoalescingRuntime.ThreadSchedulers"
    private var entries: [Entry] = []

    private init() {}

    deinit {
        // At thread exit, on the thread (released with its dictionary): its record no longer points here.
        if cvu_thread_schedulers() == UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) {
            cvu_set_thread_schedulers(nil)
        }
    }

    /// The calling thread's list, made on first use.
    static var current: ThreadSchedulers {
        if let existing = currentIfMade { return existing }
        let made = ThreadSchedulers()
        Thread.current.threadDictionary[key] = made
        cvu_set_thread_schedulers(Unmanaged.passUnretained(made).toOpaque())
        return made
    }

    /// The calling thread's list, if a scheduler joined it: a thread-local load.
    @inline(__always)
    static var currentIfMade: ThreadSchedulers? {
        cvu_thread_schedulers().map { Unmanaged<ThreadSchedulers>.fromOpaque($0).takeUnretainedValue() }
    }

    func add(_ scheduler: CoalescingScheduler) {
        if entries.contains(where: { $0.scheduler === scheduler }) { return }
        entries.removeAll { $0.scheduler == nil }
        entries.append(Entry(scheduler: scheduler))
    }

    /// The schedulers whose turns the calling thread runs now and that may have clients waiting (see
    /// ``CoalescingScheduler/mayHaveWaitingClients``), not in a private run-loop mode: those of its list, and
    /// `.dispatchMain` when a thread other than the main thread runs a main-queue block. Allocates nothing when
    /// there are none.
    package static var dueSchedulersOfCurrentThread: [CoalescingScheduler] {
        var due: [CoalescingScheduler] = []
        if let list = currentIfMade {
            for entry in list.entries {
                if let scheduler = entry.scheduler, scheduler.isCurrentFast, scheduler.isDue { due.append(scheduler) }
            }
        }
        // On the main thread `.dispatchMain` is in the list once it has listed, turned or had a context made
        // there; a main-queue block elsewhere (under `dispatchMain()`) asks it, since no one thread's list has it.
        if cvu_is_main_thread() { return due }
        let dispatchMain = CoalescingScheduler.dispatchMain
        if dispatchMain.isCurrentFast && !due.contains(where: { $0 === dispatchMain }) && dispatchMain.isDue {
            due.append(dispatchMain)
        }
        return due
    }
}

extension CoalescingScheduler {
    /// Whether an animating scope's flush has something to look at on this scheduler: clients may be waiting,
    /// and its thread does not run a private mode. On the scheduler's thread.
    fileprivate var isDue: Bool {
        mayHaveWaitingClients && !isInPrivateMode
    }
}
