import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// `animateWithFlushedUpdates(using:_:)`: UIKit 26's `.flushUpdates`, with a stand-in animation that
/// records what ran inside it.
final class FlushedAnimationTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: ViewUpdatingContext!
    /// Each delivery: `n`/`a`, uppercase when it ran inside the animation block.
    private var written: [String] = []
    private var insideAnimation = false
    private var animations = 0

    override func setUp() {
        scheduler = ManualScheduler()
        context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        written = []
        context.onUpdate { [unowned self] animated in
            let letter = animated ? "a" : "n"
            written.append(insideAnimation ? letter.uppercased() : letter)
        }
    }

    override func tearDown() {
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        context = nil
    }

    private func animate(_ block: @escaping () -> Void) {
        animations += 1
        insideAnimation = true
        block()
        insideAnimation = false
    }

    func testEarlierChangesRenderOutsideAndTheNewOnesInsideAnimated() {
        context.setNeedsUpdate(animated: false)
        context.animateWithFlushedUpdates(using: animate) { [context] in context!.setNeedsUpdate() }
        XCTAssertEqual(written, ["n", "A"])
        XCTAssertFalse(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(written, ["n", "A"], "nothing left for the end of the cycle")
    }

    func testChangesThatRequestNothingDeliverNothing() {
        context.animateWithFlushedUpdates(using: animate) {}
        XCTAssertEqual(animations, 1)
        XCTAssertEqual(written, [])
    }

    func testWhatTheAnimatedDeliveryRequestsIsDeliveredAfterTheBlock() {
        var again = true
        context.onUpdate { [unowned self] _ in
            if again {
                again = false
                context.setNeedsUpdate()
            }
        }
        context.animateWithFlushedUpdates(using: animate) { [context] in context!.setNeedsUpdate(animated: false) }
        XCTAssertEqual(written, ["A", "n"], "the animated delivery inside, what it asked for after")
    }

    func testARequestFromAnotherThreadBeforeIsFlushedOutsideTheAnimation() {
        let context = context!
        onAnotherThread { context.setNeedsUpdate() }
        context.animateWithFlushedUpdates(using: animate) { context.setNeedsUpdate() }
        XCTAssertEqual(written, ["n", "A"])
    }

    func testASuspendedContextDeliversNothingUntilResume() {
        context.suspend()
        context.setNeedsUpdate(animated: false)
        context.animateWithFlushedUpdates(using: animate) { [context] in context!.setNeedsUpdate() }
        XCTAssertEqual(written, [])
        context.resume()
        XCTAssertEqual(written, ["n"], "once; the earlier non-animated change must not animate")
    }

    func testASuspendedContextAppliesTheChangesRequestsAsTheyWouldBeAppliedWithoutTheWrapper() {
        // `F`, then changes that call `update(animated: true)`: without the wrapper, resume delivers one forced,
        // animated update (the explicit `true` replaced the pending `false`). The wrapper adds its own `T` after
        // the changes' requests, which changes nothing here.
        let bare = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var bareWritten: [Bool] = []
        bare.onUpdate { bareWritten.append($0) }
        bare.suspend()
        bare.setNeedsUpdate(animated: false)
        bare.update(animated: true)
        bare.setNeedsUpdate(animated: true)
        bare.resume()
        XCTAssertEqual(bareWritten, [true])

        context.suspend()
        context.setNeedsUpdate(animated: false)
        context.animateWithFlushedUpdates(using: animate) { [context] in context!.update(animated: true) }
        XCTAssertEqual(written, [])
        context.resume()
        XCTAssertEqual(written, ["a"], "as without the wrapper: once, animated")
    }

    func testASuspendedContextKeepsTheEarlierFalseWhenTheChangesRequestWithoutAFlag() {
        context.suspend()
        context.setNeedsUpdate(animated: true)
        context.setNeedsUpdate(animated: false)
        context.animateWithFlushedUpdates(using: animate) { [context] in context!.setNeedsUpdate() }
        context.resume()
        XCTAssertEqual(written, ["n"])
        scheduler.turn()
        XCTAssertEqual(written, ["n"], "nothing left")
    }

    func testANestedFlushedAnimationThatRequestsNothingKeepsTheOuterChangesRequest() {
        // Suspended: the outer changes request, then a helper makes a flushed animation of its own on the same
        // context and requests nothing; the outer call still adds its animated request (an outside reader found
        // the inner watch forgetting what the outer one had heard).
        context.suspend()
        context.setNeedsUpdate()
        context.animateWithFlushedUpdates(using: animate) { [context, animate] in
            context!.setNeedsUpdate()
            context!.animateWithFlushedUpdates(using: animate) {}
        }
        context.resume()
        XCTAssertEqual(written, ["a"])
    }

    func testANestedFlushedAnimationInsideAnUpdaterDoesNotTellTheOuterCompletionNothingWasRequested() {
        let told = SharedLog()
        var transaction = UpdateTransaction(animation: .default)
        transaction.addCompletion { told.append("\($0)") }
        var deliveries = 0
        context.onUpdate { [unowned self] _ in
            deliveries += 1
            guard deliveries == 1 else { return }
            context.setNeedsUpdate()  // step 1 cannot deliver it (inside an updater)
            context.animateWithFlushedUpdates(transaction: transaction) { [context] in
                context!.setNeedsUpdate()
                context!.animateWithFlushedUpdates(transaction: UpdateTransaction(animation: .default)) {}
            }
        }
        context.setNeedsUpdate()
        XCTAssertNoThrow(try scheduler.runUntilIdle())
        XCTAssertEqual(told.entries, ["\(UpdateCompletion.shown(finished: true))"])
    }

    func testInsideAnUpdaterTheDeliveriesAreDoneInALaterCycle() {
        var once = true
        context.onUpdate { [unowned self] _ in
            guard once else { return }
            once = false
            context.animateWithFlushedUpdates(using: animate) { [context] in context!.setNeedsUpdate() }
        }
        context.setNeedsUpdate()
        scheduler.turn()
        XCTAssertEqual(written, ["n"], "no recursive delivery")
        XCTAssertTrue(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(written, ["n", "a"], "then once, animated")
    }
}
