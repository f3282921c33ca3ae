import CoalescingTestSupport
import CoreFoundation
import Dispatch
import Foundation
import NotificationCoalescing
import Observation
import UpdateContext

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one run of the fast background source gave.
struct SourceRun {
    var requests = 0
    var deliveries = 0
    var seconds = 0.0
    /// CPU time the main thread spent during the run, in seconds.
    var mainCPU = 0.0
    /// Whether the last delivery saw the last request.
    var complete = false

    var deliveriesPerSecond: Double { Double(deliveries) / seconds }
    /// Main-thread CPU milliseconds per second of the run.
    var mainMillisecondsPerSecond: Double { mainCPU * 1_000 / seconds }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: 6. fast background source

    /// A producer thread requesting at ~10 kHz for a bounded time while the main run loop turns: ours per
    /// turn and per frame, one Dispatch block per request, and Observation with one delivery per turn.
    mutating func fastSource() {
        let seconds = config.quick ? 0.3 : 1.5
        progress("fast background source: ~10 kHz for \(seconds) s, four ways")

        let perTurn = driveSource(seconds: seconds) { issued, delivered in
            let context = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
            context.onUpdate { _ in delivered(issued.value) }
            return ({ context.setNeedsUpdate() }, context)
        }
        let paced = FramePacedScheduler(framesPerSecond: 60)
        let perFrame = driveSource(seconds: seconds) { issued, delivered in
            let context = ViewUpdatingContext(scheduler: paced, refreshEvents: [])
            context.onUpdate { _ in delivered(issued.value) }
            return ({ context.setNeedsUpdate() }, context)
        }
        let framesTicked = paced.tickCount
        let dispatch = driveSource(seconds: seconds) { issued, delivered in
            (
                {
                    let seen = issued.value
                    DispatchQueue.main.async { delivered(seen) }
                }, nil
            )
        }
        let observation = driveSource(seconds: seconds) { issued, delivered in
            let view = CrossThreadObservationView { delivered(issued.value) }
            return ({ view.mutate() }, view)
        }

        let runs = [
            ("ours per turn", perTurn), ("ours per frame", perFrame), ("dispatch", dispatch),
            ("Observation", observation),
        ]
        for (name, run) in runs {
            report.checks.append(
                Check(
                    name: "fast source, \(name): the last delivery saw the last request", passed: run.complete,
                    detail: "\(run.deliveries) deliveries for \(run.requests) requests"))
        }
        report.checks.append(
            Check(
                name: "fast source, ours per frame: at most one delivery per frame",
                passed: perFrame.deliveries <= framesTicked,
                detail: "\(perFrame.deliveries) deliveries in \(framesTicked) frames"))
        for (label, run) in [("per turn", perTurn), ("per frame", perFrame)] {
            report.rows.append(
                Row(
                    scenario: "fast source: deliveries/s (ours \(label))", n: run.requests, unit: "1/s",
                    ours: run.deliveriesPerSecond, dispatchPerRequest: dispatch.deliveriesPerSecond,
                    observation: observation.deliveriesPerSecond, oursDeliveries: "\(run.deliveries), last seen",
                    note: String(
                        format: "%.0f requests/s for %.1f s; lower is better", Double(run.requests) / run.seconds,
                        run.seconds)))
            report.rows.append(
                Row(
                    scenario: "fast source: main-thread CPU (ours \(label))", n: run.requests, unit: "ms/s",
                    ours: run.mainMillisecondsPerSecond, dispatchPerRequest: dispatch.mainMillisecondsPerSecond,
                    observation: observation.mainMillisecondsPerSecond, oursDeliveries: "–",
                    note: "main-thread CPU ms per second of the run"))
        }
        source = (perTurn, perFrame, dispatch, observation)
    }

    /// Runs one producer thread for `seconds`, requesting at ~10 kHz through what `make` returns, while the
    /// main run loop turns; then turns until the last request is delivered.
    ///
    /// `make` gets the counter of issued requests and a `delivered(seen)` callback for the main thread; it
    /// returns the request to make and an object to keep alive during the run.
    private func driveSource(
        seconds: Double,
        make: (AtomicCounter, @escaping @Sendable (Int) -> Void) -> (request: @Sendable () -> Void, keep: AnyObject?)
    ) -> SourceRun {
        let issued = AtomicCounter()
        let finished = AtomicCounter()
        let seen = MainCounter()
        let deliveries = MainCounter()
        let (request, keep) = make(issued) { value in
            deliveries.value += 1
            seen.value = max(seen.value, value)
        }
        let cpuStart = threadCPUSeconds()
        let start = now()
        let period: UInt64 = 100_000  // 10 kHz
        let end = start + UInt64(seconds * 1e9)
        Thread.detachNewThread {
            var next = now()
            while next < end {
                issued.add()
                request()
                next += period
                let current = now()
                if next > current { usleep(UInt32((next - current) / 1_000)) }
            }
            finished.add()
        }
        let deadline = Date(timeIntervalSinceNow: seconds + 30)
        while (finished.value == 0 || seen.value < issued.value) && Date() < deadline {
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
        }
        let elapsed = Double(now() - start) / 1e9
        withExtendedLifetime(keep) {}
        return SourceRun(
            requests: issued.value, deliveries: deliveries.value, seconds: elapsed,
            mainCPU: threadCPUSeconds() - cpuStart, complete: finished.value == 1 && seen.value == issued.value)
    }
}

/// CPU time of the calling thread, in seconds.
func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// The Observation baseline for a source on another thread: the producer mutates an `@Observable` model
/// (under a lock: the model is not thread-safe), `onChange` fires on the producer's thread and schedules
/// one delivery on the main run loop; the delivery reads the model and tracks again. One delivery per
/// turn, as UIKit's automatic tracking does.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class CrossThreadObservationView: @unchecked Sendable {
    // @unchecked Sendable: the model is read and written under `lock`; `isScheduled` too; `deliver` runs
    // on the main thread only.
    private let model = ObservedModel()
    private let lock = NSLock()
    private var isScheduled = false
    private let onDeliver: @Sendable () -> Void

    init(onDeliver: @escaping @Sendable () -> Void) {
        self.onDeliver = onDeliver
        track()
    }

    func mutate() {
        lock.lock()
        model.value &+= 1
        lock.unlock()
    }

    private func track() {
        lock.lock()
        defer { lock.unlock() }
        withObservationTracking {
            blackHole(model.value)
        } onChange: { [unowned self] in
            // Inside the producer's mutation, under `lock`.
            guard !isScheduled else { return }
            isScheduled = true
            RunLoop.main.perform { [self] in deliver() }
            CFRunLoopWakeUp(CFRunLoopGetMain())
        }
    }

    private func deliver() {
        lock.lock()
        isScheduled = false
        lock.unlock()
        onDeliver()
        track()
    }
}
