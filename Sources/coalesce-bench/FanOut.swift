import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: 2. fan-out

    mutating func fanOutScenario() {
        let sizes = config.fanOutSizes
        // Ours and the floor are measured interleaved: every round takes one sample of each size in turn,
        // so that the sizes (and the two contenders) see the same machine noise, and "flat" compares like
        // with like. A sample of a small size runs enough cycles to cover ~100 000 contexts.
        progress("fan-out: ours and floor, N=\(sizes.map(String.init).joined(separator: ", ")), interleaved")
        let counter = MainCounter()
        let floorCounter = MainCounter()
        let floorQueue = FloorQueue()
        var ours: [Int: [Contexts]] = [:]
        struct Contexts {
            let ours: [ViewUpdatingContext]
            let floor: [FloorContext]
        }
        for n in sizes {
            ours[n] = [
                Contexts(
                    ours: (0..<n).map { _ in
                        let context = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
                        context.onUpdate { _ in counter.value += 1 }
                        return context
                    },
                    floor: (0..<n).map { _ in FloorContext { _ in floorCounter.value += 1 } })
            ]
        }
        var oursSamples: [Int: [Double]] = [:]
        var floorSamples: [Int: [Double]] = [:]
        var exact: [Int: Bool] = [:]
        let rounds = config.pairedSamples
        for _ in 0..<rounds {
            for n in sizes {
                let set = ours[n]![0]
                let cycles = max(1, 100_000 / n)
                counter.value = 0
                let ns = timed {
                    for _ in 0..<cycles {
                        for context in set.ours { context.setNeedsUpdate() }
                        turnMainRunLoop()
                    }
                }
                exact[n, default: true] = exact[n, default: true] && counter.value == n * cycles
                oursSamples[n, default: []].append(Double(ns) / Double(n * cycles))
                floorCounter.value = 0
                let floorNs = timed {
                    for _ in 0..<cycles {
                        for context in set.floor { context.setNeedsUpdate(floorQueue) }
                        floorQueue.flush()
                    }
                }
                exact[n] = exact[n]! && floorCounter.value == n * cycles
                floorSamples[n, default: []].append(Double(floorNs) / Double(n * cycles))
            }
        }
        for n in sizes {
            progress("fan-out baselines N=\(n)")
            let reps = config.repetitions
            report.checks.append(
                Check(
                    name: "fan-out N=\(n): one delivery per dirty context", passed: exact[n]!,
                    detail: "\(n) contexts, one delivery each per cycle, \(rounds) rounds"))

            var foundation: Double?
            if n <= config.foundationFanOutCap {
                let (queue, fqCounter) = foundationQueue()
                let senders = (0..<n).map { _ in NSObject() }
                let notes = senders.map { Notification(name: benchName, object: $0) }
                foundation = median(n >= 10_000 ? 1 : reps) {
                    fqCounter.value = 0
                    let ns = timed {
                        for note in notes {
                            queue.enqueue(note, postingStyle: .asap, coalesceMask: [.onName, .onSender], forModes: nil)
                        }
                        turnMainRunLoop()
                    }
                    return (ns, n)
                }
            }

            let dispatched = MainCounter()
            let dispatch = median(reps) {
                dispatched.value = 0
                let ns = timed {
                    for _ in 0..<n { DispatchQueue.main.async { dispatched.value += 1 } }
                    while dispatched.value < n { turnMainRunLoop() }
                }
                return (ns, n)
            }

            let observationScheduler = ObservationScheduler()
            let views = (0..<n).map { _ in ObservationView(scheduler: observationScheduler) }
            let observation = median(reps) {
                let ns = timed {
                    for view in views { view.model.value &+= 1 }
                    turnMainRunLoop()
                }
                return (ns, n)
            }
            let observed = views.reduce(0) { $0 + $1.deliveries }
            let oursFigure = middle(oursSamples[n]!)
            let floorFigure = middle(floorSamples[n]!)
            let floorRatio = pairedRatio(oursSamples[n]!, floorSamples[n]!)
            report.rows.append(
                Row(
                    scenario: "fan-out (per context)", n: n, unit: "ns", ours: oursFigure, foundationQueue: foundation,
                    dispatchPerRequest: dispatch, observation: observed == 0 ? nil : observation,
                    floor: floorFigure, pairedFloorRatio: floorRatio, oursDeliveries: "\(n)/\(n) contexts",
                    note: foundation == nil ? "NotificationQueue capped at N=\(config.foundationFanOutCap): O(n²)" : "")
            )
            fanOut[n] = (oursFigure, foundation, floorRatio)
        }
        if let big = oursSamples[100_000], let mid = oursSamples[1_000] {
            fanOutFlatness = pairedRatio(big, mid)
        }
        withExtendedLifetime(ours) {}
    }
}
