import Foundation
import NotificationCoalescing
import XCTest

@testable import UpdateContext

/// Records deliveries: the flag, and whether it came on the main thread.
final class Deliveries: @unchecked Sendable {
    // @unchecked Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var _flags: [Bool] = []
    private var _offMain = 0

    func record(_ animated: Bool) {
        lock.lock()
        defer { lock.unlock() }
        _flags.append(animated)
        if !Thread.isMainThread { _offMain += 1 }
    }

    var flags: [Bool] {
        lock.lock()
        defer { lock.unlock() }
        return _flags
    }

    var count: Int { flags.count }
    var offMainCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return _offMain
    }

    /// `n`/`a` per delivery, as the contract writes them.
    var letters: String { flags.map { $0 ? "a" : "n" }.joined() }
}

/// Runs `body` on a new thread and waits until it has finished: a request "from another thread" that
/// has certainly been made before the test goes on.
func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    done.wait()
}

/// Runs the main run loop until `condition` holds or `timeout` passes.
func spinMainLoop(timeout: TimeInterval = 5, until condition: () -> Bool) {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !condition() && Date() < deadline {
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
    }
}

/// Lets the main run loop turn a few times.
func turnMainLoop(_ count: Int = 3) {
    for _ in 0..<count {
        _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.005))
    }
}

/// Plays a timeline written as in CONTRACT.md on a context driven by a manual scheduler.
///
/// Requests: `N`/`F`/`T` = `setNeedsUpdate(animated: nil/false/true)`; `U`, `U(F)`, `U(T)` =
/// `update(animated:)`; `I` = `updateIfNeeded()`; `S`/`R` = `suspend()`/`resume()`; `|` = end of a
/// cycle. The result repeats the timeline with each delivery (`n` or `a`) written where it happened.
func play(_ timeline: String, defaultAnimated: Bool = false, updaters: Int = 1) -> String {
    let scheduler = ManualScheduler()
    let context = ViewUpdatingContext(animated: defaultAnimated, scheduler: scheduler, refreshEvents: [])
    var out: [String] = []
    var perUpdater = Array(repeating: [Bool](), count: updaters)
    for index in 0..<updaters {
        context.onUpdate { animated in
            perUpdater[index].append(animated)
            if index == 0 { out.append(animated ? "a" : "n") }
        }
    }
    for token in timeline.split(separator: " ") {
        out.append(String(token))
        switch token {
        case "N": context.setNeedsUpdate()
        case "F": context.setNeedsUpdate(animated: false)
        case "T": context.setNeedsUpdate(animated: true)
        case "U": context.update()
        case "U(F)": context.update(animated: false)
        case "U(T)": context.update(animated: true)
        case "I": context.updateIfNeeded()
        case "S": context.suspend()
        case "R": context.resume()
        case "|": scheduler.turn()
        default: XCTFail("unknown token \(token)")
        }
    }
    for index in 1..<max(updaters, 1) where perUpdater[index] != perUpdater[0] {
        XCTFail("updater \(index) got \(perUpdater[index]), updater 0 got \(perUpdater[0])")
    }
    return out.joined(separator: " ")
}
