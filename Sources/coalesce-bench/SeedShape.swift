import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: the seed's shape, last (its queues are never freed and slow every later turn)

    mutating func seedShape() {
        let n = config.seedShapeCap
        progress("seed shape: one NotificationQueue per context, N=\(n)")
        let counter = MainCounter()
        var queues: [NotificationQueue] = []
        var centers: [NotificationCenter] = []
        var tokens: [any NSObjectProtocol] = []
        for _ in 0..<n {
            let center = NotificationCenter()
            tokens.append(center.addObserver(forName: benchName, object: nil, queue: nil) { _ in counter.value += 1 })
            centers.append(center)
            queues.append(NotificationQueue(notificationCenter: center))
        }
        let note = Notification(name: benchName)
        var exact = true
        let seed = median(config.repetitions) {
            counter.value = 0
            let ns = timed {
                for queue in queues {
                    queue.enqueue(note, postingStyle: .asap, coalesceMask: [.onName, .onSender], forModes: nil)
                }
                turnMainRunLoop()
            }
            exact = exact && counter.value == n
            return (ns, n)
        }
        if let index = report.rows.firstIndex(where: { $0.scenario == "fan-out (per context)" && $0.n == n }) {
            report.rows[index].seedShape = seed
        } else {
            report.rows.append(
                Row(scenario: "fan-out (per context)", n: n, unit: "ns", seedShape: seed, oursDeliveries: "–"))
        }
        report.rows.append(
            Row(
                scenario: "seed shape (one queue per context)", n: n, unit: "ns", seedShape: seed,
                oursDeliveries: "–",
                note: "capped at N=\(n): each queue is kept for the thread's life and walked every turn"))
        _ = exact
        withExtendedLifetime((queues, centers, tokens)) {}
    }
}
