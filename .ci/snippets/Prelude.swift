// Compiled with each documentation snippet by .ci/check-snippets: on Linux, small stand-ins for the UIKit
// types the snippets show (on Apple platforms a snippet that uses UIKit imports it, and is type-checked
// against the SDK). Nothing else: every other name a snippet uses, it declares or imports itself.
import Foundation

#if !canImport(UIKit)
@MainActor open class UIViewController {
    public init() {}
    open func viewDidLoad() {}
    open func viewWillAppear(_ animated: Bool) {}
    public let view = UIView()
}

@MainActor open class UIView {
    public init() {}
    public var backgroundColor: UIColor?
    public func addSubview(_ view: AnyObject) {}
    public static func animate(withDuration duration: TimeInterval, animations: @escaping () -> Void) { animations() }
}

public final class UIColor: Sendable {
    public static let black = UIColor()
    public static let blue = UIColor()
    public static let systemBlue = UIColor()
    public static let systemGreen = UIColor()
    public static let systemGray = UIColor()
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
