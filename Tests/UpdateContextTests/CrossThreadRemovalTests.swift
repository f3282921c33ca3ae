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
/// has returned, no call of the handler begins; the one call already under way — claimed by the
/// delivery before the removal took effect — finishes. Each race removes while the main thread (the
/// manual scheduler's) delivers as fast as it can; a body that begins after a removal that saw no call
/// under way is a violation.
final class CrossThreadRemovalTests: XCTestCase {
    /// What the removing thread publishes once `remove()` has returned.
    private enum Removal: Int {
        case notYet = 0
        case sawNoCall = 1
        case sawACallUnderWay = 2
    }

    private static let races = 3_000

    func testNoUpdaterBodyBeginsAfterARemovalFromAnotherThreadReturned() {
        let scheduler = ManualScheduler()
        var violations = 0
        var underWay = 0
        for _ in 0..<Self.races {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            let removal = AtomicCounter()
            // Between two others, so that a delivery spends time on each side of the one removed.
            context.onUpdate { _ in }
            let token = context.onUpdate { _ in
                if removal.value == Removal.sawNoCall.rawValue { violations += 1 }
            }
            context.onUpdate { _ in }
            let removed = race(removal) { token.removeReportingCallUnderWay() }
            while removal.value == Removal.notYet.rawValue { context.update() }
            context.update()  // after the removal: never called
            removed.wait()
            if removal.value == Removal.sawACallUnderWay.rawValue { underWay += 1 }
        }
        XCTAssertEqual(violations, 0, "updater bodies began after remove() returned with no call under way")
        XCTAssertLessThan(underWay, Self.races, "every removal saw a call under way: the races never raced")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    func testNoUpdaterBodyBeginsAfterRemoveUpdatersFromAnotherThreadReturned() {
        let scheduler = ManualScheduler()
        var violations = 0
        for _ in 0..<Self.races {
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            let removal = AtomicCounter()
            for _ in 0..<3 {
                context.onUpdate { _ in
                    if removal.value == Removal.sawNoCall.rawValue { violations += 1 }
                }
            }
            let removed = race(removal) { context.storage.removeAllUpdatersReportingCallUnderWay() }
            while removal.value == Removal.notYet.rawValue { context.update() }
            context.update()
            removed.wait()
        }
        XCTAssertEqual(violations, 0)
    }

    func testNoObserverBodyBeginsAfterARemovalFromAnotherThreadReturned() {
        let center = NotificationCenter()
        let name = Notification.Name("CrossThreadRemovalTests")
        var violations = 0
        var calls = 0
        for _ in 0..<Self.races {
            let context = NotificationObservingContext(center: center)
            let removal = AtomicCounter()
            let token = context.observe(name) { _, _ in
                calls += 1
                if removal.value == Removal.sawNoCall.rawValue { violations += 1 }
            }
            let removed = race(removal) { token.removeReportingCallUnderWay() }
            while removal.value == Removal.notYet.rawValue { center.post(name: name, object: nil) }
            let before = calls
            center.post(name: name, object: nil)
            XCTAssertEqual(calls, before, "called after its removal")
            removed.wait()
        }
        XCTAssertEqual(violations, 0, "observer bodies began after remove() returned with no call under way")
    }

    /// Starts a thread that removes (after a short random delay, so that removals land at every point of
    /// a delivery) and publishes what the removal saw. Returns a semaphore signalled when it is done.
    private func race(_ removal: AtomicCounter, _ remove: @escaping @Sendable () -> Bool) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let spins = Int.random(in: 0..<2_000)
        Thread.detachNewThread {
            var sink = 0
            for index in 0..<spins { sink &+= index }
            withExtendedLifetime(sink) {}
            let sawCall = remove()
            removal.store((sawCall ? Removal.sawACallUnderWay : Removal.sawNoCall).rawValue)
            done.signal()
        }
        return done
    }
}
