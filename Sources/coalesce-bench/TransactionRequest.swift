import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: a request carrying a transaction, against a plain one on the same dirty context

    mutating func transactionRequest() {
        progress("request carrying a transaction")
        let m = config.dirtyRequests / 10
        let context = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        let counter = MainCounter()
        context.onUpdate { _ in counter.value += 1 }
        // In turns: their ratio is the target (see `interleavedMedianRepeatedRequests`).
        let transaction = UpdateTransaction(animation: .spring(duration: 0.4, bounce: 0.2))
        let (carrying, plain, ratio) = interleavedMedianRepeatedRequests(
            config.pairedSamples, count: m, { context.setNeedsUpdate(transaction: transaction) },
            against: { context.setNeedsUpdate(animated: true) })
        report.rows.append(
            Row(
                scenario: "request carrying a transaction", n: m, unit: "ns", ours: carrying,
                oursDeliveries: "\(counter.value)/\(2 * config.pairedSamples) cycles",
                note: "a plain animated request on the same dirty context: \(String(format: "%.1f", plain)) ns"))
        transactionRatio = ratio

        // Completions: every one attached to an absorbed request is called exactly once.
        let completed = MainCounter()
        let cycles = 200
        let perCycle = 50
        for cycle in 0..<cycles {
            for index in 0..<perCycle {
                var withCompletion = UpdateTransaction(animation: (cycle + index) % 3 == 0 ? nil : .default)
                withCompletion.addCompletion { _ in completed.value += 1 }  // @MainActor: no assumeIsolated
                context.setNeedsUpdate(transaction: withCompletion)
            }
            turnMainRunLoop()
        }
        report.checks.append(
            Check(
                name: "transactions: every completion called exactly once",
                passed: completed.value == cycles * perCycle,
                detail: "\(completed.value) completions for \(cycles * perCycle) requests in \(cycles) cycles"))
        withExtendedLifetime(context) {}
    }
}
