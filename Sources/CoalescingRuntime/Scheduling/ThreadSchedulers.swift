import CCoalescingSupport

/// The schedulers that turn on one thread: each joins the list of its thread where it lists work there,
/// turns there, or gets a view context created there (``CoalescingScheduler/joinCurrentThread()``). An
/// animating scope that begins on the thread flushes what waits on them (`UpdateContextCore`'s
/// `AnimatedScopeFlush`).
///
/// It hangs off the thread's record (the package's one thread-local) and is touched only by its thread: no
/// lock, nothing process-wide. Created on a thread's first use and kept for the thread's life (one small
/// object per thread that ever turned a scheduler); it holds the schedulers weakly.
package final class ThreadSchedulers {
    private struct Entry {
        weak var scheduler: CoalescingScheduler?
    }

    private var entries: [Entry] = []

    private init() {}

    /// The calling thread's list.
    package static var current: ThreadSchedulers {
        if let existing = cvu_thread_schedulers() {
            return Unmanaged<ThreadSchedulers>.fromOpaque(existing).takeUnretainedValue()
        }
        let created = ThreadSchedulers()
        cvu_set_thread_schedulers(Unmanaged.passRetained(created).toOpaque())
        return created
    }

    func add(_ scheduler: CoalescingScheduler) {
        if entries.contains(where: { $0.scheduler === scheduler }) { return }
        entries.removeAll { $0.scheduler == nil }
        entries.append(Entry(scheduler: scheduler))
    }

    /// The schedulers of this thread that are still alive.
    package var schedulers: [CoalescingScheduler] {
        entries.compactMap(\.scheduler)
    }
}
