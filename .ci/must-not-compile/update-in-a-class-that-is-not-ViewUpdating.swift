// expect: conform to 'ViewUpdating'
// `.update` asks the enclosing object's context: a class without one is refused at compile time.
import UpdateContext
import UpdateContextCompatibility

final class Model {
    @ViewInvalidating(.update) var name = ""
}
