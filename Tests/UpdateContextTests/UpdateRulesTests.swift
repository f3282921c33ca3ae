import CoalescingTestSupport
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// The precedence rules: the pure value directly, then every timeline of CONTRACT.md through a real
/// context, then a model-based comparison with an independent reference.
final class UpdateRulesTests: XCTestCase {
    // MARK: the state machine's rules, as a pure value

    func testRequestsOnThePureValue() {
        var machine = UpdateStateMachine()
        XCTAssertEqual(machine.n(nil), .list)
        XCTAssertTrue(machine.isNoOp(nil))
        XCTAssertEqual(machine.n(false), .none)
        XCTAssertEqual(machine.due?.flag, false)
        XCTAssertFalse(machine.isNoOp(true))
        XCTAssertEqual(
            machine.n(true), .deliver(Delivery(animated: false, isEarlyFlush: true), list: false),
            "F then T flushes early")
        XCTAssertEqual(machine.due?.flag, true, "the animated request, due behind the flush")
        XCTAssertFalse(machine.deliveryEnded(inboxHasRequests: false))
        XCTAssertEqual(machine.playEndOfCycle(defaultAnimated: false), true)
        XCTAssertNil(machine.due)
        XCTAssertNil(machine.playEndOfCycle(defaultAnimated: false), "nothing due")
    }

    func testUpdateCancelsTheScheduledDelivery() {
        var machine = UpdateStateMachine()
        _ = machine.n(true)
        XCTAssertEqual(machine.play(.update(nil), defaultAnimated: false), true)
        XCTAssertNil(machine.due)
        XCTAssertEqual(machine.play(.update(false), defaultAnimated: true), false)
        XCTAssertEqual(machine.play(.update(nil), defaultAnimated: true), true)
    }

    func testSuspensionKeepsRequestsForResume() {
        var machine = UpdateStateMachine()
        machine.suspend(at: 0)
        XCTAssertEqual(machine.n(false), .none)
        XCTAssertEqual(machine.n(true), .none, "no flush while suspended")
        XCTAssertNil(machine.playEndOfCycle(defaultAnimated: true))
        XCTAssertEqual(
            machine.resume(defaultAnimated: true), .deliver(Delivery(animated: false), list: false),
            "the non-animated change must not animate")
        _ = machine.deliveryEnded(inboxHasRequests: false)
        XCTAssertNil(machine.playEndOfCycle(defaultAnimated: true))
    }

    func testAnUpdateKeptWhileSuspendedIsForcedOnResume() {
        var machine = UpdateStateMachine()
        machine.suspend(at: 0)
        XCTAssertNil(machine.play(.update(true), defaultAnimated: false))
        XCTAssertEqual(machine.due?.isForced, true)
        XCTAssertEqual(
            machine.resume(defaultAnimated: false), .deliver(Delivery(animated: true, isForced: true), list: false))
        _ = machine.deliveryEnded(inboxHasRequests: false)
        XCTAssertNil(machine.due)
    }

    // MARK: the contract's timelines

    func testEveryTimelineOfTheContract() {
        XCTAssertEqual(PrecedenceTable.contract.count, 12, "every row of CONTRACT.md")
        for row in PrecedenceTable.contract {
            XCTAssertEqual(
                play(row.timeline, defaultAnimated: row.defaultAnimated, updaters: 2), row.expected, "\(row)")
        }
    }

    func testMoreTimelines() {
        for row in PrecedenceTable.more {
            XCTAssertEqual(
                play(row.timeline, defaultAnimated: row.defaultAnimated, updaters: 2), row.expected, "\(row)")
        }
    }

    // MARK: model-based

    func testTenThousandRandomSequencesAgainstTheReferenceModel() {
        var generator = SplitMix64(seed: 0x5EED_C0A1_E5CE)
        var divergences = 0
        var totalDeliveries = 0
        for sequence in 0..<10_000 {
            let startDefault = Bool.random(using: &generator)
            let scheduler = ManualScheduler()
            let context = ViewUpdatingContext(animated: startDefault, scheduler: scheduler, refreshEvents: [])
            var first: [Bool] = []
            var second: [Bool] = []
            context.onUpdate { first.append($0) }
            context.onUpdate { second.append($0) }
            var model = ReferenceRules(defaultAnimated: startDefault)
            var log: [String] = []
            for _ in 0..<Int.random(in: 1...24, using: &generator) {
                let flag: Bool? = [nil, false, true].randomElement(using: &generator)!
                switch Int.random(in: 0..<100, using: &generator) {
                case 0..<50:
                    context.setNeedsUpdate(animated: flag)
                    model.setNeeds(flag)
                    log.append("set(\(String(describing: flag)))")
                case 50..<62:
                    context.update(animated: flag)
                    model.update(flag)
                    log.append("update(\(String(describing: flag)))")
                case 62..<84:
                    scheduler.turn()
                    model.endOfCycle()
                    log.append("|")
                case 84..<90:
                    let value = Bool.random(using: &generator)
                    context.animatesByDefault = value
                    model.defaultAnimated = value
                    log.append("animated=\(value)")
                case 90..<95:
                    context.suspend()
                    model.suspend()
                    log.append("suspend")
                default:
                    if model.suspended > 0 {
                        context.resume()
                        model.resume()
                        log.append("resume")
                    } else {
                        context.updateIfNeeded()
                        model.endOfCycle()
                        log.append("ifNeeded")
                    }
                }
                XCTAssertEqual(context.isUpdatePending, model.dirty, "pending after \(log)")
            }
            while model.suspended > 0 {
                context.resume()
                model.resume()
            }
            scheduler.turn()
            model.endOfCycle()
            totalDeliveries += model.deliveries.count
            if first != model.deliveries || second != first {
                divergences += 1
                if divergences <= 3 {
                    XCTFail("sequence \(sequence): \(log) → got \(first)/\(second), model \(model.deliveries)")
                }
            }
            XCTAssertFalse(context.isUpdatePending)
            XCTAssertTrue(scheduler.isIdle, "work left pending after \(log)")
        }
        XCTAssertEqual(divergences, 0)
        XCTAssertGreaterThan(totalDeliveries, 10_000, "the sequences exercise deliveries")
    }
}
