import Foundation
import NotificationCoalescing

#if canImport(UIKit) && !os(watchOS)
import UIKit
#endif

// The keyboard's animation, from what UIKit hands with it: a duration and a curve in every keyboard
// notification's `userInfo` and every keyboard message (iOS 26). The mapping from plain values lives here,
// on every platform (and is tested on Linux); the UIKit forms only read UIKit's types into it.
extension UpdateAnimation {
    /// The `userInfo` key of a keyboard notification's animation duration (UIKit's
    /// `UIResponder.keyboardAnimationDurationUserInfoKey`).
    public static let keyboardDurationKey = "UIKeyboardAnimationDurationUserInfoKey"
    /// The `userInfo` key of a keyboard notification's animation curve, a `UIView.AnimationCurve` raw value
    /// (UIKit's `UIResponder.keyboardAnimationCurveUserInfoKey`).
    public static let keyboardCurveKey = "UIKeyboardAnimationCurveUserInfoKey"

    /// The keyboard's animation from a keyboard notification's `userInfo` (`keyboardWillShowNotification`,
    /// `keyboardWillHideNotification`, `keyboardWillChangeFrameNotification`): its duration and curve, or `nil`
    /// when either is missing or out of range (an animation of zero seconds is a keyboard that does not animate:
    /// `nil` too, so that the change is not animated).
    ///
    /// ```swift
    /// import Foundation
    /// import UpdateContext
    ///
    /// let userInfo: [AnyHashable: Any] = [
    ///     UpdateAnimation.keyboardDurationKey: 0.25, UpdateAnimation.keyboardCurveKey: 7,
    /// ]
    /// let slide = UpdateAnimation.keyboard(userInfo: userInfo)   // keyboard(0.25, curve: 7)
    /// ```
    ///
    /// Any thread.
    public static func keyboard(userInfo: [AnyHashable: Any]?) -> UpdateAnimation? {
        guard let userInfo else { return nil }
        let duration = (userInfo[keyboardDurationKey] as? NSNumber)?.doubleValue
        let curve = (userInfo[keyboardCurveKey] as? NSNumber)?.intValue
        guard let duration, let curve else { return nil }
        return keyboard(validDuration: duration, curve: curve)
    }

    /// ``keyboard(duration:curve:file:line:)`` for values that UIKit handed: `nil` for a duration that is not
    /// finite and positive, or a curve outside 0...15, instead of stopping.
    static func keyboard(validDuration duration: Double, curve: Int) -> UpdateAnimation? {
        guard duration.isFinite, duration > 0, (0...15).contains(curve) else { return nil }
        return keyboard(duration: duration, curve: curve)
    }
}

extension UpdateTransaction {
    /// A transaction that animates with the keyboard (``UpdateAnimation/keyboard(userInfo:)``), for a request
    /// that a keyboard notification makes; without animation when the notification carries none.
    ///
    /// Any thread.
    public static func keyboard(userInfo: [AnyHashable: Any]?) -> UpdateTransaction {
        UpdateTransaction(animation: UpdateAnimation.keyboard(userInfo: userInfo))
    }
}

#if canImport(UIKit) && !os(watchOS)
extension UpdateAnimation {
    /// The keyboard's animation with UIKit's own curve type: ``keyboard(duration:curve:file:line:)`` with
    /// `curve.rawValue`.
    public static func keyboard(
        duration: TimeInterval, curve: UIView.AnimationCurve, file: StaticString = #fileID, line: UInt = #line
    ) -> UpdateAnimation {
        keyboard(duration: duration, curve: curve.rawValue, file: file, line: line)
    }
}

#if canImport(UIKit, _version: 9000) && os(iOS)
@available(iOS 26, *)
extension UpdateAnimation {
    /// The keyboard's animation, as a keyboard message carries it (`nil` when it does not animate).
    public static func keyboard(_ message: UIResponder.KeyboardWillShowMessage) -> UpdateAnimation? {
        keyboard(validDuration: message.animationDuration, curve: message.animationCurve.rawValue)
    }

    /// The keyboard's animation, as a keyboard message carries it (`nil` when it does not animate).
    public static func keyboard(_ message: UIResponder.KeyboardWillHideMessage) -> UpdateAnimation? {
        keyboard(validDuration: message.animationDuration, curve: message.animationCurve.rawValue)
    }

    /// The keyboard's animation, as a keyboard message carries it (`nil` when it does not animate).
    public static func keyboard(_ message: UIResponder.KeyboardWillChangeFrameMessage) -> UpdateAnimation? {
        keyboard(validDuration: message.animationDuration, curve: message.animationCurve.rawValue)
    }
}
#endif
#endif
