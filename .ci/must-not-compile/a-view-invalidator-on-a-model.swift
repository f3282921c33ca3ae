// expect: conform to 'ViewUpdatingInvalidation'
// An invalidator written for views (Apple's shape) takes a view: it is refused on a model object.
import UIKit
import UpdateContext
import UpdateContextCompatibility

struct Glow: ViewInvalidation {
    func invalidate(view: UIView) {}
}

final class Model: ViewUpdating {
    let updateContext = ViewUpdatingContext()
    @ViewInvalidating(Glow()) var level = 0
}
