import CoalescingTestSupport
import CoreFoundation
import Foundation
import NotificationCoalescing
import UpdateContextCompatibility
import UpdateContextSwiftUI
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// The liveness invariant searched for on the real main run loop: random requests from the main
/// thread, from other threads, from an observer ordered after the scheduler's (Core Animation's commit,
/// where `layoutSubviews` runs), from inside updaters that run nested loops, interleaved with passes in
/// a private mode, removals and releases. After each step the loop runs until every request has been
/// delivered — stopped by an observer after every other one, the moment nothing is left — and a run that
/// ends by its deadline instead means the thread slept with work pending. Updaters check that they never
/// run in a private mode, after their removal, or after their context's release.
final class RandomizedRunLoopTests: XCTestCase {
    final class Subject {
        var context: ViewUpdatingContext?
        var pending = false
        var released = false
        var violations: [String] = []
        var nestedLoopThenRequest: Subject?
    }

    func testTheMainLoopNeverSleepsWithARequestPending() {
        for seed in randomSeeds(fixed: [7, 99]) {
            run(seed: seed, steps: 250)
        }
    }

    private func run(seed: UInt64, steps: Int) {
        var random = SeededGenerator(seed: seed)
        let privateMode = RunLoop.Mode("test.random.loop.private.\(seed)")
        let queue = NotificationCoalescingContext(scheduler: .mainRunLoop)
        var queuePending = false
        queue.observe(.init("random.common")) { _, _ in queuePending = false }
        queue.observe(.init("random.private")) { _, _ in }
        var subjects: [Subject] = []
        var lateRequest: Subject?

        func make(_ subject: Subject) {
            let context = ViewUpdatingContext(scheduler: .mainRunLoop, refreshEvents: [])
            context.onUpdate { [weak subject] _ in
                guard let subject else { return }
                if subject.released { subject.violations.append("delivered after release") }
                let mode = RunLoop.current.currentMode ?? .default
                if !RunLoopScheduler.mainRunLoop.isCommon(mode) {
                    subject.violations.append("delivered in \(mode.rawValue)")
                }
                subject.pending = false
                if let other = subject.nestedLoopThenRequest {
                    subject.nestedLoopThenRequest = nil
                    other.pending = true
                    other.context?.setNeedsUpdate()
                    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.001))
                }
            }
            subject.context = context
        }
        for _ in 0..<3 {
            let subject = Subject()
            make(subject)
            subjects.append(subject)
        }

        // After every other observer of each pass: the late request, then the check that stops the run.
        let late = MainLoopObserver(order: 2_000_000, once: false) {
            if let subject = lateRequest {
                lateRequest = nil
                subject.pending = true
                subject.context?.setNeedsUpdate()
            }
        }
        defer { late.invalidate() }
        let last = MainLoopObserver(order: CFIndex.max, once: false) {
            let waiting = subjects.contains { $0.pending } || queuePending || lateRequest != nil
            if !waiting { CFRunLoopStop(CFRunLoopGetMain()) }
        }
        defer { last.invalidate() }

        var log: [String] = []
        for step in 0..<steps {
            let subject = subjects.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                log.append("main")
                subject.pending = true
                subject.context?.setNeedsUpdate(animated: [nil, false, true].randomElement(using: &random)!)
            case 25..<40:
                log.append("other thread")
                subject.pending = true
                onAnotherThread { [weak context = subject.context] in context?.setNeedsUpdate() }
            case 40..<55:
                log.append("late observer")
                lateRequest = subject
            case 55..<65:
                log.append("nested loop in an updater")
                subject.nestedLoopThenRequest = subjects.randomElement(using: &random)!
                subject.pending = true
                subject.context?.setNeedsUpdate()
            case 65..<75:
                log.append("queue")
                queuePending = true
                if Bool.random(using: &random) {
                    queue.enqueue(Notification(name: .init("random.common")), forModes: [.common])
                } else {
                    onAnotherThread { queue.enqueue(Notification(name: .init("random.common")), forModes: [.common]) }
                }
            case 75..<85:
                log.append("private mode pass")
                queue.enqueue(Notification(name: .init("random.private")), forModes: [privateMode])
                subject.pending = true
                subject.context?.setNeedsUpdate()
                let keepAlive = CFRunLoopTimerCreateWithHandler(
                    kCFAllocatorDefault, CFAbsoluteTimeGetCurrent() + 60, 0, 0, 0
                ) { _ in }
                CFRunLoopAddTimer(CFRunLoopGetMain(), keepAlive, cfRunLoopMode(privateMode.rawValue))
                _ = CFRunLoopRunInMode(cfRunLoopMode(privateMode.rawValue), 0.002, false)
                CFRunLoopTimerInvalidate(keepAlive)
            case 85..<93:
                log.append("remove updaters")
                subject.context?.removeUpdaters()
                subject.pending = false
                make(subject)  // a fresh context for the same subject: the old one delivers nothing more
            default:
                log.append("release")
                subject.released = true
                subject.pending = false
                if subject.nestedLoopThenRequest != nil { subject.nestedLoopThenRequest = nil }
                if lateRequest === subject { lateRequest = nil }
                subject.context = nil
                let fresh = Subject()
                make(fresh)
                subjects[subjects.firstIndex { $0 === subject }!] = fresh
            }
            let waiting = subjects.contains { $0.pending } || queuePending || lateRequest != nil
            if waiting {
                let result = CFRunLoopRunInMode(cfRunLoopMode("kCFRunLoopDefaultMode"), 10, false)
                if result != .stopped {
                    XCTFail("seed \(seed) step \(step): the loop slept with work pending; last steps \(log.suffix(8))")
                    return
                }
            }
            for s in subjects + [subject] where !s.violations.isEmpty {
                XCTFail("seed \(seed) step \(step): \(s.violations); last steps \(log.suffix(8))")
                return
            }
        }
    }
}
