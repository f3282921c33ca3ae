import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))

final class Mailbox: Sendable {}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
struct MailArrived: NotificationCenter.MainActorMessage {
    typealias Subject = Mailbox
    var count: Int
}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
struct MailSynced: NotificationCenter.AsyncMessage {
    typealias Subject = Mailbox
    var count: Int
}

/// What an updater saw: the value it read, the flag, and the animation of the delivery's transaction.
private final class MailScreen: @unchecked Sendable {
    // @unchecked Sendable: written by updaters on the main thread; read by the test there.
    var unread = 0
    var shown: [String] = []

    func attach(to context: ViewUpdatingContext) {
        context.onUpdateWithTransaction { [self] transaction in
            let animation = transaction.animation.map { _ in "+anim" } ?? ""
            shown.append("\(unread)\(transaction.isAnimated ? "a" : "n")\(animation)")
        }
    }
}

/// `ViewUpdatingContext.requestUpdates(on:)` and `refreshes(on:)`: Foundation's typed messages requesting
/// updates, on a manual scheduler turned on the main thread.
@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
final class TypedMessageUpdateTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: ViewUpdatingContext!
    private var center: NotificationCenter!
    private var screen: MailScreen!
    private let mailbox = Mailbox()

    override func setUp() {
        scheduler = ManualScheduler()
        context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        center = NotificationCenter()
        screen = MailScreen()
        screen.attach(to: context)
    }

    private func post(_ count: Int, subject: Mailbox? = nil) {
        let center = center!
        MainActor.assumeIsolated {
            if let subject {
                center.post(MailArrived(count: count), subject: subject)
            } else {
                center.post(MailArrived(count: count))
            }
        }
    }

    func testManyMessagesInACycleMakeOneDeliveryShowingTheLastState() {
        let subscription = context.requestUpdates(on: MailArrived.self, of: mailbox, center: center)
        for count in 1...10 {
            screen.unread = count
            post(count, subject: mailbox)
        }
        XCTAssertTrue(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(screen.shown, ["10n"])
        scheduler.turn()
        XCTAssertEqual(screen.shown, ["10n"], "one delivery per cycle, not per message")
        post(11, subject: mailbox)
        scheduler.turn()
        XCTAssertEqual(screen.shown.count, 2)
        withExtendedLifetime(subscription) {}
    }

    func testTheSubjectFiltersByIdentityAndNilObservesEverySubject() {
        let only = context.requestUpdates(on: MailArrived.self, of: mailbox, center: center)
        post(1, subject: Mailbox())
        post(2)
        XCTAssertFalse(context.isUpdatePending, "another subject, and no subject, are not this mailbox")
        only.cancel()
        let any = context.requestUpdates(on: MailArrived.self, center: center)
        post(3, subject: Mailbox())
        XCTAssertTrue(context.isUpdatePending)
        scheduler.turn()
        withExtendedLifetime(any) {}
    }

    func testAnimatedRequestsAnimate() {
        let subscription = context.requestUpdates(on: MailArrived.self, center: center, animated: true)
        screen.unread = 4
        post(4)
        scheduler.turn()
        XCTAssertEqual(screen.shown, ["4a+anim"], "animated: true carries the default animation")
        withExtendedLifetime(subscription) {}
    }

    func testAMessagePostedInsideAnAnimationScopeCarriesItsTransactionAndCompletionOnce() {
        let subscription = context.requestUpdates(on: MailArrived.self, center: center)
        var completions: [String] = []
        var transaction = UpdateTransaction(animation: .easeOut(duration: 0.2))
        let calls = SendableLog()
        transaction.addCompletion { calls.append("\($0)") }
        withUpdateTransaction(transaction) {
            screen.unread = 1
            post(1)
            post(2)
        }
        XCTAssertEqual(calls.entries, [], "not before the delivery")
        scheduler.turn()
        XCTAssertEqual(screen.shown, ["1a+anim"])
        completions = calls.entries
        XCTAssertEqual(completions.count, 1, "told once: \(completions)")
        XCTAssertTrue(completions.first?.hasPrefix("shown") ?? false, "\(completions)")
        withExtendedLifetime(subscription) {}
    }

    func testCancellingOrReleasingTheSubscriptionStopsItsRequests() {
        var subscription: UpdateSubscription? = context.requestUpdates(on: MailArrived.self, center: center)
        XCTAssertEqual(context.runningSubscriptions, 1)
        subscription?.cancel()
        XCTAssertTrue(subscription!.isCancelled)
        post(1)
        XCTAssertFalse(context.isUpdatePending)
        XCTAssertEqual(context.runningSubscriptions, 0)
        subscription = context.requestUpdates(on: MailArrived.self, center: center)
        subscription = nil
        post(2)
        XCTAssertFalse(context.isUpdatePending, "a subscription nobody keeps stops at once")
        XCTAssertEqual(context.runningSubscriptions, 0)
    }

    func testAReleasedContextEndsItsSubscriptionsAndKeepsNothingAlive() {
        let subscription = context.requestUpdates(on: MailArrived.self, center: center)
        let refresh = context.refreshes(on: MailArrived.self, center: center)
        weak let released = context
        context = nil
        XCTAssertNil(released)
        XCTAssertTrue(subscription.isCancelled)
        XCTAssertTrue(refresh.isCancelled)
        post(1)  // nothing observes: the observations were removed
        scheduler.turn()
        XCTAssertEqual(screen.shown, [String]())
    }

    func testAsyncMessagesFromAnotherThreadRequestOneDeliveryPerCycle() {
        let subscription = context.requestUpdates(on: MailSynced.self, of: mailbox, center: center)
        let counted = SendableLog()
        // Foundation calls async observers on tasks of their own: wait until each of this context's
        // observer calls has run (a second observer of the same posts is no proof; this one counts them).
        let probe = center.addObserver(of: mailbox, for: MailSynced.self) { message in
            counted.append("\(message.count)")
        }
        let center = SendableBox(center!)
        let mailbox = mailbox
        screen.unread = 5
        let done = DispatchSemaphore(value: 0)
        onAnotherThread {
            for count in 1...5 { center.value.post(MailSynced(count: count), subject: mailbox) }
            done.signal()
        }
        done.wait()
        spinUntil { counted.entries.count == 5 && self.context.isUpdatePending }
        // The probe's tasks and ours are not ordered: let the rest of ours run too (a second: a loaded machine or a
        // sanitizer may hold a task that long; one that ran after the turn would be a second cycle's request).
        spinUntil(timeout: 1) { false }
        scheduler.turn()
        XCTAssertEqual(screen.shown, ["5n"])
        scheduler.turn()
        XCTAssertEqual(screen.shown, ["5n"])
        center.value.removeObserver(probe)
        withExtendedLifetime(subscription) {}
    }

    func testACancelledAsyncSubscriptionRequestsNothingEvenFromATaskFoundationAlreadyStarted() {
        let subscription = context.requestUpdates(on: MailSynced.self, center: center)
        center.post(MailSynced(count: 1))  // Foundation starts a task for our observer
        subscription.cancel()  // before or after that task claims: our observer checks first
        spinUntil(timeout: 0.3) { false }
        // A task that ran before the cancel may have requested; none after it.
        _ = context.isUpdatePending
        scheduler.turn()
        let before = screen.shown.count
        center.post(MailSynced(count: 2))
        spinUntil(timeout: 0.3) { false }
        XCTAssertFalse(context.isUpdatePending)
        scheduler.turn()
        XCTAssertEqual(screen.shown.count, before)
    }

    func testRefreshOnALifecycleMessageUpdatesSynchronouslyInsideThePost() {
        context.refreshes(on: MailArrived.self, center: center)
        screen.unread = 7
        post(1)
        XCTAssertEqual(screen.shown, ["7n"], "a refresh is a synchronous update inside the post")
        post(2)
        XCTAssertEqual(screen.shown, ["7n", "7n"])
        XCTAssertEqual(context.runningSubscriptions, 1, "it lasts as long as the context, kept or not")
    }

    /// A context that refreshes on a notification name and on the message of that name refreshes once per
    /// event (on Apple platforms `refreshes(on:)` sees the message's name covered and observes nothing more;
    /// Linux's Foundation keeps a message's name internal, so this checks the parts: the coverage, and the
    /// subscription that stands for it).
    func testARefreshAlreadyCoveredByTheRefreshEventsAddsNothing() {
        let name = Notification.Name("TypedMessageUpdateTests.foreground")
        let covered = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [name], center: center)
        XCTAssertTrue(RefreshHub.covers(covered.storage, name: name, center: center))
        XCTAssertFalse(RefreshHub.covers(covered.storage, name: name, center: NotificationCenter()))
        XCTAssertFalse(RefreshHub.covers(covered.storage, name: Notification.Name("other"), center: center))
        XCTAssertFalse(RefreshHub.covers(context.storage, name: name, center: center))
        var refreshes = 0
        covered.onUpdate { _ in refreshes += 1 }
        let subscription = covered.coveredRefresh(storage: covered.storage)
        XCTAssertEqual(covered.runningSubscriptions, 1)
        center.post(name: name, object: nil)
        XCTAssertEqual(refreshes, 1, "once, by the notification")
        subscription.cancel()
        XCTAssertTrue(subscription.isCancelled)
        XCTAssertEqual(covered.runningSubscriptions, 0)
    }

    /// The suspicion of the outside reading of 0.2.0, proved: a lifecycle message posted inside
    /// `withUpdateTransaction` refreshes with the scope's transaction, as `update()` made there does — its
    /// animation, and its completion told "shown" by that refresh. On 0.2.0 the refresh ignored the scope, and
    /// the completion was told `.dropped(.noUpdaters)` though the refresh had shown the change.
    func testARefreshPostedInsideAScopeCarriesTheScopesTransaction() {
        context.refreshes(on: MailArrived.self, center: center)
        screen.unread = 4
        let told = SharedLog()
        var transaction = UpdateTransaction(animation: .linear(duration: 0.2))
        transaction.addCompletion { told.append("\($0)") }
        withUpdateTransaction(transaction) { post(1) }
        XCTAssertEqual(screen.shown, ["4a+anim"], "refreshed inside the post, with the scope's animation")
        XCTAssertEqual(told.entries, ["shown(finished: true)"])
        XCTAssertFalse(context.isUpdatePending)
    }

    private func spinUntil(timeout: TimeInterval = 10, _ condition: () -> Bool) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !condition() && Date() < deadline {
            _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.005))
        }
    }
}

private struct SendableBox<T>: @unchecked Sendable {
    // @unchecked Sendable: the value is thread-safe (a NotificationCenter).
    let value: T
    init(_ value: T) { self.value = value }
}
#endif
