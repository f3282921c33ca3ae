// expect: has no member 'layout'
// A view controller is not a view: `.layout` is refused (Apple's wrapper refuses it too).
import UIKit
import UpdateContext
import UpdateContextCompatibility

final class ProfileViewController: UIViewController, ViewUpdating {
    let updateContext = ViewUpdatingContext()
    @ViewInvalidating(.layout) var name = ""
}
