import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// `PassScheduler` under random interleavings (issue 24): several contexts on one scheduler, requests
/// from the main thread and from others, passes by `runPass()` and by a context's `updateIfNeeded()`,
/// and single hops of the main queue, where the fallbacks live (one main run-loop iteration runs exactly
/// the blocks queued before it). Checked against the scheduler's own batch numbers: a delivery outside a
/// pass happens only in the hop where an unserved batch's fallback is due (its second), each batch asks
/// for one pass, the fallback's hook runs in exactly the hops where the fallback delivered, and at the end
/// nothing is left pending.
final class PassSchedulerRandomTests: XCTestCase {
    private final class Probe: @unchecked Sendable {
        // @unchecked Sendable: touched on the main thread only (updaters, passes, the pass requests).
        var insidePass = false
        var outsidePass = 0
        var deliveries = 0
        var asked = 0
        var fellBack = 0
    }

    func testRandomBatchesPassesAndHopsNeverDeliverALaterBatchFromAnEarlierFallback() {
        for seed in randomSeeds(fixed: [4, 8, 15]) {
            run(seed: seed, steps: 120)
        }
    }

    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        let probe = Probe()
        let scheduler = PassScheduler(requestPass: { probe.asked += 1 }, fellBack: { probe.fellBack += 1 })
        let contexts = (0..<3).map { _ in ViewUpdatingContext(scheduler: scheduler, refreshEvents: []) }
        for context in contexts {
            context.onUpdate { _ in
                probe.deliveries += 1
                if !probe.insidePass { probe.outsidePass += 1 }
            }
        }
        let firstBatch = scheduler.newestBatch
        /// Hops each batch has had since it opened (its fallback runs at its second).
        var hops: [UInt64: Int] = [:]
        var log: [String] = []
        func hop() -> Bool {
            // Which unserved batch's fallback is due in this hop.
            var due = false
            if scheduler.hasRequestedTurn, !scheduler.hasServed(batch: scheduler.newestBatch) {
                let batch = scheduler.newestBatch
                hops[batch, default: 0] += 1
                due = hops[batch] == 2
            }
            let before = probe.outsidePass
            let fellBackBefore = probe.fellBack
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
            if probe.outsidePass != before && !due {
                XCTFail("seed \(seed): delivered outside a pass with no fallback due; last steps \(log.suffix(10))")
                return false
            }
            // The fallback's hook (the missed-pass report of a bound view) runs exactly when it delivered.
            if (probe.fellBack - fellBackBefore) != (probe.outsidePass != before ? 1 : 0) {
                XCTFail(
                    "seed \(seed): fallback hook \(probe.fellBack - fellBackBefore) times in a hop that delivered "
                        + "\(probe.outsidePass - before) outside a pass; last steps \(log.suffix(10))")
                return false
            }
            return true
        }
        for _ in 0..<steps {
            let context = contexts.randomElement(using: &random)!
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                log.append("main")
                for _ in 0...Int.random(in: 0..<3, using: &random) {
                    context.setNeedsUpdate(animated: [nil, false, true].randomElement(using: &random)!)
                }
            case 3..<5:
                log.append("other")
                onAnotherThread { context.setNeedsUpdate() }
            case 5..<7:
                log.append("pass")
                probe.insidePass = true
                if Bool.random(using: &random) { scheduler.runPass() } else { context.updateIfNeeded() }
                probe.insidePass = false
            default:
                log.append("hop")
                if !hop() { return }
            }
        }
        // To idleness: passes may never come; the fallbacks deliver what is left.
        var rounds = 0
        while contexts.contains(where: \.isUpdatePending) || scheduler.hasRequestedTurn, rounds < 50 {
            if !hop() { return }
            rounds += 1
        }
        for _ in 0..<3 { _ = hop() }  // the hops still queued find nothing to take
        XCTAssertFalse(contexts.contains(where: \.isUpdatePending), "seed \(seed): an update left pending")
        XCTAssertEqual(
            probe.asked, Int(scheduler.newestBatch - firstBatch), "seed \(seed): one pass asked per batch")
    }
}
