import CMallocStats
import CoalescingTestSupport
import CoreFoundation
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

#if canImport(Observation)
import Observation
#endif

/// A long run under load, off by default: `SOAK_SECONDS=60 swift test --filter SoakTests` (CI runs it).
///
/// 100 contexts on the main run loop, 4 threads making random requests, lifecycle posts on the main
/// thread, for the given time. Every request must be accounted for (the last delivery of each context
/// saw its last request), no context may get two cycle deliveries in one turn, and memory must stay flat.
final class SoakTests: XCTestCase {
    /// What one context has been asked and has delivered.
    final class Probe: @unchecked Sendable {
        // @unchecked Sendable: `issued` is an atomic counter; the other fields are touched only by the updater and
        // the test body, both on the main thread.
        let issued = AtomicCounter()
        var seen = 0
        var deliveries = 0
        var lastTurn = -1
        var doubles = 0
    }

    /// Counts main run-loop turns, and marks refreshes (delivered at once, outside turns).
    final class Turns: @unchecked Sendable {
        // @unchecked Sendable: `inRefresh` is written by main-queue blocks and read by updaters, all on
        // the main thread.
        let counter = MainTurnCounter()
        var inRefresh = false
        var count: Int { counter.count }
        func stop() { counter.stop() }
    }

    func testSoak() throws {
        guard let text = ProcessInfo.processInfo.environment["SOAK_SECONDS"], let seconds = Double(text), seconds > 0
        else {
            throw XCTSkip("set SOAK_SECONDS to run the soak test")
        }
        let center = NotificationCenter()
        let lifecycle = Notification.Name("soak.willEnterForeground")
        let turns = Turns()
        defer { turns.stop() }
        let probes = (0..<100).map { _ in Probe() }
        let contexts = probes.map { probe in
            let context = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [lifecycle], center: center)
            context.onUpdate { _ in
                // A refresh delivers at once, outside turns; only cycle deliveries count per turn.
                if !turns.inRefresh {
                    if probe.lastTurn == turns.count { probe.doubles += 1 }
                    probe.lastTurn = turns.count
                }
                probe.seen = probe.issued.value
                probe.deliveries += 1
            }
            return context
        }

        let stop = AtomicCounter()
        let running = DispatchGroup()
        let refreshes = AtomicCounter()
        for seed in 0..<4 {
            running.enter()
            Thread.detachNewThread {
                var generator = SplitMix64(seed: UInt64(seed + 1))
                while stop.value == 0 {
                    let index = Int.random(in: 0..<contexts.count, using: &generator)
                    probes[index].issued.add()
                    // nil and true only: an explicit false followed by true legitimately delivers twice.
                    contexts[index].setNeedsUpdate(animated: Bool.random(using: &generator) ? nil : true)
                    if Int.random(in: 0..<20_000, using: &generator) == 0 {
                        refreshes.add()
                        DispatchQueue.main.async {
                            turns.inRefresh = true
                            center.post(name: lifecycle, object: nil)
                            turns.inRefresh = false
                        }
                    }
                }
                running.leave()
            }
        }

        var memory: [Int] = []
        let start = Date()
        var nextSample = start.addingTimeInterval(min(5, seconds / 4))
        while Date().timeIntervalSince(start) < seconds {
            _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
            if Date() >= nextSample {
                memory.append(malloc_stats_bytes_in_use())
                nextSample = nextSample.addingTimeInterval(min(5, seconds / 4))
            }
        }
        stop.store(1)
        // Keep turning while the threads finish: their last requests must still be delivered.
        spinMainLoop(timeout: 30) { running.wait(timeout: .now()) == .success }
        spinMainLoop(timeout: 30) { probes.allSatisfy { $0.seen == $0.issued.value } }

        let issued = probes.reduce(0) { $0 + $1.issued.value }
        let lost = probes.filter { $0.seen != $0.issued.value }.count
        let doubles = probes.reduce(0) { $0 + $1.doubles }
        let deliveries = probes.reduce(0) { $0 + $1.deliveries }
        print(
            "soak: \(issued) requests, \(deliveries) deliveries, \(turns.count) turns, "
                + "\(refreshes.value) refreshes, malloc samples \(memory)")
        XCTAssertGreaterThan(issued, 10_000, "the threads made requests")
        XCTAssertEqual(lost, 0, "contexts whose last request was never delivered")
        XCTAssertEqual(doubles, 0, "turns in which a context got two cycle deliveries")
        XCTAssertLessThan(deliveries, issued, "requests coalesced")
        if let first = memory.first, let last = memory.last {
            XCTAssertLessThan(last - first, max(4 << 20, first / 5), "memory grew during the soak: \(memory)")
        }
    }

    // MARK: Long runs: the millionth call costs what the first did

    /// Times `calls` calls of `call` in windows of 10 000; returns the stack address seen inside the
    /// first and the last call (via `depth`) and the cheapest of the first and of the last five windows.
    private func longRun(
        calls: Int, call: () -> Void, depth: () -> [UInt]
    ) -> (first: Double, last: Double, depths: [UInt]) {
        let window = 10_000
        var times: [Double] = []
        var index = 0
        while index < calls {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<window { call() }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(window))
            index += window
        }
        // The cheapest of five windows at each end: a loaded machine's pauses do not count.
        return (times.prefix(5).min()!, times.suffix(5).min()!, depth())
    }

    func testAMillionPostsToOneObserverCostTheSameAtTheEnd() throws {
        guard ProcessInfo.processInfo.environment["SOAK_SECONDS"] != nil else {
            throw XCTSkip("set SOAK_SECONDS to run the long runs")
        }
        let center = NotificationCenter()
        let context = NotificationObservingContext(center: center)
        var posts = 0
        var depths: [UInt] = []
        context.observe(Notification.Name("soak.post")) { _, _ in
            posts += 1
            if posts == 1 || posts == 1_000_000 {
                depths.append(UInt(bitPattern: malloc_stats_stack_frame()))
            }
        }
        let memoryBefore = malloc_stats_bytes_in_use()
        let post = { center.post(name: Notification.Name("soak.post"), object: nil) }
        let run = longRun(calls: 1_000_000, call: post, depth: { depths })
        let growth = malloc_stats_bytes_in_use() - memoryBefore
        print("long run, posts: \(run.first) ns → \(run.last) ns per post, memory +\(growth) B")
        XCTAssertEqual(posts, 1_000_000)
        XCTAssertEqual(run.depths.count, 2)
        XCTAssertEqual(run.depths.first, run.depths.last, "the stack inside the handler grew")
        XCTAssertLessThan(run.last, run.first * 3, "a post got slower over a million posts")
        XCTAssertLessThan(growth, 1 << 20, "memory grew over a million posts")
    }

    func testAMillionDeliveriesToOneUpdaterCostTheSameAtTheEnd() throws {
        guard ProcessInfo.processInfo.environment["SOAK_SECONDS"] != nil else {
            throw XCTSkip("set SOAK_SECONDS to run the long runs")
        }
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var deliveries = 0
        var depths: [UInt] = []
        context.onUpdate { _ in
            deliveries += 1
            if deliveries == 1 || deliveries == 1_000_000 {
                depths.append(UInt(bitPattern: malloc_stats_stack_frame()))
            }
        }
        let memoryBefore = malloc_stats_bytes_in_use()
        let deliver = {
            context.setNeedsUpdate()
            scheduler.turn()
        }
        let run = longRun(calls: 1_000_000, call: deliver, depth: { depths })
        let growth = malloc_stats_bytes_in_use() - memoryBefore
        print("long run, deliveries: \(run.first) ns → \(run.last) ns per delivery, memory +\(growth) B")
        XCTAssertEqual(deliveries, 1_000_000)
        XCTAssertEqual(run.depths.first, run.depths.last, "the stack inside the updater grew")
        XCTAssertLessThan(run.last, run.first * 3, "a delivery got slower over a million")
        XCTAssertLessThan(growth, 1 << 20, "memory grew over a million deliveries")
        XCTAssertNoThrow(try scheduler.expectIdle())
    }

    #if canImport(Observation)
    /// The `@Observable` faces over a million deliveries: one change per delivery (a tracking scope
    /// re-armed each time, as SwiftUI does), the same stack depth at the end, no memory growth.
    func testAMillionDeliveriesAnnouncedByTheObservableFacesCostTheSameAtTheEnd() throws {
        guard ProcessInfo.processInfo.environment["SOAK_SECONDS"] != nil else {
            throw XCTSkip("set SOAK_SECONDS to run the long runs")
        }
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else {
            throw XCTSkip("Observation needs macOS 14")
        }
        let scheduler = ManualScheduler()
        let view = StateUpdatingContext(state: 0, scheduler: scheduler, refreshEvents: [])
        let delivery = view.context.observableDelivery
        let state = view.observableState
        let changes = AtomicCounter()
        let depths = NotificationCoalescing.Locked([UInt]())  // onChange is @Sendable
        func arm() {
            withObservationTracking {
                _ = delivery.delivery
                _ = state.state
            } onChange: {
                let count = changes.add()
                if count == 1 || count == 1_000_000 {
                    let depth = UInt(bitPattern: malloc_stats_stack_frame())
                    depths.withLock { $0.append(depth) }
                }
            }
        }
        var value = 0
        let memoryBefore = malloc_stats_bytes_in_use()
        let deliver = {
            arm()
            value += 1
            view.state = value
            scheduler.turn()
        }
        let run = longRun(calls: 1_000_000, call: deliver, depth: { depths.withLock { $0 } })
        let growth = malloc_stats_bytes_in_use() - memoryBefore
        print("long run, observable faces: \(run.first) ns → \(run.last) ns per delivery, memory +\(growth) B")
        XCTAssertEqual(changes.value, 1_000_000, "one change per delivery")
        XCTAssertEqual(delivery.delivery.number, 1_000_000)
        XCTAssertEqual(state.state, 1_000_000)
        XCTAssertEqual(run.depths.first, run.depths.last, "the stack inside the change notification grew")
        XCTAssertLessThan(run.last, run.first * 3, "an announcement got slower over a million")
        XCTAssertLessThan(growth, 1 << 20, "memory grew over a million announcements")
    }
    #endif
}
