import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// No internal lock is held while user code runs: user objects — `==`, deinits of states, of captured
/// values and of notification values, updaters and handlers — call back into the library from there.
/// Each scenario runs on a thread of its own (which owns the manual scheduler), watched: a lock held
/// around user code would deadlock (Linux) or abort (Darwin), and the watch turns a deadlock into a
/// failure instead of a hang.
final class ReentrantUserObjectsTests: XCTestCase {
    private func watched(_ file: StaticString = #filePath, line: UInt = #line, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        XCTAssertEqual(
            done.wait(timeout: .now() + 20), .success, "deadlocked: user code ran under a lock", file: file, line: line)
    }

    /// A state whose `==` reads the context it lives in.
    struct Nosy: Equatable, @unchecked Sendable {
        // @unchecked Sendable: `probe` is set before the context is shared and only read.
        var value = 0
        var probe: (() -> Void)?
        static func == (lhs: Nosy, rhs: Nosy) -> Bool {
            lhs.probe?()
            return lhs.value == rhs.value
        }
    }

    func testAStatesEqualityMayReadTheContext() {
        let reads = AtomicCounter()
        watched {
            let scheduler = ManualScheduler()
            let view = StateUpdatingContext(state: Nosy(), scheduler: scheduler, refreshEvents: [])
            view.modify { state in
                state.probe = { [weak view] in
                    _ = view?.state  // the state's lock
                    _ = view?.context.isUpdatePending  // the context's lock
                    reads.add()
                }
            }
            var renders = 0
            view.onRender { _, _, _ in renders += 1 }
            view.modify { $0.value = 1 }
            view.modify { $0.value = 1 }  // equal: `==` runs, reads, and requests nothing
            XCTAssertNotNil(try? scheduler.runUntilIdle(), "work left after the turns")
            XCTAssertEqual(renders, 1)
        }
        XCTAssertGreaterThan(reads.value, 0)
    }

    func testTheDeinitOfAReplacedStateMayUseTheContext() {
        watched {
            let scheduler = ManualScheduler()
            final class Token {
                let action: () -> Void
                init(_ action: @escaping () -> Void) { self.action = action }
                deinit { action() }
            }
            struct Holder: Equatable {
                var token: Token?
                var value = 0
                static func == (lhs: Holder, rhs: Holder) -> Bool { lhs.value == rhs.value }
            }
            let view = StateUpdatingContext(state: Holder(), scheduler: scheduler, refreshEvents: [])
            var calledBack = 0
            view.modify { [weak view] state in
                state.token = Token {
                    _ = view?.state.value  // runs when the state holding it is replaced
                    view?.context.setNeedsUpdate()
                    calledBack += 1
                }
                state.value = 1
            }
            view.modify {
                $0.token = nil
                $0.value = 2
            }  // the copy in the body goes; then the stored one
            XCTAssertNotNil(try? scheduler.runUntilIdle(), "work left after the turns")
            XCTAssertEqual(calledBack, 1)
        }
    }

    func testAnUpdatersCapturedValueMayUseTheContextFromItsDeinit() {
        watched {
            let scheduler = ManualScheduler()
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            var calledBack = 0
            do {
                let captured = CallsBack {
                    _ = context.updaterCount
                    context.setNeedsUpdate()
                    context.onUpdate { _ in }
                    calledBack += 1
                }
                let token = context.onUpdate { _ in _ = captured }
                token.remove()  // releases the closure, and `captured` with it
            }
            XCTAssertEqual(calledBack, 1)
            do {
                let captured = CallsBack {
                    context.removeUpdaters()
                    calledBack += 1
                }
                context.onUpdate { _ in _ = captured }
            }
            context.removeUpdaters()
            XCTAssertEqual(calledBack, 2)
            XCTAssertNotNil(try? scheduler.runUntilIdle(), "work left after the turns")
        }
    }

    func testAHandlersCapturedValueMayUseTheContextFromItsDeinit() {
        watched {
            let scheduler = ManualScheduler()
            let queue = NotificationCoalescingContext(scheduler: scheduler)
            var calledBack = 0
            do {
                let captured = CallsBack {
                    queue.observe(.init("reentrant.b")) { _, _ in }
                    queue.enqueue(Notification(name: .init("reentrant.b")))
                    queue.removeObservers()
                    calledBack += 1
                }
                queue.observe(.init("reentrant.a")) { _, _ in _ = captured }
            }
            queue.removeObservers()
            XCTAssertEqual(calledBack, 1)
            XCTAssertNotNil(try? scheduler.runUntilIdle(), "work left after the turns")
        }
    }

    func testANotificationValueReleasedWithTheContextMayUseAnotherContext() {
        watched {
            let scheduler = ManualScheduler()
            let other = NotificationCoalescingContext(scheduler: scheduler)
            var queue: NotificationCoalescingContext? = NotificationCoalescingContext(scheduler: scheduler)
            queue?.enqueue(
                Notification(
                    name: .init("reentrant.c"), object: nil,
                    userInfo: ["v": CallsBack { other.enqueue(Notification(name: .init("reentrant.d"))) }]))
            queue = nil  // released with the notification pending: its value goes, outside every lock
            XCTAssertEqual(other.pendingCount, 1)
            XCTAssertNotNil(try? scheduler.runUntilIdle(), "work left after the turns")
        }
    }

    func testAnUpdaterMayUseEveryAPIOfItsContext() {
        watched {
            let scheduler = ManualScheduler()
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            var calls = 0
            context.onUpdate { _ in
                calls += 1
                guard calls == 1 else { return }
                context.setNeedsUpdate(animated: false)
                context.setNeedsUpdate(animated: true)
                context.update()
                context.updateIfNeeded()
                _ = context.isUpdatePending
                context.suspend()
                context.resume()
                context.onUpdate { _ in }
                _ = context.updaterCount
            }
            context.update()
            XCTAssertNotNil(try? scheduler.runUntilIdle(), "work left after the turns")
            XCTAssertGreaterThan(calls, 1)
        }
    }
}
