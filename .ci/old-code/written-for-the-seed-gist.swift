// Client code written for the seed gist's ViewUpdatingContext compiles unchanged (only its import lines
// added), with one deprecation warning and fix-it for the gist's `animated`, the one alias 0.2.0 keeps.
// The aliases of names that existed only before 0.1.0 went in 0.2.0 (CHANGELOG).
// expect-warning: 'animated' is deprecated: renamed to 'animatesByDefault'
import Foundation
import UpdateContext

final class ViewController {
    var title = ""

    private lazy var updater: ViewUpdatingContext = {
        let updater = ViewUpdatingContext(animated: false)
        updater.onUpdate { [weak self] animated in
            guard let self else { return }
            print(title, animated)
        }
        return updater
    }()

    func viewWillAppear() {
        updater.update()
    }

    func titleChanged(_ title: String) {
        self.title = title
        updater.setNeedsUpdate()
    }

    func expand() {
        updater.animated = true
        updater.setNeedsUpdate(animated: true)
    }

    deinit {
        updater.removeUpdaters()
    }
}

final class Model {
    private let viewUpdater: ViewUpdatingContext
    var count = 0 {
        didSet { viewUpdater.setNeedsUpdate() }
    }

    init(viewUpdater: ViewUpdatingContext) {
        self.viewUpdater = viewUpdater
    }
}
