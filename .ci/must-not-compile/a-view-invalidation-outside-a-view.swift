// expect: has no member 'layout'
// View invalidations do not exist outside views (and not at all without UIKit or AppKit).
import UpdateContext
import UpdateContextCompatibility

final class Model: ViewUpdating {
    let updateContext = ViewUpdatingContext()
    @ViewInvalidating(.layout) var name = ""
}
