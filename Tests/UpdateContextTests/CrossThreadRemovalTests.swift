import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Removal from another thread is exact without waiting (CONTRACT.md, issue 24 item 1): once `remove()`
/// has returned, no call of the handler begins; a call already under way — taken by the delivery before the
/// removal took effect — finishes. Each race removes while the main thread (the manual scheduler's)
/// delivers as fast as it can; once the removal has returned, a delivery that begins after it never calls
/// the removed updater.
final class CrossThreadRemovalTests: XCTestCase {
    private static let races = 3_000

    func testNoUpdaterBodyBeginsAfterARemovalFromAnotherThreadReturned() {
        let scheduler = ManualScheduler()
        var violations = 0
        var raced = 0  // rounds where the main thread called the updater before the removal returned
        for _ in 0..<Self.races {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            let removed = AtomicCounter()
            var afterRemoval = false  // main thread: a delivery begun after remove() returned
            var called = false
            // Between two others, so that a delivery spends time on each side of the one removed.
            context.onUpdate { _ in }
            let token = context.onUpdate { _ in
                if afterRemoval { violations += 1 }
                called = true
            }
            context.onUpdate { _ in }
            let done = race(removed) { token.remove() }
            while removed.value == 0 { context.update() }
            afterRemoval = true
            context.update()  // begun after the removal returned: never calls it
            done.wait()
            if called { raced += 1 }
        }
        XCTAssertEqual(violations, 0, "updater bodies began in a delivery begun after remove() returned")
        XCTAssertGreaterThan(raced, 0, "no removal landed amid deliveries: the races never raced")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testNoUpdaterBodyBeginsAfterRemoveUpdatersFromAnotherThreadReturned() {
        let scheduler = ManualScheduler()
        var violations = 0
        for _ in 0..<Self.races {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            let removed = AtomicCounter()
            var afterRemoval = false
            for _ in 0..<3 {
                context.onUpdate { _ in if afterRemoval { violations += 1 } }
            }
            let done = race(removed) { context.removeUpdaters() }
            while removed.value == 0 { context.update() }
            afterRemoval = true
            context.update()
            done.wait()
        }
        XCTAssertEqual(violations, 0)
    }

    func testNoObserverBodyBeginsAfterARemovalFromAnotherThreadReturned() {
        let center = NotificationCenter()
        let name = Notification.Name("CrossThreadRemovalTests")
        var calls = 0
        for _ in 0..<Self.races {
            let context = NotificationObservingContext(center: center)
            let removed = AtomicCounter()
            let token = context.observe(name) { _, _ in calls += 1 }
            let done = race(removed) { token.remove() }
            while removed.value == 0 { center.post(name: name, object: nil) }
            let before = calls
            center.post(name: name, object: nil)
            XCTAssertEqual(calls, before, "called after its removal")
            done.wait()
        }
    }

    /// Starts a thread that removes (after a short random delay, so that removals land at every point of
    /// a delivery) and then publishes that it has returned. Returns a semaphore signalled when it is done.
    private func race(_ removed: AtomicCounter, _ remove: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let spins = Int.random(in: 0..<2_000)
        Thread.detachNewThread {
            var sink = 0
            for index in 0..<spins { sink &+= index }
            withExtendedLifetime(sink) {}
            remove()
            removed.store(1)
            done.signal()
        }
        return done
    }
}
