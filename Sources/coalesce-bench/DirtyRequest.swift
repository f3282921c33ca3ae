import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: the dirty-request figure (target 1)

    mutating func dirtyRequest() {
        progress("request on an already-dirty context")
        let m = config.dirtyRequests
        let context = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        let counter = MainCounter()
        context.onUpdate { _ in counter.value += 1 }
        // Ours and the floor in turns: their ratio is the target (see `interleavedMedianRepeatedRequests`).
        let floorQueue = FloorQueue()
        let floorContext = FloorContext { _ in }
        let (ours, floor, ratio) = interleavedMedianRepeatedRequests(
            config.pairedSamples, count: m, { context.setNeedsUpdate() },
            against: { floorContext.setNeedsUpdate(floorQueue) }, secondCycleEnd: { floorQueue.flush() })
        report.checks.append(
            Check(
                name: "dirty requests: one delivery per cycle", passed: counter.value == config.pairedSamples,
                detail: "\(counter.value) deliveries for \(config.pairedSamples) cycles of \(m + 1) requests"))

        let (queue, _) = foundationQueue()
        let note = Notification(name: benchName)
        let fm = m / 100
        let foundation = medianRepeatedRequests(config.repetitions, count: fm) {
            queue.enqueue(note, postingStyle: .asap, coalesceMask: [.onName, .onSender], forModes: nil)
        }

        let observationScheduler = ObservationScheduler()
        let view = ObservationView(scheduler: observationScheduler)
        let observation = medianRepeatedRequests(config.repetitions, count: m) { view.model.value &+= 1 }
        report.rows.append(
            Row(
                scenario: "request on a dirty context", n: m, unit: "ns", ours: ours, foundationQueue: foundation,
                observation: observation, floor: floor, pairedFloorRatio: ratio,
                oursDeliveries: "\(counter.value)/\(config.pairedSamples) cycles")
        )
        dirty = (ours, foundation, observation, ratio)
        withExtendedLifetime(context) {}
    }
}
