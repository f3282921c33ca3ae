import Foundation
import NotificationCoalescing
import UpdateContext
import XCTest

/// `setNeedsUpdate(on:animated:)`.
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
        context.setNeedsUpdate(on: stream, animated: true)
        for i in 0..<10 { continuation.yield(i) }
        continuation.finish()
        // Every element has been consumed once the subscription has ended.
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
        XCTAssertTrue(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "a", "ten elements, one delivery")

        let (more, moreContinuation) = AsyncStream.makeStream(of: Int.self)
        let subscription = context.setNeedsUpdate(on: more)
        moreContinuation.yield(10)
        waitUntil { context.isUpdatePending }
        scheduler.turn()
        XCTAssertEqual(deliveries.letters, "an")
        subscription.cancel()
    }

    func testCancelStopsIt() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let terminated = DispatchSemaphore(value: 0)
        continuation.onTermination = { _ in terminated.signal() }
        let subscription = context.setNeedsUpdate(on: stream)
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
        context.setNeedsUpdate(on: stream)
        continuation.yield(1)
        continuation.finish()
        waitUntil { context.runningSubscriptions == 0 }
        XCTAssertEqual(context.runningSubscriptions, 0)
        XCTAssertTrue(context.isUpdatePending)
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
            subscription = context.setNeedsUpdate(on: stream)
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
        let subscription = context!.setNeedsUpdate(on: stream)
        continuation.finish()
        waitUntil { context!.runningSubscriptions == 0 }
        XCTAssertFalse(subscription.isCancelled, "finished, but neither cancelled nor released")
        context = nil
        XCTAssertTrue(subscription.isCancelled, "the doc: true once the context is released")
        scheduler.turn()
    }
}
