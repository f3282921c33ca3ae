// expect: conform to 'ViewUpdating'
// Outside views, invalidations act on a ViewUpdating object: a plain class is refused.
import UpdateContext
import UpdateContextCompatibility

struct Reload: ViewUpdatingInvalidation {
    func invalidate(object: any ViewUpdating) {}
}

final class Model {
    @ViewInvalidating(Reload()) var rows: [String] = []
}
