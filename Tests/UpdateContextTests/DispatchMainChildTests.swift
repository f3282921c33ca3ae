import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))

/// The documented `.dispatchMain` scheduler in a program whose main thread sits in `dispatchMain()` — what an
/// `async` main does on Linux: the first thread has exited, and the main queue's blocks (where main-actor code
/// runs) run on other threads. Each case runs in a child process (this test binary, run again with
/// `CVU_DISPATCH_MAIN_CASE` set), which calls `dispatchMain()` for good and exits with what it saw.
@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
final class DispatchMainChildTests: XCTestCase {
    /// The child's entry point: runs the case named by `CVU_DISPATCH_MAIN_CASE` (it never returns).
    func testDispatchMainChild() throws {
        guard let name = ProcessInfo.processInfo.environment["CVU_DISPATCH_MAIN_CASE"] else {
            throw XCTSkip("the child process's entry point for DispatchMainChildTests")
        }
        // No case may hang the child: it says so and stops.
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
            print("CVU_DISPATCH_MAIN_CASE \(name): timed out")
            exit(3)
        }
        switch name {
        case "coalesced message": Self.coalescedMessage()
        case "scope on another main-queue thread": Self.scopeOnAnotherMainQueueThread()
        case "random": Self.random(seed: UInt64(ProcessInfo.processInfo.environment["CVU_SEED"] ?? "") ?? 1)
        default: print("no case \(name)")
        }
        dispatchMain()
    }

    private func runChild(_ name: String, seed: UInt64 = 0) throws -> (status: Int32, output: String) {
        #if os(Linux)
        guard
            let result = try runChildProcess(
                test: "UpdateContextTests.DispatchMainChildTests/testDispatchMainChild",
                environment: ["CVU_DISPATCH_MAIN_CASE": name, "CVU_SEED": "\(seed)"])
        else {
            XCTFail("\(name): the child neither stopped nor returned in 120 s")
            return (-1, "")
        }
        return result
        #else
        throw XCTSkip("child processes of the test bundle are run on Linux")
        #endif
    }

    /// TypedMessages.md: a main-actor message needs a context whose scheduler is the main thread's, and
    /// `.dispatchMain` is one. Under a real `dispatchMain()` the coalesced message posts once, the latest, to a
    /// Foundation observer; on 0.2.0 the first post stopped the program ("posts the main-actor message … at a
    /// turn off the main thread"), though `startUpdatingView()` accepted the same main-queue block.
    func testACoalescedMainActorMessagePostsUnderDispatchMain() throws {
        let (status, output) = try runChild("coalesced message")
        XCTAssertEqual(status, 0, output.suffix(800).description)
        XCTAssertTrue(output.contains("posted [3]"), output.suffix(800).description)
    }

    /// Seeded random rounds under `dispatchMain()`: main-actor messages for three subjects and notifications,
    /// enqueued from main-queue blocks and other threads, coalesced per key; a `ViewUpdating`
    /// object's `updateView` follows the messages through `requestUpdates(on:)` — and after every round the
    /// posts equal the model's and the view ends showing the model's last value.
    func testRandomRoundsUnderDispatchMainFollowTheModel() throws {
        for seed in randomSeeds(fixed: [1, 2, 3]) {
            let (status, output) = try runChild("random", seed: seed)
            XCTAssertEqual(status, 0, "seed \(seed): \(output.suffix(1_200))")
            XCTAssertTrue(output.contains("rounds agreed"), "seed \(seed): \(output.suffix(1_200))")
        }
    }

    // MARK: The cases (in the child)

    /// `withUpdateTransaction`'s flush reaches "the contexts whose scheduler turns on the calling thread", and
    /// `.dispatchMain` turns in every block the main queue runs: a scope in a main-queue block that runs on
    /// another thread than the one that made and asked the context (a `DispatchQueue.main.sync` waiter's)
    /// flushes the pending plain change first, unanimated.
    func testAScopeOnAnotherMainQueueThreadFlushesADispatchMainContext() throws {
        let (status, output) = try runChild("scope on another main-queue thread")
        XCTAssertEqual(status, 0, output.suffix(800).description)
        XCTAssertTrue(output.contains("delivered [false, true]"), output.suffix(800).description)
    }

    private static func scopeOnAnotherMainQueueThread() {
        let flags = SharedLog()
        nonisolated(unsafe) var context: ViewUpdatingContext?
        let waiterQueued = DispatchSemaphore(value: 0)
        DispatchQueue.main.async {
            context = ViewUpdatingContext(label: "main queue", scheduler: .dispatchMain, refreshEvents: [])
            context?.onUpdate { flags.append($0 ? "true" : "false") }
            Thread {
                waiterQueued.signal()
                // Runs on this thread, as a main-queue block, ahead of the scheduler's turn.
                DispatchQueue.main.sync { withUpdateAnimation { context?.setNeedsUpdate() } }
            }.start()
            waiterQueued.wait()
            Thread.sleep(forTimeInterval: 0.2)  // the waiter is queued on the main queue now
            context?.setNeedsUpdate()  // the plain change, listed from this block
        }
        // Printed once two deliveries came (the flush's and the scope's), or after a bound: a loaded machine or a
        // sanitizer may take long, and a defect shows as one delivery.
        Thread {
            let deadline = Date(timeIntervalSinceNow: 20)
            while flags.entries.count < 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            Thread.sleep(forTimeInterval: 0.2)  // a third, wrong, delivery would show too
            print("delivered [\(flags.entries.joined(separator: ", "))]")
            withExtendedLifetime(context) {}  // kept until here: released, it would drop what is pending
            exit(0)
        }.start()
    }

    private static func coalescedMessage() {
        let queue = NotificationCoalescingContext(scheduler: .dispatchMain)
        let posts = NotificationCoalescing.Locked<[Int]>([])
        let token = queue.center.addObserver(of: nil as Mailbox?, for: MailArrived.self) { message in
            posts.withLock { $0.append(message.count) }
        }
        DispatchQueue.main.async {
            for count in 1...3 { queue.enqueue(MailArrived(count: count)) }
            // After the turn, which the first enqueue asked for (a main-queue block before this one).
            DispatchQueue.main.async {
                let seen = posts.withLock { $0 }
                print("posted \(seen)")
                withExtendedLifetime((queue, token)) {}
                exit(seen == [3] ? 0 : 1)
            }
        }
    }

    /// What the random case's view showed (its `updateView` runs in main-queue blocks).
    private final class Screen: ViewUpdating, @unchecked Sendable {
        // @unchecked Sendable: read and written in main-queue blocks only, one at a time.
        let updateContext = ViewUpdatingContext(scheduler: .dispatchMain, refreshEvents: [])
        var latest = 0
        var shown: [Int] = []
        var subscription: UpdateSubscription?
        func updateView(animated: Bool) { shown.append(latest) }
    }

    private static func random(seed: UInt64) {
        let rounds = RandomRounds(seed: seed)
        DispatchQueue.main.async { rounds.start() }
    }

    /// The random case's rounds, chained through main-queue blocks.
    private final class RandomRounds: @unchecked Sendable {
        // @unchecked Sendable: used in main-queue blocks only, one at a time (the other threads it starts
        // only enqueue, and are waited for).
        private var random: SeededGenerator
        private let seed: UInt64
        private let queue = NotificationCoalescingContext(scheduler: .dispatchMain)
        private let subjects = [Mailbox(), Mailbox(), nil]
        private let posts = SharedLog()
        private let screen = Screen()
        private var tokens: [NotificationCenter.ObservationToken] = []
        private let noteName = Notification.Name("DispatchMainChildTests.note")
        private let rounds = 40
        private var round = 0
        /// The value of the model's last posted message: what the screen's observer of no subject heard last.
        private var lastCount = 0
        private var nextValue = 1

        init(seed: UInt64) {
            self.seed = seed
            random = SeededGenerator(seed: seed)
        }

        func start() {
            // Observed through Foundation (the coalesced posts, per subject) and by the screen's model value,
            // which every post sets (an observer of no subject hears them all).
            for (index, subject) in subjects.enumerated() where subject != nil {
                let posts = self.posts
                tokens.append(
                    queue.center.addObserver(of: subject, for: MailArrived.self) { message in
                        posts.append("m\(index)=\(message.count)")
                    })
            }
            let screen = self.screen
            tokens.append(
                queue.center.addObserver(of: nil as Mailbox?, for: MailArrived.self) { message in
                    screen.latest = message.count
                })
            let posts = self.posts
            queue.observe(noteName) { _, note in posts.append("n=\(note.userInfo?["value"] as? Int ?? -1)") }
            MainActor.assumeIsolated {
                screen.subscription = screen.updateContext.requestUpdates(on: MailArrived.self, center: queue.center)
                screen.startUpdatingView()
            }
            startRound()
        }

        /// One round: enqueues from here (a main-queue block) and from other threads, then a check after the
        /// turn they asked for.
        private func startRound() {
            guard round < rounds else { return finish() }
            round += 1
            // The model: keys in the order of their first enqueue (a message keeps its place, a notification
            // moves to the end), each with its latest value; a message for no subject reaches only the screen.
            var order: [String] = []
            var latest: [String: Int] = [:]
            let queue = self.queue
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let value = nextValue
                nextValue += 1
                let elsewhere = Int.random(in: 0..<3, using: &random) == 0
                if Bool.random(using: &random) {
                    let index = Int.random(in: 0..<subjects.count, using: &random)
                    if latest["m\(index)"] == nil { order.append("m\(index)") }
                    latest["m\(index)"] = value
                    let subject = subjects[index]
                    let enqueue: @Sendable () -> Void = { queue.enqueue(MailArrived(count: value), subject: subject) }
                    if elsewhere { onAnotherThread(enqueue) } else { enqueue() }
                } else {
                    order.removeAll { $0 == "n" }
                    order.append("n")
                    latest["n"] = value
                    let name = noteName
                    let enqueue: @Sendable () -> Void = {
                        queue.enqueue(
                            Notification(name: name, object: nil, userInfo: ["value": value]), coalesceMask: .onName)
                    }
                    if elsewhere { onAnotherThread(enqueue) } else { enqueue() }
                }
            }
            let expected = order.filter { $0 != "m2" }.map { "\($0)=\(latest[$0]!)" }
            // Messages post in their keys' order, not their enqueues': the last one posted is the latest value of
            // the message key first enqueued last, which need not be the value enqueued last.
            if let key = order.last(where: { $0.hasPrefix("m") }) { lastCount = latest[key]! }
            posts.removeAll()
            DispatchQueue.main.async { [self] in
                let seen = posts.entries
                if seen != expected {
                    print("seed \(seed) round \(round): posted \(seen), model \(expected)")
                    exit(1)
                }
                if screen.latest != lastCount {
                    print(
                        "seed \(seed) round \(round): the screen's model heard \(screen.latest), the model \(lastCount)"
                    )
                    exit(1)
                }
                startRound()
            }
        }

        private func finish() {
            // The screen's deliveries come in blocks after the posts that requested them: let them run.
            DispatchQueue.main.async { [self] in
                DispatchQueue.main.async { [self] in
                    DispatchQueue.main.async { [self] in
                        let shown = screen.shown
                        if shown.last != lastCount {
                            print("seed \(seed): the view showed \(shown.suffix(5)), the model's last \(lastCount)")
                            exit(1)
                        }
                        print("\(rounds) rounds agreed; the view showed \(shown.count) deliveries, last \(lastCount)")
                        exit(0)
                    }
                }
            }
        }
    }
}
#endif
