// expect: has no member 'intrinsicContentSize'
// A mixed list compiles only where every member can work: `.update` could, `.intrinsicContentSize` cannot.
import UIKit
import UpdateContext
import UpdateContextCompatibility

final class Model: ViewUpdating {
    let updateContext = ViewUpdatingContext()
    @ViewInvalidating(.update, .intrinsicContentSize) var text = ""
}
