import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContext
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

/// `StateUpdatingContext` driven from several threads at once with random flags, checked against what
/// must hold whatever the interleaving: once everything is applied and the scheduler is idle, the last
/// render shows the current state (an early non-animated flush may show an older state, but never last),
/// every rendered state is one that was committed, each slot only grows (renders never go back), and a
/// modify that leaves the state equal renders nothing, animated or not.
final class StateUpdatingContextRandomTests: XCTestCase {
    struct Slots: Equatable, Sendable {
        var values = [0, 0, 0]
    }

    func testChangesFromSeveralThreadsWithMixedFlagsAlwaysEndRenderingTheCurrentState() {
        for seed in randomSeeds(fixed: [5, 17, 2_024]) {
            run(seed: seed, rounds: 400)
        }
    }

    private func run(seed: UInt64, rounds: Int) {
        var random = SeededGenerator(seed: seed)
        let scheduler = StallingScheduler()
        let view = StateUpdatingContext(state: Slots(), scheduler: scheduler, refreshEvents: [])
        var renders: [Slots] = []
        view.onRender { state, _, _ in renders.append(state) }
        let box = UncheckedBox(view)
        for round in 0..<rounds {
            let threadSeeds = (0..<2).map { _ in random.next() }
            let done = DispatchSemaphore(value: 0)
            let started = DispatchSemaphore(value: 0)
            for (slot, threadSeed) in threadSeeds.enumerated() {
                Thread.detachNewThread {
                    var local = SeededGenerator(seed: threadSeed)
                    started.signal()
                    for _ in 0..<Int.random(in: 1...12, using: &local) {
                        let flag: Bool? = [nil, false, true].randomElement(using: &local)!
                        box.value.modify(animated: flag) { $0.values[slot] += 1 }
                    }
                    done.signal()
                }
            }
            // Meanwhile the main thread changes its own slot, turns, and uses the context.
            started.wait()
            started.wait()
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6:
                    let flag: Bool? = [nil, false, true].randomElement(using: &random)!
                    view.modify(animated: flag) { $0.values[2] += 1 }
                case 6:
                    // A change that leaves the state equal requests nothing and renders nothing, whatever its
                    // flag and whatever is pending (the early flush is for a change).
                    let before = renders.count
                    view.modify(animated: [nil, false, true].randomElement(using: &random)!) {
                        $0.values[2] = $0.values[2]
                    }
                    if renders.count != before {
                        XCTFail("seed \(seed) round \(round): a modify that changed nothing rendered")
                        return
                    }
                case 7..<9:
                    scheduler.runTurn()
                default:
                    view.context.update()
                }
            }
            done.wait()
            done.wait()
            var turns = 0
            while scheduler.hasWork(admittedBy: nil) && turns < 100 {
                scheduler.runTurn()
                turns += 1
            }
            XCTAssertFalse(scheduler.hasWork(admittedBy: nil), "seed \(seed) round \(round): not idle")
            let current = view.state
            guard renders.last == current else {
                let last = String(describing: renders.last)
                XCTFail("seed \(seed) round \(round): the last render \(last) is not the state \(current)")
                return
            }
            for (earlier, later) in zip(renders, renders.dropFirst()) {
                for slot in 0..<3 where later.values[slot] < earlier.values[slot] {
                    XCTFail("seed \(seed) round \(round): slot \(slot) went back from \(earlier) to \(later)")
                    return
                }
            }
        }
    }
}

/// A scheduler for the test thread that stalls every other thread for a random moment when it asks
/// whether it is the scheduler's — which a `StateUpdatingContext` change does between its commit and its
/// request — so that the main thread's changes land in that window as often as they can.
private final class StallingScheduler: CoalescingScheduler, @unchecked Sendable {
    // @unchecked Sendable: no state of its own beyond the base class's.
    override var isMainThreadScheduler: Bool { true }

    override var isCurrent: Bool {
        let mine = super.isCurrent
        if !mine { usleep(UInt32.random(in: 0..<40)) }
        return mine
    }
}
