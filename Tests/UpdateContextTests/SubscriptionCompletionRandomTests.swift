import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

private enum FromElement: UpdateTransactionKey {
    static let defaultValue = false
}

/// `requestUpdates(from:transaction:)`'s completion runs "once per delivery that shows the requests of one or
/// more elements", wherever an element's request lands against the main thread's work: before a turn, while a
/// delivery runs (it waits for the next cycle), from a thread racing the turns, after a non-animated request
/// (its animated request flushes the earlier ones first). A seeded random placement of element arrivals,
/// plain requests and turns on a `ManualScheduler`, checked against the deliveries themselves: every
/// delivery whose transaction carries an element's value is followed, before the next delivery, by exactly
/// one call of the completion, told "shown"; no other delivery is. `RANDOM_SEED=… swift test --filter
/// SubscriptionCompletionRandomTests` replays a seed. (Found by CI's TSan step on 0.2.0: 3 calls for 4
/// deliveries.)
final class SubscriptionCompletionRandomTests: XCTestCase {
    func testACompletionRunsOncePerDeliveryOfElementsWhereverTheyArrive() {
        for seed in randomSeeds(fixed: [1, 2, 3, 5, 8, 13]) {
            run(seed: seed, steps: 150)
        }
    }

    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        // "D+" a delivery that shows an element, "D-" one that does not, "C" a call, "X" a call told dropped.
        let events = SharedLog()
        var transaction = UpdateTransaction(animation: Bool.random(using: &random) ? .default : nil)
        transaction[FromElement.self] = true
        transaction.addCompletion { events.append($0.wasShown ? "C" : "X") }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let subscription = context.requestUpdates(from: stream, transaction: transaction)
        /// What the next delivery's updater does: yield an element there, and wait for its request or not.
        var insideNext: (yield: Bool, wait: Bool)?
        var log: [String] = []

        /// Yields an element and, when `waits`, waits until its request is in the inbox (a request with a
        /// transaction is never merged into the entry before it: the inbox grows by one).
        func inboxCount() -> Int { context.storage.withShared { $0.inbox.count } }
        func yieldElement(waits: Bool) {
            let before = inboxCount()
            continuation.yield(0)
            guard waits else { return }
            let deadline = Date(timeIntervalSinceNow: 30)
            while inboxCount() == before && Date() < deadline { Thread.sleep(forTimeInterval: 0.0005) }
            if inboxCount() == before {
                XCTFail("seed \(seed): an element was not requested in 30 s; last steps: \(log.suffix(10))")
            }
        }

        context.onUpdate { _ in
            events.append(context.deliveryTransaction?[FromElement.self] == true ? "D+" : "D-")
            if let inside = insideNext {
                insideNext = nil
                if inside.yield { yieldElement(waits: inside.wait) }
            }
        }
        for _ in 0..<steps {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                log.append("element")
                yieldElement(waits: true)
            case 25..<40:
                let waits = Bool.random(using: &random)
                log.append("element inside the next delivery\(waits ? "" : ", racing")")
                insideNext = (true, waits)
            case 40..<50:
                // An element racing the turn: yielded on another thread as the main thread turns.
                log.append("element racing a turn")
                let go = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    go.wait()
                    continuation.yield(0)
                }
                go.signal()
                scheduler.turn()
            case 50..<65:
                let flag: Bool? = [nil, false, true].randomElement(using: &random)!
                log.append("request \(flag.map { $0 ? "T" : "F" } ?? "N")")
                context.setNeedsUpdate(animated: flag)
            default:
                log.append("turn")
                scheduler.turn()
            }
        }
        insideNext = nil  // (an element yielded after the end would request nothing)
        continuation.finish()
        let deadline = Date(timeIntervalSinceNow: 5)
        while context.runningSubscriptions > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        XCTAssertNoThrow(try scheduler.runUntilIdle(), "seed \(seed)")
        // Each delivery that showed an element is followed, before the next delivery, by exactly one call.
        var expected: [String] = []
        for event in events.entries where event.hasPrefix("D") {
            expected.append(event)
            if event == "D+" { expected.append("C") }
        }
        XCTAssertEqual(
            events.entries, expected,
            "seed \(seed): deliveries and calls; last steps: \(log.suffix(20).joined(separator: ", "))")
        XCTAssertTrue(events.entries.contains("D+"), "seed \(seed): some element was shown")
        withExtendedLifetime(subscription) {}
    }
}
