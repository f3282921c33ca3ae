import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))

/// What typed messages are posted for: compared by identity.
final class MessageSubject: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

/// Something a message carries, to see that a released context frees what it held.
final class MessagePayload: Sendable {}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
struct Ping: NotificationCenter.MainActorMessage {
    typealias Subject = MessageSubject
    var value: Int
    var payload: MessagePayload?
    init(_ value: Int, payload: MessagePayload? = nil) {
        self.value = value
        self.payload = payload
    }
}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
struct Pong: NotificationCenter.MainActorMessage {
    typealias Subject = MessageSubject
    var value: Int
}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
struct Tick: NotificationCenter.AsyncMessage {
    typealias Subject = MessageSubject
    var value: Int
}

/// Hands a value to another thread in a test that waits for it.
struct SendableBox<T>: @unchecked Sendable {
    // @unchecked Sendable: the tests use the value on one thread at a time, or a thread-safe one.
    let value: T
    init(_ value: T) { self.value = value }
}

typealias MessageLog = SharedLog

/// Foundation's typed messages, coalesced by a `NotificationCoalescingContext` and observed through the
/// observing contexts. A `ManualScheduler` turned on the main thread (XCTest runs tests there) is the cycle.
@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
final class TypedMessageTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: NotificationCoalescingContext!
    private let log = MessageLog()
    private let s1 = MessageSubject("s1")
    private let s2 = MessageSubject("s2")
    private var tokens: [NotificationCenter.ObservationToken] = []

    override func setUp() {
        scheduler = ManualScheduler()
        context = NotificationCoalescingContext(scheduler: scheduler)
        log.removeAll()
        // Foundation's own observers, of every subject: what a client of the center sees.
        let log = log
        tokens = [
            context.center.addObserver(for: Ping.self) { message in log.append("Ping \(message.value)") },
            context.center.addObserver(for: Pong.self) { message in log.append("Pong \(message.value)") },
        ]
    }

    override func tearDown() {
        for token in tokens { context?.center.removeObserver(token) }
        if let context { XCTAssertEqual(context.pendingCount, 0, "left pending") }
        context = nil
        scheduler = nil
    }

    func testOneTypeAndSubjectPostsOncePerCycleWithTheLatestMessage() {
        for value in 1...5 { context.enqueue(Ping(value), subject: s1) }
        XCTAssertEqual(context.pendingCount, 1)
        XCTAssertEqual(log.entries, [], "nothing posts before the cycle ends")
        scheduler.turn()
        XCTAssertEqual(log.entries, ["Ping 5"])
        scheduler.turn()
        XCTAssertEqual(log.entries, ["Ping 5"], "one post, not one per turn")
    }

    func testTypesAndSubjectsAreKeysOfTheirOwnInTheOrderOfTheirFirstEnqueue() {
        context.enqueue(Ping(1), subject: s1)
        context.enqueue(Ping(2), subject: s2)
        context.enqueue(Ping(3))  // no subject: a key of its own
        context.enqueue(Pong(value: 4), subject: s1)
        context.enqueue(Ping(5), subject: s1)  // replaces Ping 1 in its place
        context.enqueue(Ping(6))
        XCTAssertEqual(context.pendingCount, 4)
        scheduler.turn()
        XCTAssertEqual(log.entries, ["Ping 5", "Ping 2", "Ping 6", "Pong 4"])
    }

    func testMessagesAndNotificationsShareOneFIFOAndNeverCoalesceWithEachOther() {
        context.observe(.a) { _, note in self.log.append("note \(note.name.rawValue)") }
        context.enqueue(Notification(name: .a, object: s1))
        context.enqueue(Ping(1), subject: s1)
        context.enqueue(Notification(name: .b))
        // A notification whose mask matches on sender alone, with the message's subject, leaves the message.
        context.enqueue(Notification(name: .c, object: s1), coalesceMask: .onSender)
        // A `.now` post removes matching notifications, never a message.
        context.enqueue(Notification(name: .d, object: s1), postingStyle: .now, coalesceMask: .onSender)
        scheduler.turn()
        XCTAssertEqual(log.entries, ["Ping 1"], "a and c went with the sender-only masks; b has no observer")
    }

    func testFIFOAcrossKeysWithNotificationsInterleaved() {
        context.observe(.a) { _, note in self.log.append("a \(note.userInfo?["v"] as? Int ?? 0)") }
        context.observe(.b) { _, _ in self.log.append("b") }
        context.enqueue(Notification(name: .a, object: nil, userInfo: ["v": 1]))
        context.enqueue(Ping(1), subject: s1)
        context.enqueue(Notification(name: .b))
        context.enqueue(Ping(2), subject: s1)
        context.enqueue(Notification(name: .a, object: nil, userInfo: ["v": 2]))
        scheduler.turn()
        // The notification `a` takes the end (Foundation's rule); the message keeps its first place.
        XCTAssertEqual(log.entries, ["Ping 2", "b", "a 2"])
    }

    func testEnqueuesFromOtherThreadsPostOncePerKeyOnTheMainThread() {
        let context = SendableBox(context!)
        let s1 = s1
        let s2 = s2
        let threads = 8
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            onAnotherThread {
                for value in 0..<500 {
                    context.value.enqueue(Tick(value: thread * 1000 + value), subject: thread % 2 == 0 ? s1 : s2)
                    context.value.enqueue(Ping(value), subject: thread % 2 == 0 ? s1 : s2)
                }
                group.leave()
            }
        }
        group.wait()
        XCTAssertEqual(context.value.pendingCount, 4, "one per (type, subject), however many threads enqueued")
        scheduler.turn()
        XCTAssertEqual(log.entries.filter { $0.hasPrefix("Ping") }, ["Ping 499", "Ping 499"])
    }

    func testAnAsyncMessageIsPostedOnceAndObservedOnFoundationsTask() {
        let seen = MessageLog()
        let arrived = expectation(description: "the observer ran")
        context.observe(Tick.self, of: s1) { message in
            seen.append("Tick \(message.value) main: \(Thread.isMainThread)")
            arrived.fulfill()
        }
        for value in 1...10 { context.enqueue(Tick(value: value), subject: s1) }
        context.enqueue(Tick(value: 99), subject: s2)  // another subject: not observed
        scheduler.turn()
        wait(for: [arrived], timeout: 10)
        // Whatever else Foundation's tasks might do, give them a chance to show a second call.
        spinRunLoop(timeout: 0.2) { false }
        XCTAssertEqual(seen.entries, ["Tick 10 main: false"])
    }

    func testAnEnqueueFromInsideAnObserverPostsAtTheNextTurnNeverReentrantly() {
        let (context, scheduler, log, s1, s2) = (context!, scheduler!, log, s1, s2)
        _ = (context, scheduler, log, s1, s2)
        MainActor.assumeIsolated {
            var depth = 0
            context.observe(Pong.self) { message in
                depth += 1
                defer { depth -= 1 }
                XCTAssertEqual(depth, 1, "re-entrant post")
                if message.value < 3 { context.enqueue(Pong(value: message.value + 1)) }
            }
            context.enqueue(Pong(value: 1))
            scheduler.turn()
            XCTAssertEqual(log.entries, ["Pong 1"])
            XCTAssertEqual(context.pendingCount, 1)
            scheduler.turn()
            scheduler.turn()
            XCTAssertEqual(log.entries, ["Pong 1", "Pong 2", "Pong 3"])
        }
    }

    func testAContextReleasedWithMessagesPendingPostsNothingAndFreesWhatItHeld() {
        weak var payload: MessagePayload?
        weak var subject: MessageSubject?
        let center = context.center
        do {
            let heldPayload = MessagePayload()
            let heldSubject = MessageSubject("transient")
            payload = heldPayload
            subject = heldSubject
            context.enqueue(Ping(1, payload: heldPayload), subject: heldSubject)
            context.enqueue(Ping(2, payload: heldPayload))
            context.enqueue(Tick(value: 3), subject: heldSubject)
        }
        XCTAssertNotNil(payload, "held while pending")
        XCTAssertNotNil(subject, "held while pending")
        context = nil
        XCTAssertNil(payload, "freed with the context")
        XCTAssertNil(subject, "freed with the context")
        scheduler.turn()
        XCTAssertEqual(log.entries, [])
        for token in tokens { center.removeObserver(token) }
        tokens = []
    }

    func testAReplacedMessageIsFreedAtOnce() {
        weak var first: MessagePayload?
        do {
            let payload = MessagePayload()
            first = payload
            context.enqueue(Ping(1, payload: payload), subject: s1)
        }
        XCTAssertNotNil(first)
        context.enqueue(Ping(2), subject: s1)
        XCTAssertNil(first, "memory follows what is held, not how many enqueues there were")
        scheduler.turn()
    }

    /// A context made on a background thread takes that thread's run loop by default: its main-actor messages
    /// are held apart and posted from the main queue, coalesced per (type, subject), on the main actor (0.2.0
    /// stopped the program at the first enqueue, in every build).
    func testAMainActorMessageOnAContextWhoseSchedulerIsNotTheMainThreadsPostsFromTheMainQueue() {
        let made = NotificationCoalescing.Locked<NotificationCoalescingContext?>(nil)
        onAnotherThread { made.withLock { $0 = NotificationCoalescingContext() } }
        let context = made.withLock { $0 }!
        XCTAssertFalse(context.scheduler.isMainThreadScheduler)
        let posts = MessageLog()
        let subject = s1
        let token = MainActor.assumeIsolated {
            context.center.addObserver(of: subject, for: Ping.self) { message in
                posts.append("Ping \(message.value) main=\(Thread.isMainThread)")
            }
        }
        context.enqueue(Ping(1), subject: subject)
        context.enqueue(Ping(2), subject: subject)
        onAnotherThread { context.enqueue(Ping(3), subject: subject) }
        XCTAssertEqual(posts.entries, [], "held for the main queue's next block")
        XCTAssertEqual(context.pendingCount, 1, "held, and counted, one per (type, subject)")
        spinRunLoop { !posts.entries.isEmpty }
        turnRunLoop()
        XCTAssertEqual(posts.entries, ["Ping 3 main=true"], "once, the latest, on the main thread")
        XCTAssertEqual(context.pendingCount, 0)
        context.enqueue(Ping(4), subject: subject)
        spinRunLoop { posts.entries.count == 2 }
        XCTAssertEqual(posts.entries.last, "Ping 4 main=true")
        withExtendedLifetime(token) {}
    }

    /// The suspicion of the outside reading of 0.2.0, pinned: a main-actor message replaced by an enqueue made
    /// on another thread is released there, by that enqueue — what `sending` hands over may be released on any
    /// thread, and holding every replaced message for the main thread would make memory follow the number of
    /// enqueues. The docs say so (`enqueue(_:subject:)`): enqueue on the main actor a message whose payload must
    /// be released there. The message that is posted is released on the main thread, after its post.
    func testAReplacedMainActorMessageIsReleasedOnTheThreadOfTheEnqueueThatReplacedIt() {
        final class Witness: @unchecked Sendable {
            // @unchecked Sendable: `log` is thread-safe, `name` immutable.
            let name: String
            let log: MessageLog
            init(_ name: String, log: MessageLog) {
                self.name = name
                self.log = log
            }
            deinit { log.append("\(name) released on the \(Thread.isMainThread ? "main" : "other") thread") }
        }
        struct Carrying: NotificationCenter.MainActorMessage {
            typealias Subject = MessageSubject
            let witness: Witness
        }
        let releases = MessageLog()
        let context = self.context!
        let subject = s1
        onAnotherThread {
            context.enqueue(Carrying(witness: Witness("first", log: releases)), subject: subject)
            context.enqueue(Carrying(witness: Witness("second", log: releases)), subject: subject)
        }
        XCTAssertEqual(releases.entries, ["first released on the other thread"])
        scheduler.turn()
        XCTAssertEqual(releases.entries, ["first released on the other thread", "second released on the main thread"])
    }

    func testMemoryFollowsWhatIsHeldOverAMillionEnqueues() {
        for value in 0..<1_000_000 { context.enqueue(Ping(value), subject: value % 2 == 0 ? s1 : s2) }
        XCTAssertEqual(context.pendingCount, 2)
        scheduler.turn()
        XCTAssertEqual(log.entries, ["Ping 999998", "Ping 999999"])
    }

    func testTheDeinitOfAReplacedMessagesValuesMayUseTheContext() {
        final class Reentrant: @unchecked Sendable {
            // @unchecked Sendable: used on the main thread only.
            let onDeinit: () -> Void
            init(_ onDeinit: @escaping () -> Void) { self.onDeinit = onDeinit }
            deinit { onDeinit() }
        }
        struct Carrying: NotificationCenter.AsyncMessage {
            typealias Subject = MessageSubject
            let value: Reentrant
        }
        let context = context!
        var deinits = 0
        context.enqueue(
            Carrying(
                value: Reentrant {
                    deinits += 1
                    context.enqueue(Pong(value: 7))
                }))
        context.enqueue(Carrying(value: Reentrant { deinits += 1 }))  // the first one's deinit enqueues
        XCTAssertEqual(deinits, 1)
        XCTAssertEqual(context.pendingCount, 2)
        scheduler.turn()
        XCTAssertEqual(log.entries, ["Pong 7"])
        _ = context.pendingCount
    }

    // MARK: observing

    func testObserveIsOwnedByTheContextAndRemovalIsFinal() {
        let (context, scheduler, log, s1, s2) = (context!, scheduler!, log, s1, s2)
        _ = (context, scheduler, log, s1, s2)
        MainActor.assumeIsolated {
            let observing = NotificationObservingContext(center: context.center)
            var calls: [String] = []
            let token = observing.observe(Ping.self, of: s1) { message in calls.append("s1 \(message.value)") }
            observing.observe(Ping.self) { message in calls.append("any \(message.value)") }
            XCTAssertEqual(observing.observerCount, 2)
            context.enqueue(Ping(1), subject: s1)
            context.enqueue(Ping(2), subject: s2)
            scheduler.turn()
            XCTAssertEqual(calls.sorted(), ["any 1", "any 2", "s1 1"])
            token.remove()
            token.remove()
            XCTAssertFalse(token.isActive)
            XCTAssertEqual(observing.observerCount, 1)
            calls = []
            context.enqueue(Ping(3), subject: s1)
            scheduler.turn()
            XCTAssertEqual(calls, ["any 3"])
            observing.removeObservers()
            XCTAssertEqual(observing.observerCount, 0)
            context.enqueue(Ping(4), subject: s1)
            scheduler.turn()
            XCTAssertEqual(calls, ["any 3"])
        }
    }

    func testAnObservingContextReleasedRemovesItsMessageObservationsAndFreesTheirCaptures() {
        let (context, scheduler, log, s1, s2) = (context!, scheduler!, log, s1, s2)
        _ = (context, scheduler, log, s1, s2)
        MainActor.assumeIsolated {
            weak var captured: MessagePayload?
            var calls = 0
            do {
                let observing = NotificationObservingContext(center: context.center)
                let payload = MessagePayload()
                captured = payload
                observing.observe(Ping.self) { _ in
                    _ = payload
                    calls += 1
                }
                context.center.post(Ping(0))
                XCTAssertEqual(calls, 1)
            }
            XCTAssertNil(captured, "what the handler captured goes with the context")
            context.enqueue(Ping(1))
            scheduler.turn()
            XCTAssertEqual(calls, 1)
        }
    }

    func testAHandlerRemovingItselfIsNotCalledAgainInTheSamePost() {
        let (context, scheduler, log, s1, s2) = (context!, scheduler!, log, s1, s2)
        _ = (context, scheduler, log, s1, s2)
        MainActor.assumeIsolated {
            var calls = 0
            var token: NotificationObserver?
            token = context.observe(Ping.self) { _ in
                calls += 1
                token?.remove()
            }
            context.center.post(Ping(1))
            context.center.post(Ping(2))
            XCTAssertEqual(calls, 1)
        }
    }

    func testAnAsyncObserverRemovedIsNeverCalledForALaterPost() {
        let calls = MessageLog()
        let observing = NotificationObservingContext(center: context.center)
        let token = observing.observe(Tick.self) { message in calls.append("\(message.value)") }
        context.center.post(Tick(value: 1))
        token.remove()  // Foundation's task for that post may or may not have claimed the call by now
        context.center.post(Tick(value: 2))
        spinRunLoop(timeout: 0.3) { false }
        XCTAssertFalse(calls.entries.contains("2"), "a call that begins after remove() returned")
        XCTAssertLessThanOrEqual(calls.entries.count, 1)
    }
}
#endif
