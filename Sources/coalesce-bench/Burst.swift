import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: 1. burst

    mutating func burst() {
        for k in config.burstSizes {
            progress("burst K=\(k)")
            let cycles = max(1, min(2_000, 200_000 / k))
            // Ours
            var oursDeliveries = 0
            let context = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
            let counter = MainCounter()
            context.onUpdate { _ in counter.value += 1 }
            let ours = median(config.repetitions) {
                counter.value = 0
                let ns = timed {
                    for _ in 0..<cycles {
                        for _ in 0..<k { context.setNeedsUpdate() }
                        turnMainRunLoop()
                    }
                }
                oursDeliveries = counter.value
                return (ns, cycles * k)
            }
            report.checks.append(
                Check(
                    name: "burst K=\(k): one delivery per cycle", passed: oursDeliveries == cycles,
                    detail: "\(oursDeliveries) deliveries in \(cycles) cycles"))

            // Foundation's queue: one coalescable notification, enqueued K times per cycle.
            let (queue, fqCounter) = foundationQueue()
            let note = Notification(name: benchName)
            let foundation = median(config.repetitions) {
                fqCounter.value = 0
                let ns = timed {
                    for _ in 0..<cycles {
                        for _ in 0..<k {
                            queue.enqueue(note, postingStyle: .asap, coalesceMask: [.onName, .onSender], forModes: nil)
                        }
                        turnMainRunLoop()
                    }
                }
                return (ns, cycles * k)
            }

            // Dispatch: every request is a block; nothing coalesces.
            let dispatchCycles = max(1, min(cycles, 20_000 / k))
            let dispatched = MainCounter()
            let dispatch = median(config.repetitions) {
                dispatched.value = 0
                let ns = timed {
                    for _ in 0..<dispatchCycles {
                        for _ in 0..<k { DispatchQueue.main.async { dispatched.value += 1 } }
                        turnMainRunLoop()
                    }
                    while dispatched.value < dispatchCycles * k { turnMainRunLoop() }
                }
                return (ns, dispatchCycles * k)
            }

            // Observation: the first mutation fires onChange (which schedules one delivery); the rest are
            // mutations of an already-dirty model.
            let observationScheduler = ObservationScheduler()
            let view = ObservationView(scheduler: observationScheduler)
            let observation = median(config.repetitions) {
                view.deliveries = 0
                let ns = timed {
                    for _ in 0..<cycles {
                        for _ in 0..<k { view.model.value &+= 1 }
                        turnMainRunLoop()
                    }
                }
                return (ns, cycles * k)
            }

            // Floor
            let floorQueue = FloorQueue()
            let floorCounter = MainCounter()
            let floorContext = FloorContext { _ in floorCounter.value += 1 }
            let floor = median(config.repetitions) {
                let ns = timed {
                    for _ in 0..<cycles {
                        for _ in 0..<k { floorContext.setNeedsUpdate(floorQueue) }
                        floorQueue.flush()
                    }
                }
                return (ns, cycles * k)
            }
            report.rows.append(
                Row(
                    scenario: "burst (per request, incl. cycle)", n: k, unit: "ns", ours: ours,
                    foundationQueue: foundation,
                    dispatchPerRequest: dispatch, observation: observation, floor: floor,
                    oursDeliveries: "\(oursDeliveries)/\(cycles) cycles",
                    note: k == 1 ? "the floor turns no run loop" : ""))
            withExtendedLifetime(context) {}
        }
    }
}
