// What every documentation snippet may use without declaring it: the libraries, and on Linux small
// stand-ins for the UIKit names the snippets show (on Apple platforms UIKit itself). Compiled with each
// snippet by .ci/check-snippets.
import Foundation
import NotificationCoalescing
import UpdateContext

#if canImport(XCTest)
import XCTest
#endif

#if canImport(UIKit)
import UIKit
#else
@MainActor open class UIViewController {
    public init() {}
    open func viewWillAppear(_ animated: Bool) {}
}

@MainActor open class UIView {
    public init() {}
    public static func animate(withDuration duration: TimeInterval, animations: @escaping () -> Void) { animations() }
}

public final class UIColor: Sendable {
    public static let black = UIColor()
    public static let blue = UIColor()
    public static let systemBlue = UIColor()
}

@MainActor public final class UILabel {
    public var text: String?
    public var textColor: UIColor?
    public init() {}
}

@MainActor public final class UIActivityIndicatorView {
    public var isHidden = false
    public init() {}
}

#endif

/// Views the controller snippets update.
extension UIViewController {
    var nameLabel: UILabel { Shown.label }
    var titleLabel: UILabel { Shown.label }
    var bodyLabel: UILabel { Shown.label }
}

@MainActor enum Shown {
    static let label = UILabel()
    static let spinner = UIActivityIndicatorView()
}

/// Free functions and names the snippets call.
func reload() {}
func show(_ value: Int) {}

extension Notification.Name {
    static let modelChanged = Notification.Name("snippets.modelChanged")
    static let themeDidChange = Notification.Name("snippets.themeDidChange")
}
