import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// The state machine on its own: every event, the action it returns and the phase it leaves.
final class UpdateStateMachineTests: XCTestCase {
    private let n = Delivery(animated: false)
    private let a = Delivery(animated: true)
    private let early = Delivery(animated: false, isEarlyFlush: true)

    func testTheFirstRequestOfACycleListsOnce() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.n(nil), .list)
        XCTAssertTrue(machine.listing.isAsked)
        XCTAssertTrue(machine.isNoOp(nil), "the fast path")
        XCTAssertEqual(machine.n(nil), .none)
        XCTAssertEqual(machine.n(false), .none)
        XCTAssertEqual(machine.phase, .scheduled(.init(flag: false)))
        XCTAssertEqual(machine.turn(serial: 1), .run)
        XCTAssertEqual(machine.endOfTurn(defaultAnimated: true), n, "the explicit false wins over the default")
        XCTAssertEqual(machine.phase, .delivering(n, next: nil), "a delivery that has begun")
        XCTAssertFalse(machine.deliveryEnded(inboxHasRequests: false))
        XCTAssertEqual(machine.phase, .idle)
        XCTAssertFalse(machine.listing.isAsked)
    }

    func testFalseThenTrueDeliversNowAndKeepsTheAnimatedRequestDue() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.n(false), .list)
        XCTAssertEqual(
            machine.request(.setNeedsUpdate(true), defaultAnimated: false), .deliver(early, list: false),
            "listed already; the rules' early flush")
        XCTAssertEqual(machine.phase, .delivering(early, next: .init(flag: true)))
        XCTAssertFalse(machine.deliveryEnded(inboxHasRequests: false))
        XCTAssertEqual(machine.turn(serial: 7), .run)
        XCTAssertEqual(machine.endOfTurn(defaultAnimated: false), a)
    }

    func testUpdateIsAForcedDeliveryAndCancelsTheCycle() {
        var machine = UpdateStateMachine()
        _ = machine.n(true)
        XCTAssertEqual(
            machine.request(.update(nil), defaultAnimated: false),
            .deliver(Delivery(animated: true, isForced: true), list: false))
        XCTAssertFalse(machine.deliveryEnded(inboxHasRequests: false))
        XCTAssertEqual(machine.turn(serial: 1), .run)
        XCTAssertNil(machine.endOfTurn(defaultAnimated: false), "the scheduled delivery was cancelled")
    }

    func testRequestsWhileDeliveringAreDeferred() {
        var machine = UpdateStateMachine()
        _ = machine.n(nil)
        _ = machine.deliverDue(defaultAnimated: false)
        XCTAssertFalse(machine.isNoOp(nil), "no fast path while updaters run")
        XCTAssertEqual(machine.request(.setNeedsUpdate(true), defaultAnimated: false), .defer)
        XCTAssertEqual(machine.request(.update(false), defaultAnimated: false), .defer)
        XCTAssertEqual(machine.turn(serial: 3), .missed, "a nested run loop inside an updater")
        XCTAssertTrue(machine.deliveryEnded(inboxHasRequests: true), "passed by: it must be listed again")
        XCTAssertTrue(machine.listing.isAsked)
        XCTAssertEqual(machine.turn(serial: 4), .run)
        XCTAssertNil(machine.endOfTurn(defaultAnimated: false))
    }

    func testANestedTurnDuringADeliveryFromTheInboxIsMissedAndListsAgain() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.turn(serial: 1), .run)
        guard case .deliver = machine.request(.update(nil), defaultAnimated: false) else {
            return XCTFail("an update from the inbox delivers at once")
        }
        XCTAssertEqual(machine.turn(serial: 2), .missed, "an updater ran a nested loop")
        XCTAssertTrue(
            machine.deliveryEnded(inboxHasRequests: true),
            "listed again: what updaters posted waits for the next turn")
        XCTAssertNil(machine.endOfTurn(defaultAnimated: false))
    }

    func testAContextPassedByWithNothingLeftAsksForNoTurn() {
        var machine = UpdateStateMachine()
        _ = machine.n(nil)
        _ = machine.deliverDue(defaultAnimated: false)
        XCTAssertEqual(machine.turn(serial: 1), .missed)
        XCTAssertFalse(machine.deliveryEnded(inboxHasRequests: false), "nothing pending, nothing in the inbox")
        XCTAssertEqual(machine.n(nil), .list, "a later request lists it")
    }

    func testInsideATurnTheInboxNeedsNoListingOfItsOwn() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.turn(serial: 1), .run)
        XCTAssertEqual(machine.n(nil), .none, "this turn delivers it")
        XCTAssertFalse(machine.listing.isAsked)
        XCTAssertEqual(machine.endOfTurn(defaultAnimated: false), n)
    }

    func testAContextListedTwiceInOneTurnRunsOnce() {
        var machine = UpdateStateMachine()
        _ = machine.n(nil)
        XCTAssertEqual(machine.turn(serial: 5), .run)
        _ = machine.endOfTurn(defaultAnimated: false)
        _ = machine.deliveryEnded(inboxHasRequests: false)
        XCTAssertEqual(machine.turn(serial: 5), .skip)
    }

    func testAResumeKeptUpdateIsForced() {
        var machine = UpdateStateMachine()
        machine.suspend(at: 0)
        XCTAssertEqual(machine.request(.update(nil), defaultAnimated: false), .none)
        XCTAssertEqual(machine.phase, .held(.init(flag: nil, isForced: true)), "held for the last resume()")
        XCTAssertEqual(
            machine.resume(defaultAnimated: true), .deliver(Delivery(animated: true, isForced: true), list: false))
        _ = machine.deliveryEnded(inboxHasRequests: false)
        machine.suspend(at: 0)
        _ = machine.n(nil)
        XCTAssertEqual(machine.resume(defaultAnimated: false), .deliver(n, list: false), "a kept request is not forced")
    }

    func testTheLastResumeWhileUpdatersRunLeavesTheKeptUpdateForTheNextTurn() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.n(false), .list)
        guard case .deliver = machine.request(.setNeedsUpdate(true), defaultAnimated: false) else {
            return XCTFail("F then T flushes early")
        }
        machine.suspend(at: 0)  // the early flush's updater suspends and resumes
        XCTAssertEqual(machine.resume(defaultAnimated: false), .none, "listed already; not delivered recursively")
        XCTAssertFalse(machine.deliveryEnded(inboxHasRequests: false))
        XCTAssertEqual(machine.turn(serial: 1), .run)
        XCTAssertEqual(machine.endOfTurn(defaultAnimated: false), a)
    }

    func testACancelledMachineDoesNothing() {
        var machine = UpdateStateMachine()
        _ = machine.n(nil)
        machine.cancel()
        XCTAssertEqual(machine.n(true), .none)
        XCTAssertEqual(machine.request(.update(nil), defaultAnimated: false), .none)
        XCTAssertEqual(machine.turn(serial: 1), .skip)
    }

    /// A delivery's end counts a cycle towards an update loop when its updaters requested their own context, and
    /// starts again from nothing when they did not.
    func testTheLoopCountFollowsDeliveriesThatRequestedThemselves() {
        var machine = UpdateStateMachine()
        for cycle in 1...3 {
            _ = machine.n(nil)
            _ = machine.deliverDue(defaultAnimated: false)
            machine.diagnostics.bits.insert(.requestedInDelivery)
            _ = machine.deliveryEnded(inboxHasRequests: false)
            XCTAssertEqual(machine.diagnostics.loopCount, UInt8(cycle))
        }
        _ = machine.n(nil)
        _ = machine.deliverDue(defaultAnimated: false)
        _ = machine.deliveryEnded(inboxHasRequests: false)
        XCTAssertEqual(machine.diagnostics.loopCount, 0)
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
