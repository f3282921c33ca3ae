import CoalescingTestSupport
import CoreFoundation
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// Searching the run-loop paths nobody wrote an example for: a request made from an observer at a random
/// order (Core Animation's, UIKit's, `CFIndex.max` added after the scheduler's guard, the very first),
/// before or after a nested loop in a random mode (default, a custom mode the scheduler turns in, a private
/// one it does not), is delivered without an outside event. Each case stops the loop from the updater: a
/// run that ends by its deadline means the loop slept with the request pending.
final class RunLoopRandomLivenessTests: XCTestCase {
    private static let orders: [CFIndex] = [0, 999, 1_000, 1_001, 1_999_000, 2_000_000, 2_001_000, .max - 1, .max]
    private static let customMode = RunLoop.Mode("RunLoopRandomLivenessTests.custom")
    private static let privateMode = RunLoop.Mode("RunLoopRandomLivenessTests.private")

    func testRequestsFromObserversAtEveryOrderAroundNestedLoopsAreDelivered() {
        RunLoopScheduler.mainRunLoop.prepare(modes: [Self.customMode])
        for seed in randomSeeds(fixed: [3, 9, 27]) {
            var random = SeededGenerator(seed: seed)
            for iteration in 0..<25 {
                let order = Self.orders.randomElement(using: &random)!
                let nested = [nil, RunLoop.Mode.default, Self.customMode, Self.privateMode].randomElement(
                    using: &random)!
                let requestFirst = Bool.random(using: &random)
                let viaOtherContext = Bool.random(using: &random)
                let label =
                    "seed \(seed) #\(iteration): order \(order), nested \(nested?.rawValue ?? "none"), "
                    + "request \(requestFirst ? "before" : "after") it, \(viaOtherContext ? "from an updater" : "direct")"
                XCTAssertTrue(
                    play(order: order, nested: nested, requestFirst: requestFirst, viaOtherContext: viaOtherContext),
                    label)
            }
        }
    }

    /// One case: an observer at `order` (added now, after the scheduler's) requests `target` — directly,
    /// or through the updater of another context that it asks for an update — around a nested loop.
    private func play(order: CFIndex, nested: RunLoop.Mode?, requestFirst: Bool, viaOtherContext: Bool) -> Bool {
        let target = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        let relay = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
        var deliveries = 0
        var nestedDepth = 0
        target.onUpdate { _ in
            deliveries += 1
            // Inside the nested loop a stop would end that loop, not the run under test: the observer
            // stops it once the nested loop has returned.
            if nestedDepth == 0 { CFRunLoopStop(CFRunLoopGetCurrent()) }
        }
        relay.onUpdate { _ in target.setNeedsUpdate() }
        func request() {
            if viaOtherContext { relay.setNeedsUpdate() } else { target.setNeedsUpdate() }
        }
        func nestedLoop() {
            guard let nested else { return }
            nestedDepth += 1
            runNestedLoop(mode: nested)
            nestedDepth -= 1
            if deliveries > 0 { CFRunLoopStop(CFRunLoopGetCurrent()) }
        }
        let observer = MainLoopObserver(order: order, once: true) {
            if requestFirst {
                request()
                nestedLoop()
            } else {
                nestedLoop()
                request()
            }
        }
        defer { observer.invalidate() }
        let stopped = runUntilStopped(seconds: 5)
        return stopped && deliveries == 1
    }
}
