import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: targets

    mutating func evaluateTargets() {
        func ratio(_ value: Double) -> String { String(format: "%.1f×", value) }
        if let dirty {
            report.targets.append(
                Target(
                    figure: "request on a dirty context vs NotificationQueue.enqueue", target: "≥ 40× cheaper",
                    measured: ratio(dirty.foundation / dirty.ours), met: dirty.foundation / dirty.ours >= 40))
            report.targets.append(
                Target(
                    figure: "request on a dirty context vs Observation", target: "≥ 4× cheaper",
                    measured: ratio(dirty.observation / dirty.ours), met: dirty.observation / dirty.ours >= 4))
            report.targets.append(
                Target(
                    figure: "request on a dirty context vs floor", target: "≤ 3× the floor",
                    measured: ratio(dirty.floorRatio), met: dirty.floorRatio <= 3))
        }
        if let transactionRatio {
            report.targets.append(
                Target(
                    figure: "request carrying a transaction vs a plain request (dirty context)", target: "≤ 2×",
                    measured: ratio(transactionRatio), met: transactionRatio <= 2))
        }
        if let big = fanOut[100_000] {
            report.targets.append(
                Target(
                    figure: "fan-out per context at N=100 000 vs floor", target: "≤ 2× the floor",
                    measured: ratio(big.floorRatio), met: big.floorRatio <= 2))
        } else {
            report.targets.append(
                Target(
                    figure: "fan-out per context at N=100 000 vs floor", target: "≤ 2× the floor", measured: "–",
                    met: nil))
        }
        if let flat = fanOutFlatness {
            report.targets.append(
                Target(
                    figure: "fan-out flat: N=100 000 vs N=1 000", target: "within 1.3×",
                    measured: ratio(flat), met: flat <= 1.3))
        } else {
            report.targets.append(
                Target(figure: "fan-out flat: N=100 000 vs N=1 000", target: "within 1.3×", measured: "–", met: nil))
        }
        if let at = fanOut[10_000], let foundation = at.foundation {
            report.targets.append(
                Target(
                    figure: "fan-out vs one NotificationQueue at N=10 000", target: "≥ 1 000× cheaper",
                    measured: ratio(foundation / at.ours), met: foundation / at.ours >= 1_000))
        } else {
            report.targets.append(
                Target(
                    figure: "fan-out vs one NotificationQueue at N=10 000", target: "≥ 1 000× cheaper", measured: "–",
                    met: nil))
        }
        if let advantage = typedMessageAdvantage {
            report.targets.append(
                Target(
                    figure: "typed message enqueue (already pending) vs post(_:subject:) to one observer",
                    target: "≥ 20× cheaper", measured: ratio(advantage), met: advantage >= 20))
        }
        if let trackedUpdateViewRatio {
            report.targets.append(
                Target(
                    figure: "updateView tracked vs untracked (per delivery)", target: "≤ 1.5×",
                    measured: ratio(trackedUpdateViewRatio), met: trackedUpdateViewRatio <= 1.5))
        }
        if let scopeEntryRatio {
            report.targets.append(
                Target(
                    figure: "animated scope entry, nothing pending, vs a plain request (dirty context)",
                    target: "≤ 150×", measured: String(format: "%.0f×", scopeEntryRatio), met: scopeEntryRatio <= 150))
        }
        if let releasedTrackedExtraBytes {
            report.targets.append(
                Target(
                    figure: "memory held per released tracked screen vs untracked", target: "equal (≤ +16 B)",
                    measured: String(format: "%+.0f B", releasedTrackedExtraBytes),
                    met: releasedTrackedExtraBytes <= 16))
        }
        let deliveryChecks = report.checks.filter { !$0.name.hasPrefix("memory") }
        report.targets.append(
            Target(
                figure: "deliveries", target: "exactly 1 per dirty context per cycle; 0 lost",
                measured: "\(deliveryChecks.filter(\.passed).count)/\(deliveryChecks.count) checks pass",
                met: deliveryChecks.allSatisfy(\.passed)))
        if let idleBytes {
            report.targets.append(
                Target(
                    figure: "memory per idle context", target: "≤ 300 bytes",
                    measured: String(format: "%.0f B", idleBytes),
                    met: idleBytes <= 300))
        }
        if let one = enqueueCost[1], let many = enqueueCost[100_000] {
            report.targets.append(
                Target(
                    figure: "coalescing enqueue with 100 000 pending vs 1 pending", target: "within 2× (O(1))",
                    measured: ratio(many / one), met: many / one <= 2))
        }
    }
}
