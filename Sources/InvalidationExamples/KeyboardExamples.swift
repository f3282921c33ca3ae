// The README's bottom bar that follows the keyboard, as written there, so that `apple-typecheck matrix .`
// compiles it against iPhoneOS 26.2 and leaves it out cleanly against 18.6 and MacOSX 15.5 (the guard an
// app that also builds with Xcode 16's SDKs writes); and its form before iOS 26, from the notification's
// `userInfo`, compiled against every iOS SDK. Keep both in step with the README's snippets.
#if canImport(UIKit) && os(iOS)
import UIKit
import UpdateContext

#if canImport(UIKit, _version: 9000)
@available(iOS 26, *)  // UIKit 26's keyboard messages; before iOS 26, UpdateTransaction.keyboard(userInfo:)
final class ChatViewController: UIViewController, ViewUpdating {
    let updateContext = ViewUpdatingContext()
    private let bottomBar = UIView()
    private var keyboardHeight: CGFloat = 0
    private var keyboard: UpdateSubscription?

    override func viewDidLoad() {
        super.viewDidLoad()
        view.addSubview(bottomBar)
        keyboard = updateContext.requestUpdates(on: .keyboardWillChangeFrame) { [weak self] message in
            guard let self else { return nil }
            let frame = view.convert(message.endFrame, from: message.screen.coordinateSpace)
            keyboardHeight = max(0, view.bounds.maxY - frame.minY)
            return UpdateTransaction(animation: .keyboard(message))  // its duration and curve
        }
        startUpdatingView()
    }

    func updateView(animated: Bool) {
        let bounds = view.bounds
        let height = keyboardHeight
        updateContext.animateChanges {
            self.bottomBar.frame = CGRect(x: 0, y: bounds.maxY - height - 49, width: bounds.width, height: 49)
        }
    }
}
#endif

/// Before iOS 26: the keyboard notification's `userInfo` carries the same duration and curve (the README's
/// second snippet, as written there).
final class LegacyChatViewController: UIViewController, ViewUpdating {
    let updateContext = ViewUpdatingContext()
    private let bottomBar = UIView()
    private var keyboardHeight: CGFloat = 0
    private let observers = NotificationObservingContext()  // owns its registrations

    override func viewDidLoad() {
        super.viewDidLoad()
        view.addSubview(bottomBar)
        observers.observe(UIResponder.keyboardWillChangeFrameNotification) { [weak self] _, notification in
            MainActor.assumeIsolated {  // UIKit posts keyboard notifications on the main thread
                guard let self else { return }
                if let end = notification.userInfo?[UIResponder.keyboardFrameEndUserInfoKey] as? CGRect {
                    self.keyboardHeight = max(0, self.view.bounds.maxY - self.view.convert(end, from: nil).minY)
                }
                self.updateContext.setNeedsUpdate(transaction: .keyboard(userInfo: notification.userInfo))
            }
        }
        startUpdatingView()
    }

    func updateView(animated: Bool) {
        let bounds = view.bounds
        let height = keyboardHeight
        updateContext.animateChanges {
            self.bottomBar.frame = CGRect(x: 0, y: bounds.maxY - height - 49, width: bounds.width, height: 49)
        }
    }

    /// UIKit's own curve type, for an animation that a view builds itself.
    static let slide = UpdateAnimation.keyboard(duration: 0.25, curve: UIView.AnimationCurve.easeInOut)
}
#endif
