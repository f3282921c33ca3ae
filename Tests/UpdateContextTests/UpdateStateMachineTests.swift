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
        XCTAssertTrue(machine.isTurnAsked)
        XCTAssertTrue(machine.isNoOp(nil), "the fast path")
        XCTAssertEqual(machine.setNeedsUpdate(nil), .none)
        XCTAssertEqual(machine.setNeedsUpdate(false), .none)
        XCTAssertEqual(machine.turnBegan(serial: 1), .run)
        XCTAssertEqual(machine.turnEnded(defaultAnimated: true), n, "the explicit false wins over the default")
        XCTAssertFalse(machine.isTurnAsked)
    }

    func testFalseThenTrueDeliversNowAndKeepsTheTurn() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.setNeedsUpdate(false), .askForTurn)
        XCTAssertEqual(
            machine.setNeedsUpdate(true),
            .deliverNow(Delivery(animated: false, isForced: false, isEarlyFlush: true), askForTurn: false),
            "already asked; the rules' early flush")
        XCTAssertEqual(machine.turnBegan(serial: 7), .run)
        XCTAssertEqual(machine.turnEnded(defaultAnimated: false), Delivery(animated: true, isForced: false))
    }

    func testUpdateIsAForcedDeliveryAndCancelsTheCycle() {
        var machine = UpdateStateMachine()
        _ = machine.setNeedsUpdate(true)
        XCTAssertEqual(
            machine.update(nil, defaultAnimated: false),
            .deliverNow(Delivery(animated: true, isForced: true), askForTurn: false))
        XCTAssertEqual(machine.turnBegan(serial: 1), .run)
        XCTAssertNil(machine.turnEnded(defaultAnimated: false), "the scheduled delivery was cancelled")
    }

    func testRequestsWhileDeliveringGoToTheInbox() {
        var machine = UpdateStateMachine()
        machine.deliveryBegan(n)
        XCTAssertFalse(machine.isNoOp(nil), "no fast path while updaters run")
        XCTAssertEqual(machine.setNeedsUpdate(true), .deferToInbox(.setNeedsUpdate(true)))
        XCTAssertEqual(machine.update(false, defaultAnimated: false), .deferToInbox(.update(false)))
        XCTAssertEqual(machine.turnBegan(serial: 3), .missed, "a nested run loop inside an updater")
        XCTAssertTrue(machine.deliveryEnded(inboxHasRequests: true), "passed by: it must register again")
        XCTAssertTrue(machine.isTurnAsked)
        XCTAssertEqual(machine.turnBegan(serial: 4), .run)
        XCTAssertNil(machine.turnEnded(defaultAnimated: false))
    }

    func testANestedTurnDuringADeliveryFromTheInboxIsMissedAndRegistersAgain() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.turnBegan(serial: 1), .run)
        guard case .deliverNow(let delivery, _) = machine.apply(.update(nil), defaultAnimated: false) else {
            return XCTFail("an update from the inbox delivers at once")
        }
        machine.deliveryBegan(delivery)
        XCTAssertEqual(machine.turnBegan(serial: 2), .missed, "an updater ran a nested loop")
        XCTAssertTrue(
            machine.deliveryEnded(inboxHasRequests: true),
            "registers again: what updaters posted waits for the next turn")
        XCTAssertNil(machine.turnEnded(defaultAnimated: false))
    }

    func testAContextPassedByWithNothingLeftAsksForNoTurn() {
        var machine = UpdateStateMachine()
        machine.deliveryBegan(n)
        XCTAssertEqual(machine.turnBegan(serial: 1), .missed)
        XCTAssertFalse(machine.deliveryEnded(inboxHasRequests: false), "nothing pending, nothing in the inbox")
        XCTAssertEqual(machine.setNeedsUpdate(nil), .askForTurn, "a later request lists it")
    }

    func testInsideATurnTheInboxNeedsNoTurnOfItsOwn() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.turnBegan(serial: 1), .run)
        XCTAssertEqual(machine.apply(.setNeedsUpdate(nil), defaultAnimated: false), .none, "this turn delivers it")
        XCTAssertFalse(machine.isTurnAsked)
        XCTAssertEqual(machine.turnEnded(defaultAnimated: false), n)
    }

    func testAContextListedTwiceInOneTurnRunsOnce() {
        var machine = UpdateStateMachine()
        _ = machine.setNeedsUpdate(nil)
        XCTAssertEqual(machine.turnBegan(serial: 5), .run)
        _ = machine.turnEnded(defaultAnimated: false)
        XCTAssertEqual(machine.turnBegan(serial: 5), .skip)
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
        XCTAssertEqual(machine.resume(defaultAnimated: false), .none, "listed already; not delivered recursively")
        XCTAssertFalse(machine.deliveryEnded(inboxHasRequests: false))
        XCTAssertEqual(machine.turnBegan(serial: 1), .run)
        XCTAssertEqual(machine.turnEnded(defaultAnimated: false), Delivery(animated: true, isForced: false))
    }

    func testACancelledMachineDoesNothing() {
        var machine = UpdateStateMachine()
        _ = machine.setNeedsUpdate(nil)
        machine.cancel()
        XCTAssertEqual(machine.setNeedsUpdate(true), .none)
        XCTAssertEqual(machine.update(nil, defaultAnimated: false), .none)
        XCTAssertEqual(machine.turnBegan(serial: 1), .skip)
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
