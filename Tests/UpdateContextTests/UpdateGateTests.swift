import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// The decision logic of the SwiftUI update gates, on every platform: `UpdateGate` itself, and every row
/// of each gate's table played on a model of SwiftUI's `EquatableView` that carries real gates, against
/// the rows and against the rules written out apart (`referenceGateTimeline`).
final class UpdateGateTests: XCTestCase {
    func testEveryRowOfEachGatesTable() {
        for row in GateTable.rows {
            XCTAssertEqual(playGateTimeline(row.kind, row.timeline), row.expected, "\(row)")
            XCTAssertEqual(referenceGateTimeline(row.kind, row.timeline), row.expected, "reference: \(row)")
        }
    }

    func testTheTableCoversEveryGateAndEveryToken() {
        for kind in GateKind.allCases {
            let timelines = GateTable.rows.filter { $0.kind == kind }.map(\.timeline).joined(separator: " ")
            XCTAssertTrue(timelines.contains("s"), "\(kind): no row with the content's own state")
            XCTAssertTrue(timelines.contains("p"), "\(kind): no row with the parent")
        }
        XCTAssertTrue(GateTable.rows.contains { $0.kind == .onEvent && $0.timeline.contains("e") })
    }

    func testRandomTimelinesAgreeWithTheReferenceRules() {
        for seed in randomSeeds(fixed: [1, 2, 3, 0xC0FFEE]) {
            var generator = SeededGenerator(seed: seed)
            for kind in GateKind.allCases {
                for _ in 0..<200 {
                    let timeline = randomGateTimeline(kind, steps: 12, using: &generator)
                    let played = playGateTimeline(kind, timeline)
                    guard played == referenceGateTimeline(kind, timeline) else {
                        XCTFail("seed \(seed), \(kind): \(timeline) played \(played)")
                        return
                    }
                }
            }
        }
    }

    func testAChangeGatePassesOnADifferentKeyOnly() {
        let first = UpdateGate(onChangeOf: "a")
        XCTAssertFalse(UpdateGate(onChangeOf: "a").passes(after: first))
        XCTAssertTrue(UpdateGate(onChangeOf: "b").passes(after: first))
        XCTAssertEqual(first.rule, .onChange)
        XCTAssertTrue(first.isOpen)
    }

    func testAWhileOpenGateLooksOnlyAtTheNewerGate() {
        let open = UpdateGate.whileOpen(true)
        let closed = UpdateGate.whileOpen(false)
        XCTAssertTrue(UpdateGate.whileOpen(true).passes(after: open))
        XCTAssertTrue(UpdateGate.whileOpen(true).passes(after: closed))
        XCTAssertFalse(UpdateGate.whileOpen(false).passes(after: open))
        XCTAssertFalse(UpdateGate.whileOpen(false).passes(after: closed))
        XCTAssertEqual(open.rule, .whileOpen)
    }

    /// SwiftUI does not say which side of `==` is the view it holds: the answer must not depend on it.
    func testTheDecisionDoesNotDependOnTheOrderOfTheOperands() {
        let older = UpdateGate.whileOpen(false)
        let newer = UpdateGate.whileOpen(true)
        XCTAssertTrue(older.passes(comparedWith: newer))
        XCTAssertTrue(newer.passes(comparedWith: older))
        let closedAfterOpen = UpdateGate.whileOpen(false)
        XCTAssertFalse(newer.passes(comparedWith: closedAfterOpen))
        XCTAssertFalse(closedAfterOpen.passes(comparedWith: newer))
    }

    func testAGateComparedWithItselfDoesNotPass() {
        let open = UpdateGate.whileOpen(true)
        XCTAssertFalse(open.passes(comparedWith: open))
        let change = UpdateGate(onChangeOf: 1)
        XCTAssertFalse(change.passes(comparedWith: change))
    }

    func testGatesMadeOnManyThreadsGetDistinctIncreasingGenerations() {
        let threads = 4
        let perThread = 10_000
        let results = NotificationCoalescing.Locked([[UInt64]]())
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            var mine: [UInt64] = []
            mine.reserveCapacity(perThread)
            for index in 0..<perThread { mine.append(UpdateGate(onChangeOf: index).generation) }
            results.withLock { $0.append(mine) }
        }
        let all = results.withLock { $0 }
        for mine in all { XCTAssertEqual(mine, mine.sorted(), "generations go up on each thread") }
        XCTAssertEqual(Set(all.joined()).count, threads * perThread, "no generation given twice")
    }
}
