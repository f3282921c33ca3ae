import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: enqueue cost against pending size (NotificationCoalescing)

    mutating func enqueueScaling() {
        for pending in config.enqueuePendingSizes {
            progress("coalescing enqueue with \(pending) pending")
            let m = 20_000
            let note = Notification(name: benchName)
            let ours = median(config.repetitions) {
                let scheduler = ManualScheduler()
                let context = NotificationCoalescingContext(scheduler: scheduler)
                for i in 0..<(pending - 1) { context.enqueue(Notification(name: Notification.Name("p\(i)"))) }
                context.enqueue(note)
                let ns = timed {
                    for _ in 0..<m { context.enqueue(note) }
                }
                precondition(context.pendingCount == pending)
                return (ns, m)
            }
            var foundation: Double?
            if config.foundationPendingSizes.contains(pending) {
                let fm = pending >= 10_000 ? 200 : 2_000
                foundation = median(pending >= 10_000 ? 1 : config.repetitions) {
                    let (queue, _) = foundationQueue()
                    for i in 0..<(pending - 1) {
                        queue.enqueue(Notification(name: Notification.Name("p\(i)")), postingStyle: .asap)
                    }
                    queue.enqueue(note, postingStyle: .asap)
                    let ns = timed {
                        for _ in 0..<fm { queue.enqueue(note, postingStyle: .asap) }
                    }
                    turnMainRunLoop()
                    return (ns, fm)
                }
            }
            report.rows.append(
                Row(
                    scenario: "coalescing enqueue vs pending", n: pending, unit: "ns", ours: ours,
                    foundationQueue: foundation, oursDeliveries: "–",
                    note: foundation == nil && pending > 1 ? "NotificationQueue capped: O(n) per enqueue" : ""))
            enqueueCost[pending] = ours
        }
    }
}
