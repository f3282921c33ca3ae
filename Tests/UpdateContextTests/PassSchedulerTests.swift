import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// The pass scheduler behind `ViewUpdatingContext.makeForUpdatePropertiesPass()`: requests ask for the pass
/// once per batch, the pass delivers everything, and a pass that never comes is replaced by the main
/// queue. XCTest runs on the main thread, whose run loop the tests turn (and so the main queue).
final class PassSchedulerTests: XCTestCase {
    private func spin(turns: Int) {
        for _ in 0..<turns { _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01)) }
    }

    func testRequestsAskForThePassOncePerBatchAndThePassDeliversThem() {
        let asked = AtomicCounter()
        let context = ViewUpdatingContext.passContext(animated: false, refreshEvents: [])
        context.bindPass { asked.add() }
        var flags: [Bool] = []
        context.onUpdate { flags.append($0) }
        for _ in 0..<1_000 { context.setNeedsUpdate() }
        context.setNeedsUpdate(animated: true)
        XCTAssertEqual(asked.value, 1, "one pass requested for the batch")
        XCTAssertEqual(flags, [])
        context.updateIfNeeded()  // what updateProperties() does
        XCTAssertEqual(flags, [true], "delivered inside the pass, with the batch's flag")
        spin(turns: 5)
        XCTAssertEqual(flags, [true], "the fallback finds nothing left")
        context.setNeedsUpdate()
        XCTAssertEqual(asked.value, 2, "the next batch asks again")
        context.updateIfNeeded()
        XCTAssertEqual(flags, [true, false])
    }

    func testARequestFromAnotherThreadAsksForThePassOnTheMainThread() {
        let askedOnMain = AtomicCounter()
        let askedElsewhere = AtomicCounter()
        let context = ViewUpdatingContext.passContext(animated: false, refreshEvents: [])
        context.bindPass { _ = Thread.isMainThread ? askedOnMain.add() : askedElsewhere.add() }
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        onAnotherThread { for _ in 0..<100 { context.setNeedsUpdate() } }
        spin(turns: 1)
        XCTAssertEqual(askedElsewhere.value, 0)
        XCTAssertGreaterThanOrEqual(askedOnMain.value, 1)
        spin(turns: 5)
        XCTAssertEqual(deliveries, 1, "delivered once (by the pass or the fallback)")
    }

    /// A view in no window gets no pass, and an unbound context asks nobody: the main queue delivers.
    func testWithoutAPassTheContextDeliversByItself() {
        let context = ViewUpdatingContext.passContext(animated: true, refreshEvents: [])
        var flags: [Bool] = []
        context.onUpdate { flags.append($0) }
        context.setNeedsUpdate()
        XCTAssertEqual(flags, [])
        let deadline = Date(timeIntervalSinceNow: 5)
        while flags.isEmpty && Date() < deadline { spin(turns: 1) }
        XCTAssertEqual(flags, [true])
        spin(turns: 3)
        XCTAssertEqual(flags, [true], "once")
    }

    func testRunPassDeliversEveryContextOnTheScheduler() {
        let scheduler = PassScheduler {}
        let first = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        let second = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var delivered: [String] = []
        first.onUpdate { _ in delivered.append("first") }
        second.onUpdate { _ in delivered.append("second") }
        first.setNeedsUpdate()
        second.setNeedsUpdate()
        XCTAssertEqual(scheduler.runPass(), 2)
        XCTAssertEqual(delivered.sorted(), ["first", "second"])
        XCTAssertEqual(scheduler.runPass(), 0)
    }

    func testAPassSchedulerMadeOnAnotherThreadStillRunsOnTheMainThread() {
        let made = UncheckedBox(NotificationCoalescing.Locked<PassScheduler?>(nil))
        onAnotherThread { made.value.withLock { $0 = PassScheduler {} } }
        let scheduler = made.value.withLock { $0 }!
        XCTAssertTrue(scheduler.isCurrent, "the main thread is the scheduler's")
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        context.setNeedsUpdate()
        XCTAssertEqual(scheduler.runPass(), 1)
        XCTAssertEqual(deliveries, 1)
    }

    func testOnLinuxAndBelowiOS26TheFactoryGivesAnOrdinaryContext() {
        #if !canImport(UIKit)
        let context = ViewUpdatingContext.makeForUpdatePropertiesPass()
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        context.setNeedsUpdate()
        spinMainLoop { deliveries == 1 }
        XCTAssertEqual(deliveries, 1, "delivered at the end of the main run loop's cycle")
        XCTAssertNil(context.storage.face(PropertiesPassBinding.self), "no pass binding")
        #endif
    }

    func testAReleasedContextsPendingWorkDoesNotOutliveItInTheFallback() {
        weak var weakContext: ViewUpdatingContext?
        do {
            let context = ViewUpdatingContext.passContext(animated: false, refreshEvents: [])
            weakContext = context
            context.onUpdate { _ in XCTFail("a released context delivers nothing") }
            context.setNeedsUpdate()
        }
        XCTAssertNil(weakContext)
        spin(turns: 5)
    }
}
