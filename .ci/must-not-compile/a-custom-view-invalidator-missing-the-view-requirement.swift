// expect: does not conform to protocol 'ViewInvalidation'
// The requirement is Apple's `invalidate(view:)`: the old `invalidate(_ object: AnyObject)` shape no longer conforms.
import UIKit
import UpdateContext
import UpdateContextCompatibility

struct Old: ViewInvalidation {
    func invalidate(_ object: AnyObject) {}
}
