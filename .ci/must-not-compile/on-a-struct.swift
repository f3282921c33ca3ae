// expect: works only on stored properties of classes
// The wrapper needs the enclosing instance: a struct's property is refused.
import UpdateContext
import UpdateContextCompatibility

struct Settings {
    @ViewInvalidating(.update) var name = ""
}

func use() {
    var settings = Settings()
    settings.name = "x"
}
