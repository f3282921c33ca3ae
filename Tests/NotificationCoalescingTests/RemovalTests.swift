import CMallocStats
import Foundation
import XCTest

@testable import CoalescingRuntime
@testable import NotificationCoalescing

/// Removal is final (CONTRACT.md): once a handler is removed — by its token, by `removeObservers()`, or
/// with its context — it is never called again, not even later in the post under way, and what it
/// captured is released at once.
final class RemovalTests: XCTestCase {
    private var scheduler: ManualScheduler!

    override func setUp() {
        scheduler = ManualScheduler()
    }

    override func tearDown() {
        XCTAssertNoThrow(try scheduler.expectIdle())
        scheduler = nil
    }

    /// Six observers of one name; whichever runs first removes the other five (`remove` does it).
    /// NotificationCenter calls observers in no fixed order, so "first" is whoever is called first.
    private func sixObserversFirstRemovesTheRest(
        on context: NotificationCoalescingContext, remove: @escaping ([NotificationObserver]) -> Void
    ) -> Int {
        var tokens: [NotificationObserver] = []
        var calls = 0
        for _ in 0..<6 {
            let token = context.observe(.a) { own, _ in
                calls += 1
                if calls == 1 { remove(tokens.filter { $0 !== own }) }
            }
            tokens.append(token)
        }
        context.enqueue(Notification(name: .a))
        scheduler.turn()
        return calls
    }

    func testObserversRemovedByTokenInsideAPostAreNotCalledLaterInIt() {
        let context = NotificationCoalescingContext(scheduler: scheduler)
        let calls = sixObserversFirstRemovesTheRest(on: context) { others in others.forEach { $0.remove() } }
        XCTAssertEqual(calls, 1, "the five removed observers must not run in the post under way")
    }

    func testRemoveObserversInsideAPostStopsTheRestOfIt() {
        let context = NotificationCoalescingContext(scheduler: scheduler)
        let calls = sixObserversFirstRemovesTheRest(on: context) { _ in context.removeObservers() }
        XCTAssertEqual(calls, 1)
    }

    func testAContextReleasedInsideItsOwnHandlerCallsNothingMore() {
        final class Holder {
            var context: NotificationCoalescingContext?
        }
        let holder = Holder()
        holder.context = NotificationCoalescingContext(center: NotificationCenter(), scheduler: scheduler)
        weak let weakContext = holder.context
        var calls = 0
        for _ in 0..<6 {
            holder.context!.observe(.a) { _, _ in
                calls += 1
                holder.context = nil  // the context goes, with all its registrations
            }
        }
        holder.context!.enqueue(Notification(name: .a))
        scheduler.turn()
        XCTAssertEqual(calls, 1)
        XCTAssertNil(weakContext)
    }

    func testAPlainObservingContextReleasedInsideItsHandlerCallsNothingMore() {
        final class Holder {
            var context: NotificationObservingContext?
        }
        let center = NotificationCenter()
        let holder = Holder()
        holder.context = NotificationObservingContext(center: center)
        var calls = 0
        for _ in 0..<6 {
            holder.context!.observe(.a) { _, _ in
                calls += 1
                holder.context = nil
            }
        }
        center.post(name: .a, object: nil)
        XCTAssertEqual(calls, 1)
    }

    func testWhatARemovedHandlerCapturedIsReleasedAtOnceEvenInThePostUnderWay() {
        final class Canary {}
        let context = NotificationCoalescingContext(scheduler: scheduler)
        var canaries: [Weak<Canary>] = []
        var tokens: [NotificationObserver] = []
        var othersReleased: Bool?
        for _ in 0..<6 {
            let canary = Canary()
            canaries.append(Weak(canary))
            let token = context.observe(.a) { own, _ in
                withExtendedLifetime(canary) {}
                guard othersReleased == nil else { return }
                let others = tokens.filter { $0 !== own }
                others.forEach { $0.remove() }
                // The center still holds its snapshot of this post's observers; their captures must be
                // gone all the same.
                othersReleased = canaries.filter { $0.value != nil }.count == 1
            }
            tokens.append(token)
        }
        context.enqueue(Notification(name: .a))
        scheduler.turn()
        XCTAssertEqual(othersReleased, true)
    }

    // MARK: memory follows what is pending

    func testManyCoalescedAppendsKeepTheQueueSmall() {
        var queue = PendingQueue()
        let note = Notification(name: .a)
        for _ in 0..<300_000 {  // the issue saw +172 MB at 2 000 000; the bound does not depend on the count
            queue.removeMatching(name: note.name, sender: .none, mask: [.onName, .onSender])
            queue.append(PendingNotification(notification: note, style: .asap, modes: [.default], sender: .none))
        }
        XCTAssertEqual(queue.count, 1)
        XCTAssertLessThanOrEqual(queue.slots.count, PendingQueue.compactionThreshold, "slots follow what is held")
    }

    func testCoalescedEnqueuesDoNotGrowMemory() {
        let context = NotificationCoalescingContext(scheduler: scheduler)
        let note = Notification(name: .a, object: SwiftSender())
        for _ in 0..<1_000 { context.enqueue(note) }  // warm up the allocations a turn keeps
        let before = malloc_stats_bytes_in_use()
        for _ in 0..<200_000 { context.enqueue(note) }
        let grown = malloc_stats_bytes_in_use() - before
        XCTAssertEqual(context.pendingCount, 1)
        // Before the fix this grew by ~17 MB (a slot and an index entry per enqueue).
        XCTAssertLessThan(grown, 256 << 10, "200 000 coalesced enqueues grew the heap by \(grown) bytes")
        scheduler.turn()
    }

    func testMixedMasksStayBoundedToo() {
        var queue = PendingQueue()
        for index in 0..<100_000 {
            let name = Notification.Name("n\(index % 3)")
            let mask: NotificationQueue.NotificationCoalescing = index % 2 == 0 ? [.onName] : [.onSender]
            queue.removeMatching(name: name, sender: .none, mask: mask)
            queue.append(
                PendingNotification(
                    notification: Notification(name: name), style: .asap, modes: [.default], sender: .none))
        }
        let held = queue.count
        XCTAssertLessThanOrEqual(held, 3)
        XCTAssertLessThanOrEqual(queue.slots.count, PendingQueue.compactionThreshold)
        let taken = queue.take { _ in true }
        XCTAssertEqual(taken.count, held, "compaction kept every held notification")
        XCTAssertTrue(queue.isEmpty)
    }
}

/// A weak reference, to watch an object go.
final class Weak<T: AnyObject> {
    weak var value: T?
    init(_ value: T) { self.value = value }
}
