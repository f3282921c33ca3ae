import Foundation
import UpdateContextCore
import XCTest

@testable import CoalescingRuntime

/// The list of the schedulers that turn on a thread (what an animating scope's flush looks at) hangs off the
/// thread's record, and goes with the thread.
final class ThreadSchedulersTests: XCTestCase {
    private final class Seen: @unchecked Sendable {
        // @unchecked Sendable: written on the worker thread before it signals (`list` is a weak reference, which
        // its deinit clears on that thread), read after the wait.
        weak var list: ThreadSchedulers?
        var dueBeforeRequest = true
        var dueAfterRequest = false
    }

    func testAThreadsSchedulerListIsFoundThroughItsRecordAndGoesWithTheThread() {
        let seen = Seen()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let scheduler = ManualScheduler()
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])  // joins this thread's list
            seen.list = ThreadSchedulers.currentIfMade
            seen.dueBeforeRequest = !ThreadSchedulers.dueSchedulersOfCurrentThread.isEmpty
            context.setNeedsUpdate()
            seen.dueAfterRequest = ThreadSchedulers.dueSchedulersOfCurrentThread.contains { $0 === scheduler }
            scheduler.turn()
            done.signal()
        }
        done.wait()
        XCTAssertFalse(seen.dueBeforeRequest, "nothing pending: nothing to flush")
        XCTAssertTrue(seen.dueAfterRequest, "a request pending: its scheduler is found on its thread")
        // The thread exits after the signal; its list goes with it (polled a bounded number of times).
        for _ in 0..<2_000 where seen.list != nil { usleep(1_000) }
        XCTAssertNil(seen.list, "the thread's list outlived the thread")
    }
}
