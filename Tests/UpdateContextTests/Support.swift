import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
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

/// Plays a timeline written as in CONTRACT.md (see `PrecedenceRow`) on a context driven by a manual
/// scheduler, and fails the test when the updaters disagree or work is left pending at the end.
func play(
    _ timeline: String, defaultAnimated: Bool = false, updaters: Int = 1, file: StaticString = #filePath,
    line: UInt = #line
) -> String {
    let result = playTimeline(timeline, defaultAnimated: defaultAnimated, updaters: updaters)
    XCTAssertTrue(result.updatersAgree, "updaters got different flags in \(timeline)", file: file, line: line)
    XCTAssertTrue(result.endedIdle, "work left pending after \(timeline)", file: file, line: line)
    return result.written
}

typealias SendableLog = SharedLog
