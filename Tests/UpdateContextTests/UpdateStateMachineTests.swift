import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// The lifecycle state machine on its own: every event and the action it returns.
final class UpdateStateMachineTests: XCTestCase {
    private let n = Delivery(animated: false, isForced: false)

    func testTheFirstRequestOfACycleAsksForOneTurn() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.setNeedsUpdate(nil), .askForTurn)
        XCTAssertTrue(machine.isNoOp(nil), "the fast path")
        XCTAssertEqual(machine.setNeedsUpdate(nil), .none)
        XCTAssertEqual(machine.setNeedsUpdate(false), .none)
        XCTAssertTrue(machine.turnBegan(1))
        XCTAssertEqual(machine.turnEnded(defaultAnimated: true), n, "the explicit false wins over the default")
        XCTAssertEqual(machine.setNeedsUpdate(nil), .askForTurn, "the next cycle's first request asks again")
    }

    func testFalseThenTrueDeliversNowAndKeepsTheTurn() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.setNeedsUpdate(false), .askForTurn)
        XCTAssertEqual(
            machine.setNeedsUpdate(true),
            .deliverNow(Delivery(animated: false, isForced: false, isEarlyFlush: true), askForTurn: false),
            "already asked; the rules' early flush")
        XCTAssertTrue(machine.turnBegan(1))
        XCTAssertEqual(machine.turnEnded(defaultAnimated: false), Delivery(animated: true, isForced: false))
    }

    func testUpdateIsAForcedDeliveryAndCancelsTheCycle() {
        var machine = UpdateStateMachine()
        _ = machine.setNeedsUpdate(true)
        XCTAssertEqual(
            machine.update(nil, defaultAnimated: false),
            .deliverNow(Delivery(animated: true, isForced: true), askForTurn: false))
        XCTAssertTrue(machine.turnBegan(1))
        XCTAssertNil(machine.turnEnded(defaultAnimated: false), "the scheduled delivery was cancelled")
    }

    func testRequestsWhileDeliveringGoToTheInbox() {
        var machine = UpdateStateMachine()
        machine.deliveryBegan(n)
        XCTAssertFalse(machine.isNoOp(nil), "no fast path while updaters run")
        XCTAssertEqual(machine.setNeedsUpdate(true), .deferToInbox(.setNeedsUpdate(true)))
        XCTAssertEqual(machine.update(false, defaultAnimated: false), .deferToInbox(.update(false)))
        XCTAssertFalse(machine.turnBegan(1), "a nested run loop inside an updater passes it by")
        XCTAssertTrue(machine.deliveryEnded(), "passed by: it must be listed again")
        XCTAssertTrue(machine.turnBegan(1))
        XCTAssertNil(machine.turnEnded(defaultAnimated: false))
    }

    func testANestedTurnDuringADeliveryFromTheInboxIsMissedAndRegistersAgain() {
        var machine = UpdateStateMachine()
        XCTAssertTrue(machine.turnBegan(1))
        guard case .deliverNow(let delivery, _) = machine.apply(.update(nil), defaultAnimated: false) else {
            return XCTFail("an update from the inbox delivers at once")
        }
        machine.deliveryBegan(delivery)
        XCTAssertFalse(machine.turnBegan(1), "an updater ran a nested loop")
        XCTAssertTrue(machine.deliveryEnded(), "registers again: what updaters posted waits for the next turn")
        XCTAssertNil(machine.turnEnded(defaultAnimated: false))
    }

    func testInsideATurnTheInboxNeedsNoTurnOfItsOwn() {
        var machine = UpdateStateMachine()
        XCTAssertTrue(machine.turnBegan(1))
        XCTAssertEqual(machine.apply(.setNeedsUpdate(nil), defaultAnimated: false), .none, "this turn delivers it")
        XCTAssertEqual(machine.turnEnded(defaultAnimated: false), n)
    }

    func testAContextRequestedFromTwoThreadsInOneCycleIsListedForOneTurnOnce() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var deliveries = 0
        context.onUpdate { _ in deliveries += 1 }
        DispatchQueue.global().sync { context.setNeedsUpdate() }  // listed by another thread
        context.setNeedsUpdate(animated: false)  // applies the inbox, then its own request: not listed again
        DispatchQueue.global().sync { context.setNeedsUpdate(animated: true) }
        XCTAssertEqual(scheduler.turn(), 1, "one client called")
        XCTAssertEqual(deliveries, 2, "the early flush of the inbox's true, then the turn's delivery")
        context.setNeedsUpdate()
        XCTAssertEqual(scheduler.turn(), 1, "listed again after its turn")
        XCTAssertEqual(deliveries, 3)
    }

    func testAResumeKeptUpdateIsForced() {
        var machine = UpdateStateMachine()
        machine.suspend()
        XCTAssertEqual(machine.update(nil, defaultAnimated: false), .none)
        XCTAssertEqual(
            machine.resume(defaultAnimated: true),
            .deliverNow(Delivery(animated: true, isForced: true), askForTurn: false))
        machine.suspend()
        _ = machine.setNeedsUpdate(nil)
        XCTAssertEqual(
            machine.resume(defaultAnimated: false), .deliverNow(n, askForTurn: false), "a kept request is not forced")
    }

    func testTheLastResumeWhileUpdatersRunLeavesTheKeptUpdateForTheNextTurn() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.setNeedsUpdate(false), .askForTurn)
        guard case .deliverNow(let flush, _) = machine.setNeedsUpdate(true) else {
            return XCTFail("F then T flushes early")
        }
        machine.deliveryBegan(flush)  // the early flush's updater suspends and resumes
        machine.suspend()
        XCTAssertEqual(machine.resume(defaultAnimated: false), .askForTurn, "listed, not delivered recursively")
        XCTAssertFalse(machine.deliveryEnded())
        XCTAssertTrue(machine.turnBegan(1))
        XCTAssertEqual(machine.turnEnded(defaultAnimated: false), Delivery(animated: true, isForced: false))
    }

    func testACancelledMachineDoesNothing() {
        var machine = UpdateStateMachine()
        _ = machine.setNeedsUpdate(nil)
        machine.cancel()
        XCTAssertEqual(machine.setNeedsUpdate(true), .none)
        XCTAssertEqual(machine.update(nil, defaultAnimated: false), .none)
        XCTAssertTrue(machine.turnBegan(1))
        XCTAssertNil(machine.turnEnded(defaultAnimated: false))
    }

    // MARK: the inbox

    private func entries(_ requests: [UpdateRequest]) -> [InboxEntry] {
        var inbox: [InboxEntry] = []
        for request in requests {
            UpdateStateMachine.enqueue(InboxEntry(request: request, note: RequestNote(nil)), into: &inbox)
        }
        return inbox
    }

    private func inbox(_ requests: [UpdateRequest]) -> [UpdateRequest] {
        entries(requests).map(\.request)
    }

    func testTheInboxDropsWhatChangesNothing() {
        XCTAssertEqual(
            inbox([.setNeedsUpdate(nil), .setNeedsUpdate(nil), .setNeedsUpdate(nil)]), [.setNeedsUpdate(nil)])
        XCTAssertEqual(
            inbox([.setNeedsUpdate(true), .setNeedsUpdate(nil), .setNeedsUpdate(true)]), [.setNeedsUpdate(true)])
        XCTAssertEqual(
            inbox([.setNeedsUpdate(nil), .setNeedsUpdate(false)]), [.setNeedsUpdate(nil), .setNeedsUpdate(false)])
    }

    func testTheInboxStaysSmallUnderAlternatingFlags() {
        let requests = (0..<10_000).map { UpdateRequest.setNeedsUpdate($0 % 2 == 1) }
        let kept = inbox(requests)
        XCTAssertEqual(kept, [.setNeedsUpdate(false), .setNeedsUpdate(true)])
        XCTAssertEqual(
            inbox([.setNeedsUpdate(true), .setNeedsUpdate(false)]), [.setNeedsUpdate(true), .setNeedsUpdate(false)])
    }

    func testRefreshesThatArriveTogetherCollapseIntoTheLastOne() {
        XCTAssertEqual(
            inbox([.update(nil), .setNeedsUpdate(true), .update(nil)]), [.setNeedsUpdate(true), .update(nil)],
            "the cycle's last delivery is the forced one")
        XCTAssertEqual(inbox([.update(true), .update(true)]), [.update(true), .update(true)], "explicit updates stay")
    }

    /// What the inbox merges still counts: each kept entry stands for the requests merged into it, so that a
    /// delivery's report says how many requests it absorbed.
    func testMergedRequestsAreCountedByTheEntryThatKeepsThem() {
        XCTAssertEqual(
            entries([.setNeedsUpdate(nil), .setNeedsUpdate(nil), .setNeedsUpdate(nil)]).map(\.note.count), [3])
        let alternating = (0..<10).map { UpdateRequest.setNeedsUpdate($0 % 2 == 1) }
        XCTAssertEqual(entries(alternating).map(\.note.count), [1, 9])
        XCTAssertEqual(entries([.update(nil), .setNeedsUpdate(true), .update(nil)]).map(\.note.count), [1, 2])
    }
}
