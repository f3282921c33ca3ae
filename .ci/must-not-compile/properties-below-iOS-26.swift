// expect: is only available in iOS 26
// `.properties` is UIKit 26's pass: at the package's minimum (iOS 13) it needs an availability check.
import UIKit
import UpdateContext
import UpdateContextCompatibility

final class TitleView: UIView {
    @ViewInvalidating(.properties) var title = ""
}
