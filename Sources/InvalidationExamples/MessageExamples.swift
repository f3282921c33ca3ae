// Every spelling of a typed message that the docs give, so that `apple-typecheck matrix .` compiles them
// against iPhoneOS 26.2 and leaves them out cleanly against 18.6 and MacOSX 15.5, behind the guard that the
// "Typed messages" article shows (an app whose minimum is below iOS 26 and that also builds with Xcode 16's
// SDKs): Foundation's identifier spelling (`.keyboardWillShow`) and the type, as `ViewUpdatingContext`'s Quick
// Help, the article and the CHANGELOG give them. (The README's `.keyboardWillChangeFrame` controller is in
// KeyboardExamples.swift.) On iOS 26's SDK `.willEnterForeground` names three messages (UIApplication's,
// UIScene's and Foundation's NSExtensionContext's) and `.didBecomeActive` two: alone, either is ambiguous, a
// compile error, so the docs name the subject (`of: UIApplication.shared`). Keep this file in step with them.
#if canImport(UIKit) && os(iOS)
import UIKit
import UpdateContext

#if compiler(>=6.2) && (!canImport(Darwin) || canImport(Foundation, _version: 3600))
final class MessageSpellingsViewController: UIViewController, ViewUpdating {
    let updateContext = ViewUpdatingContext(refreshEvents: [])
    private var subscription: UpdateSubscription?
    private var subscriptions: [UpdateSubscription] = []

    override func viewDidLoad() {
        super.viewDidLoad()
        if #available(iOS 26, *) {
            // TypedMessages.md, the guard's example (on one line there).
            subscription = updateContext.requestUpdates(on: .keyboardWillShow) {
                UpdateTransaction(animation: .keyboard($0))
            }
            // requestUpdates' identifier forms (Quick Help; the CHANGELOG: "with or without a transaction").
            subscriptions.append(updateContext.requestUpdates(on: .keyboardWillShow))
            subscriptions.append(updateContext.requestUpdates(on: .keyboardWillChangeFrame))
            subscriptions.append(updateContext.requestUpdates(on: UIResponder.KeyboardWillShowMessage.self))
            // refreshes(on:)'s identifier form names the subject (Quick Help, TypedMessages.md)…
            updateContext.refreshes(on: .willEnterForeground, of: UIApplication.shared)
            updateContext.refreshes(on: .didBecomeActive, of: UIApplication.shared)
            // …or the docs pass the type.
            updateContext.refreshes(on: UIApplication.WillEnterForegroundMessage.self)
        }
        startUpdatingView()
    }

    func updateView(animated: Bool) {}
}
#endif
#endif
