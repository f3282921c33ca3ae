import Dispatch
import Foundation
import NotificationCoalescing
import UpdateContext

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Bench {
    // MARK: Observation tracking per delivery (UpdateContext's onTrackedUpdate)

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
        trackedUpdateView(cycles: cycles)
        releasedTrackedScreens()
        animatedScopeEntry()
        requestWhileAScopedTaskRuns()
    }

    /// A request on a dirty context while a `Task` created in a scope runs elsewhere (it keeps the scope alive,
    /// so every request reads the scope's task-local value), beside the same request with no scope alive.
    private mutating func requestWhileAScopedTaskRuns() {
        progress("request while a task created in a scope runs")
        let m = config.dirtyRequests / 10
        let context = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        context.onUpdate { _ in }
        turnMainRunLoop()
        let quiet = medianRepeatedRequests(config.pairedSamples, count: m) { context.setNeedsUpdate() }
        let (stream, finish) = AsyncStream<Void>.makeStream()
        let task = withUpdateAnimation(.default) {
            Task {
                for await _ in stream {}
            }
        }
        let busy = medianRepeatedRequests(config.pairedSamples, count: m) { context.setNeedsUpdate() }
        finish.finish()
        let ended = MainCounter()
        Task { @MainActor in
            await task.value
            ended.value = 1
        }
        for _ in 0..<100_000 where ended.value == 0 { turnMainRunLoop() }  // bounded: never hangs the bench
        scopedTaskRatio = busy / quiet
        report.rows.append(
            Row(
                scenario: "request on a dirty context, a scoped task running", n: m, unit: "ns", ours: busy,
                oursDeliveries: "–",
                note: String(
                    format: "%.1f× the same request with no scope alive (%.1f ns): a task-local read per request",
                    busy / quiet, quiet)))
        withExtendedLifetime(context) {}
    }

    /// Screens that read one long-lived `@Observable` model, connected, shown and released: what the model and
    /// the process keep of them afterwards, tracked against untracked (the tracking must go with its screen).
    private mutating func releasedTrackedScreens() {
        progress("released tracked screens")
        let n = config.quick ? 10_000 : 100_000
        let model = ObservedModel()
        func cycle(tracked: Bool) -> (bytes: Double, requestsAfter: Bool) {
            turnMainRunLoop()
            let before = mallocBytesInUse()
            do {
                var screens: [SharedModelView] = []
                screens.reserveCapacity(n)
                for _ in 0..<n {
                    let screen = SharedModelView(model: model)
                    screen.startUpdatingView(tracksObservation: tracked)
                    screens.append(screen)
                }
                for _ in 0..<3 { turnMainRunLoop() }
                model.value &+= 1  // every tracked screen hears it
                for _ in 0..<3 { turnMainRunLoop() }
            }
            for _ in 0..<3 { turnMainRunLoop() }
            let held = Double(mallocBytesInUse() - before) / Double(n)
            model.value &+= 1  // a change after the release: nothing of the screens may request
            let pending = CoalescingScheduler.mainRunLoop.hasWork(admittedBy: .default)
            turnMainRunLoop()
            return (held, pending)
        }
        // Each kind twice: the first round of each grows what stays allocated however it ends (the model's
        // registrar keeps its tables' capacity, the scheduler its list's); the second shows what a round keeps.
        _ = cycle(tracked: false)
        let untracked = cycle(tracked: false)
        let firstTracked = cycle(tracked: true)
        let tracked = cycle(tracked: true)
        releasedTrackedExtraBytes = tracked.bytes - untracked.bytes
        report.rows.append(
            Row(
                scenario: "memory held after releasing tracked screens (malloc)", n: n, unit: "bytes",
                ours: tracked.bytes, oursDeliveries: "–",
                note: String(
                    format: "untracked: %.0f B; a long-lived model read by all; the first tracked round %.0f B "
                        + "(Observation's tables keep their capacity)", untracked.bytes, firstTracked.bytes)))
        report.checks.append(
            Check(
                name: "tracking: a change after the screens' release requests nothing", passed: !tracked.requestsAfter,
                detail: tracked.requestsAfter ? "a released screen's tracking requested" : "nothing requested"))
    }

    /// `withUpdateAnimation` entered and left with nothing pending (the flush finds nothing), beside a plain
    /// request on a dirty context, in turns.
    private mutating func animatedScopeEntry() {
        progress("animated scope entry")
        let m = config.dirtyRequests / 20
        let context = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        context.onUpdate { _ in }
        let idle = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
        idle.onUpdate { _ in }
        turnMainRunLoop()
        let (scope, plain, ratio) = interleavedMedianRepeatedRequests(
            config.pairedSamples, count: m, { withUpdateAnimation(.default) {} }, against: { context.setNeedsUpdate() },
            firstCycleEnd: {})
        let (_, unanimated, flushShare) = interleavedMedianRepeatedRequests(
            config.pairedSamples, count: m, { withUpdateAnimation(.default) {} },
            against: { withUpdateAnimation(nil) {} }, firstCycleEnd: {}, secondCycleEnd: {})
        scopeEntryRatio = ratio
        report.rows.append(
            Row(
                scenario: "animated scope entry, nothing pending", n: m, unit: "ns", ours: scope,
                oursDeliveries: "–",
                note: String(
                    format: "%.0f× a plain request on a dirty context (%.1f ns); %.2f× a scope that does not "
                        + "animate (no flush: %.0f ns)", ratio, plain, flushShare, unanimated)))
        withExtendedLifetime((context, idle)) {}
    }

    /// The canonical path: a delivery of `updateView(animated:)` under Observation tracking (the change alone
    /// requests it) beside one without (`tracksObservation: false`, the change requests explicitly), in turns.
    private mutating func trackedUpdateView(cycles: Int) {
        let tracked = BenchView()
        tracked.startUpdatingView()
        let untracked = BenchView()
        untracked.startUpdatingView(tracksObservation: false)
        tracked.deliveries = 0
        untracked.deliveries = 0
        var trackedSamples: [Double] = []
        var untrackedSamples: [Double] = []
        for _ in 0..<max(config.repetitions, 1) {
            trackedSamples.append(
                Double(
                    timed {
                        for _ in 0..<cycles {
                            tracked.model.value &+= 1  // the tracked read asks for the update
                            turnMainRunLoop()
                        }
                    }) / Double(cycles))
            untrackedSamples.append(
                Double(
                    timed {
                        for _ in 0..<cycles {
                            untracked.model.value &+= 1
                            untracked.setNeedsUpdate()
                            turnMainRunLoop()
                        }
                    }) / Double(cycles))
        }
        let runs = max(config.repetitions, 1) * cycles
        let exact =
            tracked.deliveries == runs && untracked.deliveries == runs && tracked.shown == tracked.model.value
            && untracked.shown == untracked.model.value
        report.checks.append(
            Check(
                name: "updateView: one tracked delivery per changed cycle, showing the last value", passed: exact,
                detail: "tracked \(tracked.deliveries), untracked \(untracked.deliveries), for \(runs) cycles"))
        let ratio = pairedRatio(trackedSamples, untrackedSamples)
        trackedUpdateViewRatio = ratio
        report.rows.append(
            Row(
                scenario: "updateView, untracked (per delivery, incl. cycle)", n: cycles, unit: "ns",
                ours: middle(untrackedSamples), oursDeliveries: "\(untracked.deliveries)/\(runs) cycles",
                note: "startUpdatingView(tracksObservation: false); the change requests explicitly"))
        report.rows.append(
            Row(
                scenario: "updateView, tracked (per delivery, incl. cycle)", n: cycles, unit: "ns",
                ours: middle(trackedSamples), oursDeliveries: "\(tracked.deliveries)/\(runs) cycles",
                note: String(format: "%.2f× the untracked delivery; the change alone requests it", ratio)))
    }
}

/// A screen that reads a model it shares with many others (released after use).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
final class SharedModelView: ViewUpdating {
    let updateContext = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
    let model: ObservedModel
    var shown = 0
    init(model: ObservedModel) { self.model = model }
    func updateView(animated: Bool) { shown = model.value }
}

/// A canonical-path object over an `@Observable` model, for the tracked `updateView` figure.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
final class BenchView: ViewUpdating {
    let updateContext = ViewUpdatingContext(animated: false, scheduler: .mainRunLoop, refreshEvents: [])
    let model = ObservedModel()
    var deliveries = 0
    var shown = 0

    func updateView(animated: Bool) {
        shown = model.value
        deliveries += 1
    }
}
