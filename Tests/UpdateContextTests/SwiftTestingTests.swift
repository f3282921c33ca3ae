import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import Testing
import UpdateContextCompatibility
import UpdateContextSwiftUI

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// Swift Testing runs under an async main on Linux: no run loop turns and `Thread.isMainThread` is false.
/// What does not need a turning loop is tested here too: the pure rules, and contexts driven by a
/// `ManualScheduler`, which stands in for the main thread on whatever thread creates it.
@Suite("Precedence rules and manual scheduling under Swift Testing")
struct SwiftTestingTests {
    @Test("The state machine follows the contract's table", arguments: PrecedenceTable.contract)
    func rules(_ row: PrecedenceRow) {
        let timeline = (row.timeline, row.defaultAnimated, row.expectedDeliveries)
        var machine = UpdateStateMachine()
        var delivered = ""
        func record(_ flag: Bool?) {
            if let flag { delivered += flag ? "a" : "n" }
        }
        for token in timeline.0.split(separator: " ") {
            switch token {
            case "N": record(machine.play(.setNeedsUpdate(nil), defaultAnimated: timeline.1))
            case "F": record(machine.play(.setNeedsUpdate(false), defaultAnimated: timeline.1))
            case "T": record(machine.play(.setNeedsUpdate(true), defaultAnimated: timeline.1))
            case "U": record(machine.play(.update(nil), defaultAnimated: timeline.1))
            case "U(T)": record(machine.play(.update(true), defaultAnimated: timeline.1))
            default: record(machine.playEndOfCycle(defaultAnimated: timeline.1))
            }
        }
        #expect(delivered == timeline.2, "\(timeline.0)")
        #expect(machine.due == nil)
    }

    @Test("Every contract timeline, through a context on a manual scheduler", arguments: PrecedenceTable.contract)
    func timeline(_ row: PrecedenceRow) {
        let result = playTimeline(row.timeline, defaultAnimated: row.defaultAnimated, updaters: 2)
        #expect(result.written == row.expected, "\(row)")
        #expect(result.updatersAgree)
        #expect(result.endedIdle)
    }

    @Test("A context on a manual scheduler delivers on the thread that turns it, off the main thread")
    func manualSchedulerOffTheMainThread() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var flags: [Bool] = []
        context.onUpdate { flags.append($0) }
        context.setNeedsUpdate(animated: false)
        context.setNeedsUpdate(animated: true)
        #expect(flags == [false])
        #expect(context.isUpdatePending)
        scheduler.turn()
        #expect(flags == [false, true])
        #expect(!context.isUpdatePending)
    }

    @Test("A coalescing context on a manual scheduler coalesces and keeps order")
    func coalescingOnAManualScheduler() {
        let scheduler = ManualScheduler()
        let context = NotificationCoalescingContext(scheduler: scheduler)
        var names: [String] = []
        for name in ["x", "y"] {
            context.observe(Notification.Name(name)) { _, note in names.append(note.name.rawValue) }
        }
        for _ in 0..<10 {
            context.enqueue(Notification(name: Notification.Name("x")))
            context.enqueue(Notification(name: Notification.Name("y")))
        }
        scheduler.turn()
        #expect(names == ["x", "y"])
        #expect(context.pendingCount == 0)
    }
}

/// The README's Swift Testing example: a `ViewUpdating` object on a manual scheduler, in a `@MainActor`
/// test. On Linux, Swift Testing runs under `dispatchMain()`: the first thread has exited and main-actor
/// jobs run as main-queue blocks on other threads, which is where `updateView(animated:)` must be called.
@Suite("The canonical path under Swift Testing")
struct CanonicalPathSwiftTestingTests {
    final class Badge: ViewUpdating {
        let updateContext: ViewUpdatingContext
        @NeedsUpdate var count = 0
        var shown: [Int] = []

        init(scheduler: CoalescingScheduler) {
            updateContext = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        }

        func updateView(animated: Bool) { shown.append(count) }
    }

    @MainActor @Test("A @MainActor test drives a ViewUpdating object on a manual scheduler")
    func manyChangesRenderOnce() throws {
        let scheduler = ManualScheduler()
        let badge = Badge(scheduler: scheduler)
        badge.startUpdatingView()
        badge.count = 1
        badge.count = 2
        scheduler.turn()
        #expect(badge.shown == [0, 2])
        try scheduler.expectIdle()
    }
}
