import CoalescingTestSupport
import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: 3. mixed flags

    mutating func mixedFlags() {
        progress("mixed flags")
        var generator = SplitMix64(seed: 42)
        let cycles = config.quick ? 200 : 2_000
        let k = 100
        let plan: [[Bool?]] = (0..<cycles).map { _ in
            (0..<k).map { _ in [nil, false, true].randomElement(using: &generator)! }
        }
        let expected = plan.flatMap { ReferenceRules.deliveries(for: $0) }
        let context = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        let box = FlagLog()
        context.onUpdate { box.flags.append($0) }
        var matches = true
        let ours = median(config.repetitions) {
            box.flags.removeAll(keepingCapacity: true)
            let ns = timed {
                for burst in plan {
                    for flag in burst { context.setNeedsUpdate(animated: flag) }
                    turnMainRunLoop()
                }
            }
            matches = matches && box.flags == expected
            return (ns, cycles * k)
        }
        let early = expected.count - cycles
        report.checks.append(
            Check(
                name: "mixed flags: deliveries and flags follow the precedence rules", passed: matches,
                detail: "\(expected.count) deliveries (\(cycles) at cycle ends, \(early) early non-animated flushes)"))
        report.rows.append(
            Row(
                scenario: "mixed flags (per request, incl. cycle)", n: k, unit: "ns", ours: ours,
                oursDeliveries: matches ? "exact (\(expected.count))" : "DIVERGED"))
        withExtendedLifetime(context) {}
    }
}
