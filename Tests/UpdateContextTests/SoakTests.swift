import CMallocStats
import CoreFoundation
import Foundation
import NotificationCoalescing
import Synchronization
import UpdateContext
import XCTest

/// A long run under load, off by default: `SOAK_SECONDS=60 swift test --filter SoakTests` (CI runs it).
///
/// 100 contexts on the main run loop, 4 threads making random requests, lifecycle posts on the main
/// thread, for the given time. Every request must be accounted for (the last delivery of each context
/// saw its last request), no context may get two cycle deliveries in one turn, and memory must stay flat.
final class SoakTests: XCTestCase {
    /// What one context has been asked and has delivered.
    final class Probe: @unchecked Sendable {
        // @unchecked Sendable: `issued` is atomic; the other fields are touched only by the updater and
        // the test body, both on the main thread.
        let issued = Atomic<Int>(0)
        var seen = 0
        var deliveries = 0
        var lastTurn = -1
        var doubles = 0
    }

    /// Counts main run-loop turns with an observer ordered before the library's.
    final class Turns: @unchecked Sendable {
        // @unchecked Sendable: written by the observer and read by updaters, all on the main thread.
        var count = 0
        var inRefresh = false
        private var observer: CFRunLoopObserver?

        init() {
            let activities = CFRunLoopActivity([.beforeWaiting, .exit]).rawValue
            observer = CFRunLoopObserverCreateWithHandler(kCFAllocatorDefault, activities, true, 0) {
                [unowned self] _, _ in
                count += 1
            }
            CFRunLoopAddObserver(CFRunLoopGetMain(), observer, kCFRunLoopCommonModes)
        }

        func stop() {
            if let observer { CFRunLoopObserverInvalidate(observer) }
            observer = nil
        }
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
                probe.seen = probe.issued.load(ordering: .acquiring)
                probe.deliveries += 1
            }
            return context
        }

        let stop = Atomic<Bool>(false)
        let running = DispatchGroup()
        let refreshes = Atomic<Int>(0)
        for seed in 0..<4 {
            running.enter()
            Thread.detachNewThread {
                var generator = SplitMix64(seed: UInt64(seed + 1))
                while !stop.load(ordering: .relaxed) {
                    let index = Int.random(in: 0..<contexts.count, using: &generator)
                    probes[index].issued.add(1, ordering: .releasing)
                    // nil and true only: an explicit false followed by true legitimately delivers twice.
                    contexts[index].setNeedsUpdate(animated: Bool.random(using: &generator) ? nil : true)
                    if Int.random(in: 0..<20_000, using: &generator) == 0 {
                        refreshes.add(1, ordering: .relaxed)
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
        stop.store(true, ordering: .relaxed)
        // Keep turning while the threads finish: their last requests must still be delivered.
        spinMainLoop(timeout: 30) { running.wait(timeout: .now()) == .success }
        spinMainLoop(timeout: 30) { probes.allSatisfy { $0.seen == $0.issued.load(ordering: .acquiring) } }

        let issued = probes.reduce(0) { $0 + $1.issued.load(ordering: .relaxed) }
        let lost = probes.filter { $0.seen != $0.issued.load(ordering: .relaxed) }.count
        let doubles = probes.reduce(0) { $0 + $1.doubles }
        let deliveries = probes.reduce(0) { $0 + $1.deliveries }
        print(
            "soak: \(issued) requests, \(deliveries) deliveries, \(turns.count) turns, "
                + "\(refreshes.load(ordering: .relaxed)) refreshes, malloc samples \(memory)")
        XCTAssertGreaterThan(issued, 10_000, "the threads made requests")
        XCTAssertEqual(lost, 0, "contexts whose last request was never delivered")
        XCTAssertEqual(doubles, 0, "turns in which a context got two cycle deliveries")
        XCTAssertLessThan(deliveries, issued, "requests coalesced")
        if let first = memory.first, let last = memory.last {
            XCTAssertLessThan(last - first, max(4 << 20, first / 5), "memory grew during the soak: \(memory)")
        }
    }
}
