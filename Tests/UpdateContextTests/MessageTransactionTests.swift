import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import XCTest

@testable import CoalescingRuntime
@testable import UpdateContext
@testable import UpdateContextCore

/// The keyboard's animation, read from plain values as UIKit hands them (its notifications' `userInfo`, its
/// messages' duration and curve): the mapping every platform shares.
final class KeyboardAnimationTests: XCTestCase {
    func testTheKeyboardsCurveAndDurationMakeAKeyboardAnimation() {
        let slide = UpdateAnimation.keyboard(duration: 0.25, curve: 7)
        XCTAssertEqual(slide.curve, .keyboard(curve: 7))
        XCTAssertEqual(slide.duration, 0.25)
        XCTAssertEqual(slide.delay, 0)
        XCTAssertEqual("\(slide)", "keyboard(0.25, curve: 7)")
        XCTAssertNotEqual(slide, .keyboard(duration: 0.25, curve: 0), "the curve is part of the animation")
    }

    func testANotificationsUserInfoGivesTheKeyboardsAnimationOrNone() {
        let userInfo: [AnyHashable: Any] = [
            UpdateAnimation.keyboardDurationKey: NSNumber(value: 0.3),
            UpdateAnimation.keyboardCurveKey: NSNumber(value: 7),
            "UIKeyboardFrameEndUserInfoKey": "ignored",
        ]
        XCTAssertEqual(UpdateAnimation.keyboard(userInfo: userInfo), .keyboard(duration: 0.3, curve: 7))
        XCTAssertEqual(UpdateTransaction.keyboard(userInfo: userInfo).animation, .keyboard(duration: 0.3, curve: 7))
        // Plain Swift values, as a test (or another platform's notification) would put them.
        XCTAssertEqual(
            UpdateAnimation.keyboard(userInfo: [
                UpdateAnimation.keyboardDurationKey: 0.25, UpdateAnimation.keyboardCurveKey: 3,
            ]), .keyboard(duration: 0.25, curve: 3))
        // A keyboard that does not animate (a hardware keyboard: zero seconds), missing or bad values: none.
        XCTAssertNil(
            UpdateAnimation.keyboard(userInfo: [
                UpdateAnimation.keyboardDurationKey: 0.0, UpdateAnimation.keyboardCurveKey: 7,
            ]))
        XCTAssertNil(UpdateAnimation.keyboard(userInfo: [UpdateAnimation.keyboardDurationKey: 0.25]))
        XCTAssertNil(
            UpdateAnimation.keyboard(userInfo: [
                UpdateAnimation.keyboardDurationKey: 0.25, UpdateAnimation.keyboardCurveKey: 99,
            ]))
        XCTAssertNil(UpdateAnimation.keyboard(userInfo: nil))
        XCTAssertNil(UpdateTransaction.keyboard(userInfo: nil).animation, "not animated")
    }

    /// A keyboard transaction requested on a context: the delivery carries the keyboard's animation, and a
    /// repeated one takes the fast path like any plain transaction.
    func testADeliveryCarriesTheKeyboardsAnimation() {
        let scheduler = ManualScheduler()
        let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        var animations: [UpdateAnimation?] = []
        context.onUpdateWithTransaction { animations.append($0.animation) }
        let keyboard = UpdateTransaction(animation: .keyboard(duration: 0.25, curve: 7))
        for _ in 0..<3 { context.setNeedsUpdate(transaction: keyboard) }
        scheduler.turn()
        XCTAssertEqual(animations, [.keyboard(duration: 0.25, curve: 7)])
    }
}

#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))

/// A keyboard-like message: a duration and a curve with each post.
@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
struct PanelWillMove: NotificationCenter.MainActorMessage {
    typealias Subject = Mailbox
    var duration: Double
    var curve: Int
    var height: Int
}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
struct PanelSynced: NotificationCenter.AsyncMessage {
    typealias Subject = Mailbox
    var duration: Double
}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
extension NotificationCenter.MessageIdentifier
where Self == NotificationCenter.BaseMessageIdentifier<PanelWillMove> {
    static var panelWillMove: Self { .init() }
}

@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<MailArrived> {
    static var mailArrived: Self { .init() }
}

/// `requestUpdates(on:of:center:animated:transaction:)`: a message says how its update animates; and every message
/// form in Foundation's identifier spelling.
@available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
final class MessageTransactionTests: XCTestCase {
    private var scheduler: ManualScheduler!
    private var context: ViewUpdatingContext!
    private var center: NotificationCenter!
    private let panel = Mailbox()
    /// What each delivery showed: the height, and the animation of its transaction.
    private var shown: [String] = []
    private let height = NotificationCoalescing.Locked(0)

    override func setUp() {
        scheduler = ManualScheduler()
        context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
        center = NotificationCenter()
        shown = []
        context.onUpdateWithTransaction { [unowned self] transaction in
            shown.append("\(height.withLock { $0 }) \(transaction.animation.map { "\($0)" } ?? "-")")
        }
    }

    private func post(_ message: PanelWillMove) {
        let center = center!
        let subject = panel
        MainActor.assumeIsolated { center.post(message, subject: subject) }
    }

    /// A keyboard-driven update moves in step with the keyboard: the message's duration and curve are the
    /// delivery's animation (the last of the cycle's messages wins), and a message mapped to `nil` requests
    /// plainly.
    func testEachMessagesTransactionAnimatesItsUpdate() {
        let height = self.height
        let subscription = context.requestUpdates(on: PanelWillMove.self, of: panel, center: center) { message in
            height.withLock { $0 = message.height }
            return UpdateTransaction(animation: .keyboard(duration: message.duration, curve: message.curve))
        }
        post(PanelWillMove(duration: 0.25, curve: 7, height: 300))
        scheduler.turn()
        post(PanelWillMove(duration: 0.2, curve: 7, height: 280))
        post(PanelWillMove(duration: 0.4, curve: 0, height: 0))
        scheduler.turn()
        XCTAssertEqual(shown, ["300 keyboard(0.25, curve: 7)", "0 keyboard(0.4, curve: 0)"])
        withExtendedLifetime(subscription) {}
        let plain = context.requestUpdates(on: PanelWillMove.self, of: panel, center: center) { _ in nil }
        subscription.cancel()
        post(PanelWillMove(duration: 0.25, curve: 7, height: 1))
        scheduler.turn()
        XCTAssertEqual(shown.last, "0 -", "nil: a plain request, with the context's default (not animated)")
        withExtendedLifetime(plain) {}
    }

    /// Without a transaction for a message (the closure returns `nil`), the request has the subscription's
    /// flag: a message the closure maps to `nil` animates with the context's default animation when
    /// `animated` is `true`, and one it maps to a transaction animates as that says.
    func testAMessageMappedToNoTransactionRequestsWithTheFlag() {
        let subscription = context.requestUpdates(on: PanelWillMove.self, of: panel, center: center, animated: true) {
            message in message.height > 100 ? UpdateTransaction(animation: .easeIn(duration: 0.1)) : nil
        }
        height.withLock { $0 = 50 }
        post(PanelWillMove(duration: 0.25, curve: 7, height: 50))
        scheduler.turn()
        height.withLock { $0 = 200 }
        post(PanelWillMove(duration: 0.25, curve: 7, height: 200))
        scheduler.turn()
        XCTAssertEqual(shown, ["50 \(UpdateAnimation.default)", "200 \(UpdateAnimation.easeIn(duration: 0.1))"])
        withExtendedLifetime(subscription) {}
    }

    /// A message's transaction keeps its completions: told once, after the delivery that showed it; and posted
    /// inside a scope, the request joins the scope (the message's own animation wins).
    func testAMessagesTransactionCompletesOnceAndJoinsTheScopeItIsPostedIn() {
        let told = SharedLog()
        let subscription = context.requestUpdates(on: PanelWillMove.self, center: center) { message in
            var transaction = UpdateTransaction(animation: .keyboard(duration: message.duration, curve: message.curve))
            transaction.addCompletion { told.append("message \($0.wasShown)") }
            return transaction
        }
        var scope = UpdateTransaction(animation: .default)
        scope.addCompletion { told.append("scope \($0.wasShown)") }
        withUpdateTransaction(scope) { post(PanelWillMove(duration: 0.3, curve: 7, height: 5)) }
        XCTAssertEqual(told.entries, [], "both wait for the delivery")
        scheduler.turn()
        XCTAssertEqual(shown, ["0 keyboard(0.3, curve: 7)"])
        XCTAssertEqual(told.entries.sorted(), ["message true", "scope true"])
        withExtendedLifetime(subscription) {}
    }

    /// An async message is observed on Foundation's task, which no scope reaches: its transaction is the way it
    /// animates.
    func testAnAsyncMessagesTransactionAnimatesItsUpdate() {
        let subscription = context.requestUpdates(on: PanelSynced.self, center: center) { message in
            UpdateTransaction(animation: .easeOut(duration: message.duration))
        }
        center.post(PanelSynced(duration: 0.2))
        let deadline = Date(timeIntervalSinceNow: 5)
        while !context.isUpdatePending && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        scheduler.turn()
        XCTAssertEqual(shown, ["0 \(UpdateAnimation.easeOut(duration: 0.2))"])
        withExtendedLifetime(subscription) {}
    }

    /// Foundation's identifier spelling compiles wherever the message type does, and means the same.
    func testTheIdentifierSpellingMeansTheMessageType() {
        let center = center!
        let animated = context.requestUpdates(on: .mailArrived, center: center, animated: true)
        MainActor.assumeIsolated { center.post(MailArrived(count: 1)) }
        scheduler.turn()
        XCTAssertEqual(shown, ["0 \(UpdateAnimation.default)"])
        animated.cancel()
        let mapped = context.requestUpdates(on: .panelWillMove, of: panel, center: center) { message in
            UpdateTransaction(animation: .keyboard(duration: message.duration, curve: message.curve))
        }
        post(PanelWillMove(duration: 0.25, curve: 7, height: 1))
        scheduler.turn()
        XCTAssertEqual(shown.last, "0 keyboard(0.25, curve: 7)")
        mapped.cancel()
        context.refreshes(on: .mailArrived, center: center)
        let before = shown.count
        MainActor.assumeIsolated { center.post(MailArrived(count: 2)) }
        XCTAssertEqual(shown.count, before + 1, "a refresh: at once, inside the post")
    }
}
#endif
