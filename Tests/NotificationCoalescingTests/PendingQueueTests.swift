import Foundation
import XCTest

@testable import CoalescingRuntime
@testable import NotificationCoalescing

/// The pure pending-queue structure, tested directly (no scheduler, no center).
final class PendingQueueTests: XCTestCase {
    private var unique: UInt64 = 0

    private func pending(
        _ name: Notification.Name, _ sender: AnyObject? = nil, _ style: PendingStyle = .asap, tag: Int = 0
    )
        -> PendingNotification
    {
        PendingNotification(
            notification: Notification(name: name, object: sender, userInfo: ["tag": tag]),
            style: style, modes: [.default],
            sender: SenderKey(sender) {
                unique += 1
                return unique
            })
    }

    private func enqueue(
        _ queue: inout PendingQueue, _ p: PendingNotification, _ mask: NotificationQueue.NotificationCoalescing
    ) {
        queue.removeMatching(name: p.notification.name, sender: p.sender, mask: mask)
        queue.append(p)
    }

    private func tags(_ taken: [PendingNotification]) -> [String] {
        taken.map { "\($0.notification.name.rawValue.dropFirst(5))\($0.notification.userInfo!["tag"]!)" }
    }

    func testFIFOAndNewestTakesTheEnd() {
        var queue = PendingQueue()
        enqueue(&queue, pending(.a, tag: 1), [.onName, .onSender])
        enqueue(&queue, pending(.b, tag: 1), [.onName, .onSender])
        enqueue(&queue, pending(.a, tag: 2), [.onName, .onSender])
        enqueue(&queue, pending(.c, tag: 1), [.onName, .onSender])
        XCTAssertEqual(queue.count, 3)
        XCTAssertEqual(tags(queue.take { _ in true }), ["b1", "a2", "c1"])
        XCTAssertTrue(queue.isEmpty)
    }

    func testEachMaskAgainstMixedSenders() {
        let s1 = SwiftSender()
        let s2 = SwiftSender()
        // Held: a/s1, a/s2, b/s1, a/nil
        func filled() -> PendingQueue {
            var q = PendingQueue()
            enqueue(&q, pending(.a, s1, tag: 1), [])
            enqueue(&q, pending(.a, s2, tag: 2), [])
            enqueue(&q, pending(.b, s1, tag: 3), [])
            enqueue(&q, pending(.a, nil, tag: 4), [])
            return q
        }
        let newcomer = pending(.a, s1, tag: 9)
        let expectations: [(NotificationQueue.NotificationCoalescing, [String])] = [
            ([.onName, .onSender], ["a2", "b3", "a4", "a9"]),
            ([.onName], ["b3", "a9"]),
            ([.onSender], ["a2", "a4", "a9"]),
            ([], ["a1", "a2", "b3", "a4", "a9"]),
        ]
        for (mask, expected) in expectations {
            var q = filled()
            enqueue(&q, newcomer, mask)
            XCTAssertEqual(tags(q.take { _ in true }), expected, "mask \(mask.rawValue)")
        }
    }

    func testNilSenderMatchesNilSenderOnly() {
        var q = PendingQueue()
        enqueue(&q, pending(.a, nil, tag: 1), [.onName, .onSender])
        enqueue(&q, pending(.a, nil, tag: 2), [.onName, .onSender])
        enqueue(&q, pending(.a, SwiftSender(), tag: 3), [.onName, .onSender])
        XCTAssertEqual(tags(q.take { _ in true }), ["a2", "a3"])
    }

    func testValueTypeSenderNeverMatchesOnSender() {
        var q = PendingQueue()
        let value: Any = 42
        for tag in 1...3 {
            let p = PendingNotification(
                notification: Notification(name: .a, object: value, userInfo: ["tag": tag]), style: .asap,
                modes: [.default], sender: SenderKey(value) { UInt64(tag) })
            enqueue(&q, p, [.onName, .onSender])
        }
        XCTAssertEqual(q.count, 3)
    }

    func testStaleIndexEntriesAreSkipped() {
        // Remove through the name index, then through the (name, sender) index that still lists the slot.
        let s = SwiftSender()
        var q = PendingQueue()
        enqueue(&q, pending(.a, s, tag: 1), [])
        enqueue(&q, pending(.a, nil, tag: 2), [.onName])  // removes a1 via the name index
        XCTAssertEqual(q.count, 1)
        enqueue(&q, pending(.a, s, tag: 3), [.onName, .onSender])  // a1's stale slot: nothing to remove
        XCTAssertEqual(q.count, 2)
        enqueue(&q, pending(.b, s, tag: 4), [.onSender])  // removes a3 via the sender index
        XCTAssertEqual(tags(q.take { _ in true }), ["a2", "b4"])
    }

    func testTakePostsAsapBeforeIdleAndKeepsWhatTheModeDoesNotAdmit() {
        var q = PendingQueue()
        enqueue(&q, pending(.a, nil, .whenIdle, tag: 1), [])
        enqueue(&q, pending(.b, nil, .asap, tag: 2), [])
        enqueue(&q, pending(.c, nil, .whenIdle, tag: 3), [])
        enqueue(&q, pending(.d, nil, .asap, tag: 4), [])
        let taken = q.take { $0.notification.name != .c }
        XCTAssertEqual(tags(taken), ["b2", "d4", "a1"])
        XCTAssertEqual(q.count, 1)
        // What stayed is still indexed: it coalesces with a newcomer.
        enqueue(&q, pending(.c, nil, .asap, tag: 5), [.onName])
        XCTAssertEqual(tags(q.take { _ in true }), ["c5"])
    }

    func testRemoveMatchingCountsOnlyLiveEntries() {
        var q = PendingQueue()
        for tag in 0..<10 { enqueue(&q, pending(.a, nil, tag: tag), []) }
        XCTAssertEqual(q.removeMatching(name: .a, sender: .none, mask: [.onName, .onSender]), 10)
        XCTAssertEqual(q.removeMatching(name: .a, sender: .none, mask: [.onName]), 0)
        XCTAssertTrue(q.isEmpty)
    }
}
