import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: Observation tracking per delivery (UpdateContext's onUpdate(tracking:))

    mutating func tracking() {
        progress("tracking updater vs plain updater")
        let cycles = config.quick ? 2_000 : 20_000
        let plainModel = PlainModel()
        let plainContext = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        let plainDeliveries = MainCounter()
        plainContext.onUpdate { _ in
            blackHole(plainModel.value)
            plainDeliveries.value += 1
        }
        let plain = median(config.repetitions) {
            plainDeliveries.value = 0
            let ns = timed {
                for _ in 0..<cycles {
                    plainModel.value &+= 1
                    plainContext.setNeedsUpdate()
                    turnMainRunLoop()
                }
            }
            return (ns, cycles)
        }

        let model = ObservedModel()
        let trackedContext = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        let trackedDeliveries = MainCounter()
        trackedContext.onTrackedUpdate { _ in
            blackHole(model.value)
            trackedDeliveries.value += 1
        }
        trackedContext.update()
        let tracked = median(config.repetitions) {
            trackedDeliveries.value = 0
            let ns = timed {
                for _ in 0..<cycles {
                    model.value &+= 1  // no explicit request: the tracked read asks for the update
                    turnMainRunLoop()
                }
            }
            return (ns, cycles)
        }
        let exact = plainDeliveries.value == cycles && trackedDeliveries.value == cycles
        report.checks.append(
            Check(
                name: "tracking: one delivery per changed cycle", passed: exact,
                detail: "tracked \(trackedDeliveries.value), plain \(plainDeliveries.value), for \(cycles) cycles"))
        report.rows.append(
            Row(
                scenario: "plain updater (per delivery, incl. cycle)", n: cycles, unit: "ns", ours: plain,
                oursDeliveries: "\(plainDeliveries.value)/\(cycles) cycles"))
        report.rows.append(
            Row(
                scenario: "tracking updater (per delivery, incl. cycle)", n: cycles, unit: "ns", ours: tracked,
                oursDeliveries: "\(trackedDeliveries.value)/\(cycles) cycles",
                note: String(format: "tracking costs %.0f ns per delivery over the plain updater", tracked - plain)))
        withExtendedLifetime((plainContext, trackedContext)) {}
    }
}
