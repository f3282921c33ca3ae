import CoalescingTestSupport
import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: 4. cross-thread

    mutating func crossThread() {
        progress("cross-thread")
        let threads = 4
        let perThread = config.crossThreadRequestsPerThread
        let total = threads * perThread
        let context = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        let issued = AtomicCounter()
        let lastSeen = MainCounter()
        let deliveries = MainCounter()
        let doubled = MainCounter()
        let lastTurn = MainCounter()
        // Counts turns with an observer ordered before ours, so a delivery sees the number of its own turn.
        let turns = MainTurnCounter()
        lastTurn.value = -1
        context.onUpdate { _ in
            deliveries.value += 1
            if lastTurn.value == turns.count { doubled.value += 1 }
            lastTurn.value = turns.count
            lastSeen.value = issued.value
        }
        let finished = AtomicCounter()
        let start = now()
        for _ in 0..<threads {
            Thread.detachNewThread {
                for _ in 0..<perThread {
                    issued.add()
                    context.setNeedsUpdate()
                }
                finished.add()
            }
        }
        let deadline = Date(timeIntervalSinceNow: 120)
        while (finished.value < threads || lastSeen.value < total) && Date() < deadline {
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.001))
        }
        let elapsed = now() - start
        let lost = total - lastSeen.value
        let perCycleOK = doubled.value == 0
        report.checks.append(
            Check(
                name: "cross-thread: no request lost", passed: lost == 0,
                detail: "last delivery saw \(lastSeen.value) of \(total) requests"))
        report.checks.append(
            Check(
                name: "cross-thread: at most one delivery per cycle", passed: perCycleOK,
                detail:
                    "\(deliveries.value) deliveries in \(turns.count) run-loop turns, \(doubled.value) turns with two"))
        let oursRate = Double(total) / (Double(elapsed) / 1e9)
        let oursTurns = turns.count
        turns.stop()

        // Dispatch per request from the same threads.
        let dispatchTotal = total / 10
        let dispatched = MainCounter()
        let dispatchFinished = AtomicCounter()
        let dStart = now()
        for _ in 0..<threads {
            Thread.detachNewThread {
                for _ in 0..<(dispatchTotal / threads) {
                    DispatchQueue.main.async { dispatched.value += 1 }
                }
                dispatchFinished.add()
            }
        }
        while (dispatchFinished.value < threads || dispatched.value < dispatchTotal)
            && Date() < deadline
        {
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.001))
        }
        let dRate = Double(dispatchTotal) / (Double(now() - dStart) / 1e9)
        report.rows.append(
            Row(
                scenario: "cross-thread (requests/s, 4 threads)", n: total, unit: "req/s", ours: oursRate,
                dispatchPerRequest: dRate,
                oursDeliveries: "\(deliveries.value) in \(oursTurns) turns, \(lost) lost",
                note: "higher is better here", higherIsBetter: true))
        withExtendedLifetime(context) {}
    }
}
