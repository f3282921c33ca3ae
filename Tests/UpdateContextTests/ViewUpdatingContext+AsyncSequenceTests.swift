import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// `requestUpdates(from:animated:)`.
final class AsyncSequenceTriggerTests: XCTestCase {
    private func waitUntil(_ condition: () -> Bool, timeout: TimeInterval = 5) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
    }

    func testEachElementRequestsAndRequestsCoalesce() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let first = context.requestUpdates(from: stream, animated: true)
        for i in 0..<10 { continuation.yield(i) }
        continuation.finish()
        // Every element has been consumed once the subscription has ended.
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
        XCTAssertTrue(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "a", "ten elements, one delivery")
        withExtendedLifetime(first) {}

        let (more, moreContinuation) = AsyncStream.makeStream(of: Int.self)
        let subscription = context.requestUpdates(from: more)
        moreContinuation.yield(10)
        waitUntil { context.isUpdatePending }
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "an")
        subscription.cancel()
    }

    /// A sequence's transaction: its completion runs once per delivery that shows one or more elements
    /// (found by an outside review: it ran once in all, the first completion leaving later elements without
    /// it).
    func testATransactionsCompletionRunsOncePerDeliveryOfItsElements() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let deliveries = Deliveries()
        context.onUpdate { deliveries.record($0) }
        let calls = NotificationCoalescing.Locked<[String]>([])
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { completion in calls.withLock { $0.append("\(completion.wasShown)") } }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let subscription = context.requestUpdates(from: stream, transaction: transaction)
        for round in 1...3 {
            continuation.yield(round)
            if round == 3 { continuation.yield(4) }  // two elements, one delivery
            waitUntil { context.isUpdatePending }
            scheduler.turn()
        }
        continuation.finish()
        waitUntil { context.runningSubscriptions == 0 }
        _ = try? scheduler.runUntilIdle()
        XCTAssertEqual(deliveries.letters, String(repeating: "a", count: deliveries.count))
        XCTAssertEqual(calls.withLock { $0 }, Array(repeating: "true", count: deliveries.count), "once per delivery")
        XCTAssertGreaterThanOrEqual(deliveries.count, 3)
        withExtendedLifetime(subscription) {}
    }

    func testCancelStopsIt() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let terminated = DispatchSemaphore(value: 0)
        continuation.onTermination = { _ in terminated.signal() }
        let subscription = context.requestUpdates(from: stream)
        XCTAssertEqual(context.runningSubscriptions, 1)
        subscription.cancel()
        XCTAssertTrue(subscription.isCancelled)
        XCTAssertEqual(terminated.wait(timeout: .now() + 5), .success, "the iteration ended")
        continuation.yield(1)
        Thread.sleep(forTimeInterval: 0.02)
        XCTAssertFalse(context.isUpdatePending)
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
    }

    func testEndsWhenTheSequenceFinishes() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let subscription = context.requestUpdates(from: stream)
        continuation.yield(1)
        continuation.finish()
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
        XCTAssertTrue(context.isUpdatePending)
        XCTAssertFalse(subscription.isCancelled, "finished is not cancelled")
        scheduler.turn()
    }

    func testEndsWhenTheContextIsReleased() {
        let scheduler = ManualScheduler()
        weak var weakContext: ViewUpdatingContext?
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let terminated = DispatchSemaphore(value: 0)
        continuation.onTermination = { _ in terminated.signal() }
        var subscription: UpdateSubscription?
        do {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            subscription = context.requestUpdates(from: stream)
            weakContext = context
        }
        XCTAssertNil(weakContext)
        XCTAssertEqual(terminated.wait(timeout: .now() + 5), .success, "the task stopped following the stream")
        XCTAssertTrue(subscription!.isCancelled)
        continuation.yield(1)
        scheduler.turn()
    }

    func testIsCancelledAfterTheContextIsReleasedEvenWhenTheSequenceHadFinished() {
        let scheduler = ManualScheduler()
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        var context: ViewUpdatingContext? = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let subscription = context!.requestUpdates(from: stream)
        continuation.finish()
        waitUntil { context!.runningSubscriptions == 0 }
        XCTAssertFalse(subscription.isCancelled, "finished, but neither cancelled nor released")
        context = nil
        XCTAssertTrue(subscription.isCancelled, "the doc: true once the context is released")
        scheduler.turn()
    }

    /// Like `AnyCancellable`: releasing the subscription stops it, wherever it was kept.
    func testReleasingTheSubscriptionStopsIt() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let terminated = DispatchSemaphore(value: 0)
        continuation.onTermination = { _ in terminated.signal() }
        var subscription: UpdateSubscription? = context.requestUpdates(from: stream)
        continuation.yield(1)
        waitUntil { context.isUpdatePending }
        XCTAssertTrue(context.isUpdatePending, "a kept subscription follows the stream")
        scheduler.turn()
        subscription = nil
        XCTAssertEqual(terminated.wait(timeout: .now() + 5), .success, "released: the iteration ended")
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
        continuation.yield(2)
        XCTAssertFalse(context.isUpdatePending)
        XCTAssertNil(subscription)
    }

    /// Kept in a property, it lives as long as the object that holds it (not as long as the context).
    func testASubscriptionInAPropertyLivesAsLongAsItsHolder() {
        final class Screen {
            let context: ViewUpdatingContext
            var subscription: UpdateSubscription?
            init(_ context: ViewUpdatingContext) { self.context = context }
        }
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let terminated = DispatchSemaphore(value: 0)
        continuation.onTermination = { _ in terminated.signal() }
        var screen: Screen? = Screen(context)
        screen!.subscription = context.requestUpdates(from: stream)
        XCTAssertEqual(context.runningSubscriptions, 1)
        screen = nil
        XCTAssertEqual(terminated.wait(timeout: .now() + 5), .success, "the holder went: the subscription ended")
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
    }

    /// An element whose request races the context's release never touches the scheduler after the release let it
    /// go: the request holds the scheduler for its call (here a scheduler of the app's own, owned by its one
    /// context). The scheduler pauses the request inside its first check while the test releases the context.
    func testAnElementRacingTheContextsReleaseHoldsItsSchedulerForTheRequest() {
        let scheduler = PausingScheduler()
        var context: ViewUpdatingContext? = ViewUpdatingContext(label: "fed", scheduler: scheduler, refreshEvents: [])
        weak let freed = scheduler
        _ = consume scheduler
        context?.onUpdate { _ in }
        let afterFirst = DispatchSemaphore(value: 0)
        PausingScheduler.pauses.withLock { $0 = true }
        let subscription = context?.requestUpdates(from: OneElement(afterFirst: afterFirst))
        XCTAssertEqual(PausingScheduler.reached.wait(timeout: .now() + 10), .success, "the request began")
        context = nil  // the screen goes, and with it the only other holder of its scheduler
        PausingScheduler.resume.signal()
        XCTAssertEqual(afterFirst.wait(timeout: .now() + 10), .success, "the request returned")
        XCTAssertFalse(PausingScheduler.usedAfterFree.withLock { $0 }, "the request used the scheduler after it went")
        waitUntil { freed == nil }
        XCTAssertNil(freed, "the request let the scheduler go")
        withExtendedLifetime(subscription) {}
    }
}

/// A scheduler of the app's own, which the main thread turns: its `isCurrent`, asked from another thread, pauses
/// once when told, so that a test can release the context at that point.
private final class PausingScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: no state of its own; the static ones are locked or semaphores.
    static let pauses = NotificationCoalescing.Locked(false)
    static let usedAfterFree = NotificationCoalescing.Locked(false)
    static let reached = DispatchSemaphore(value: 0)
    static let resume = DispatchSemaphore(value: 0)
    static let isFreed = NotificationCoalescing.Locked(false)

    override var isMainThreadScheduler: Bool { true }
    override var isCurrent: Bool {
        if Thread.isMainThread { return true }
        if Self.isFreed.withLock({ $0 }) { Self.usedAfterFree.withLock { $0 = true } }
        if Self.pauses.withLock({ pause in
            defer { pause = false }
            return pause
        }) {
            Self.reached.signal()
            Self.resume.wait()
        }
        return false
    }

    deinit {
        Self.isFreed.withLock { $0 = true }
    }
}

/// One element, then the end: the second `next()` says that the element's request has returned.
private struct OneElement: AsyncSequence, Sendable {
    let afterFirst: DispatchSemaphore

    struct AsyncIterator: AsyncIteratorProtocol {
        let afterFirst: DispatchSemaphore
        var given = false

        mutating func next() async -> Void? {
            if given {
                afterFirst.signal()
                return nil
            }
            given = true
            return ()
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(afterFirst: afterFirst) }
}
