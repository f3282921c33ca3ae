import NotificationCoalescing
import XCTest

@testable import UpdateContext

/// The precedence rules: the pure value directly, then every timeline of CONTRACT.md through a real
/// context, then a model-based comparison with an independent reference.
final class UpdateRulesTests: XCTestCase {
    // MARK: the value type

    func testRequestsOnThePureValue() {
        var rules = UpdateRules()
        XCTAssertEqual(rules.request(nil), .init(deliverNow: nil, needsTurn: true))
        XCTAssertTrue(rules.isNoOp(nil))
        XCTAssertEqual(rules.request(false), .init(deliverNow: nil, needsTurn: false))
        XCTAssertEqual(rules.pendingFlag, false)
        XCTAssertFalse(rules.isNoOp(true))
        XCTAssertEqual(rules.request(true), .init(deliverNow: false, needsTurn: false), "F then T flushes early")
        XCTAssertEqual(rules.pendingFlag, true)
        XCTAssertEqual(rules.endOfCycle(defaultAnimated: false), true)
        XCTAssertNil(rules.pendingFlag)
        XCTAssertFalse(rules.isScheduled)
        XCTAssertNil(rules.endOfCycle(defaultAnimated: false), "nothing scheduled")
    }

    func testUpdateCancelsTheScheduledDelivery() {
        var rules = UpdateRules()
        _ = rules.request(true)
        XCTAssertEqual(rules.update(nil, defaultAnimated: false), true)
        XCTAssertFalse(rules.isScheduled)
        XCTAssertEqual(rules.update(false, defaultAnimated: true), false)
        XCTAssertEqual(rules.update(nil, defaultAnimated: true), true)
    }

    func testSuspensionKeepsRequestsForResume() {
        var rules = UpdateRules()
        rules.suspend()
        XCTAssertEqual(rules.request(false), .init(deliverNow: nil, needsTurn: false))
        XCTAssertEqual(rules.request(true), .init(deliverNow: nil, needsTurn: false), "no flush while suspended")
        XCTAssertNil(rules.endOfCycle(defaultAnimated: true))
        XCTAssertEqual(rules.resume(defaultAnimated: true), false, "the non-animated change must not animate")
        XCTAssertNil(rules.endOfCycle(defaultAnimated: true))
    }

    // MARK: the contract's timelines

    func testEveryTimelineOfTheContract() {
        let rows: [(String, Bool, String)] = [
            ("N N N |", false, "N N N | n"),
            ("T T |", false, "T T | a"),
            ("N T |", false, "N T | a"),
            ("F T |", false, "F T n | a"),
            ("T F |", false, "T F | n"),
            ("F T F T |", false, "F T n F T n | a"),
            ("N U |", false, "N U n |"),
            ("T U |", false, "T U a |"),
            ("F U(T) |", false, "F U(T) a |"),
            ("T | N |", false, "T | a N | n"),
            ("N |", true, "N | a"),
            ("F |", true, "F | n"),
        ]
        for (timeline, defaultAnimated, expected) in rows {
            XCTAssertEqual(play(timeline, defaultAnimated: defaultAnimated, updaters: 2), expected, timeline)
        }
    }

    func testMoreTimelines() {
        XCTAssertEqual(play("| | |"), "| | |", "no request, no delivery")
        XCTAssertEqual(play("U"), "U n", "update() with nothing pending still delivers")
        XCTAssertEqual(play("F T T |"), "F T n T | a")
        XCTAssertEqual(play("F F T |"), "F F T n | a")
        XCTAssertEqual(play("T U(F) |"), "T U(F) n |")
        XCTAssertEqual(play("N I I |"), "N I n I |", "updateIfNeeded delivers only what is pending")
        XCTAssertEqual(
            play("F T", defaultAnimated: true), "F T n", "the early flush is not animated whatever the default")
        XCTAssertEqual(play("S N N | | R |"), "S N N | | R n |", "suspended: kept, delivered once on resume")
        XCTAssertEqual(play("S F T | R"), "S F T | R n", "suspended F T: the non-animated change wins")
        XCTAssertEqual(play("S S T | R | R |"), "S S T | R | R a |", "suspensions nest")
        XCTAssertEqual(play("S U(T) R"), "S U(T) R a", "update() while suspended waits for resume")
        XCTAssertEqual(play("S R |"), "S R |", "resume with nothing kept delivers nothing")
    }

    // MARK: model-based

    /// An independent reading of the contract's table: it keeps the explicit flags requested since the
    /// last delivery as a list and derives everything from it.
    private struct ReferenceModel {
        var defaultAnimated: Bool
        var flagsSinceDelivery: [Bool] = []
        var dirty = false
        var suspended = 0
        var deliveries: [Bool] = []

        private var lastExplicit: Bool? { flagsSinceDelivery.last }

        private mutating func emit() {
            deliveries.append(lastExplicit ?? defaultAnimated)
            flagsSinceDelivery = []
            dirty = false
        }

        mutating func setNeeds(_ flag: Bool?) {
            if flag == true && lastExplicit == false {
                if suspended > 0 {
                    dirty = true
                    return
                }
                deliveries.append(false)
                flagsSinceDelivery = []
            }
            if let flag { flagsSinceDelivery.append(flag) }
            dirty = true
        }

        mutating func update(_ flag: Bool?) {
            if let flag { flagsSinceDelivery.append(flag) }
            if suspended > 0 {
                dirty = true
            } else {
                emit()
            }
        }

        mutating func endOfCycle() {
            if dirty && suspended == 0 { emit() }
        }

        mutating func resume() {
            suspended -= 1
            endOfCycle()
        }
    }

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
            var model = ReferenceModel(defaultAnimated: startDefault)
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
                    context.animated = value
                    model.defaultAnimated = value
                    log.append("animated=\(value)")
                case 90..<95:
                    context.suspend()
                    model.suspended += 1
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
        }
        XCTAssertEqual(divergences, 0)
        XCTAssertGreaterThan(totalDeliveries, 10_000, "the sequences exercise deliveries")
    }
}

/// A small deterministic generator, so a failing sequence can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
