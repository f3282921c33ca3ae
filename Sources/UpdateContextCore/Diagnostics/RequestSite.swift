import CoalescingRuntime

/// Where a request comes from, as diagnostics name it: the caller's `#fileID:#line`, a `@NeedsUpdate`
/// property (its setter cannot see the caller's line, so the property names the user's code), or the
/// library acting for the user (an Observation change, a subscription's element). Made on the slow path
/// only; turned into a ``UpdateDiagnostics/Report/CallSite`` only when a report or recording needs one.
package struct RequestSite: Sendable {
    // @unchecked Sendable: the payloads are immutable — a static string, a metatype, and a key path, an
    // object the standard library never changes once made (it is not declared Sendable because its root and
    // value types may not be; only its description is read here).
    package enum Origin: @unchecked Sendable {
        /// A call in the user's code.
        case code(file: StaticString, line: UInt)
        /// A `@NeedsUpdate` (or `@RenderedState`: `wrapper`) property of `owner`, set (`path`: the key path of
        /// the wrapper's storage, `_name`, which the runtime describes by name; the wrapped property's is a
        /// computed one, described by address).
        case property(owner: Any.Type, path: AnyKeyPath, wrapper: StaticString = "@NeedsUpdate")
        /// Another setter of the library's, described (`StateUpdatingContext.state`).
        case described(StaticString)
        /// A `@ViewInvalidating(.update)` property of `owner`, set.
        case invalidation(owner: Any.Type)
        /// A value of a Combine publisher passed to `requestUpdates(from:)`.
        case publisher
        /// A change to an `@Observable` value that a tracked updater read: a request of the user's code,
        /// made for it by the library.
        case trackedChange
        /// The library's own follow-up (a tracked updater's extra delivery after a change made on another
        /// thread): never counted as the context requesting itself.
        case followUp
        /// A tracked updater (`updater` names it) changed, while it ran, an `@Observable` value it had read:
        /// the context requesting itself, as a `@NeedsUpdate` property set in `updateView` does.
        case writeBack(updater: String)
        /// A call site already taken (where a request made on another thread was made); boxed, so that the
        /// other origins, on every request's path, stay small.
        indirect case recorded(UpdateDiagnostics.Report.CallSite)
    }

    let origin: Origin

    package init(file: StaticString, line: UInt) { origin = .code(file: file, line: line) }
    package init(_ origin: Origin) { self.origin = origin }

    /// Whether a request from inside the context's own delivery counts towards an update loop.
    var countsAsSelfRequest: Bool {
        if case .followUp = origin { return false }
        return true
    }

    /// The site as reports show it, on the calling thread.
    var callSite: UpdateDiagnostics.Report.CallSite {
        switch origin {
        case .code(let file, let line):
            return UpdateDiagnostics.Report.CallSite(file: file, line: line)
        case .property(let owner, let path, let wrapper):
            return Self.named(Self.propertyName(owner: owner, path: path, wrapper: "\(wrapper)"))
        case .described(let text):
            return Self.named("\(text)")
        case .invalidation(let owner):
            return Self.named("@ViewInvalidating(.update) property of \(owner)")
        case .publisher:
            return Self.named("a value of a publisher passed to requestUpdates(from:)")
        case .trackedChange:
            return Self.named("a change to an @Observable value a tracked updater read")
        case .followUp:
            return Self.named("the follow-up of a tracked change heard on another thread")
        case .writeBack(let updater):
            return Self.named("\(updater), which changed an @Observable value it read")
        case .recorded(let site):
            return site
        }
    }

    /// A site with no line (0): `what` names it, on the calling thread.
    private static func named(_ what: String) -> UpdateDiagnostics.Report.CallSite {
        UpdateDiagnostics.Report.CallSite(file: what, line: 0, thread: UpdateDiagnostics.Report.CallSite.currentThread)
    }

    /// `@NeedsUpdate ProfileViewController.name`: the storage key path's description (`\Type._name`) without
    /// its backslash and the storage's underscore, where the runtime describes key paths by name (Swift
    /// 5.9 and later); else the type.
    static func propertyName(owner: Any.Type, path: AnyKeyPath, wrapper: String = "@NeedsUpdate") -> String {
        let text = "\(path)"
        // A generic owner is described with its arguments (`\\List<Swift.Int>._rows`): the last dot still
        // comes before the property. A description by address (`<computed 0x…>`) names nothing.
        guard text.hasPrefix("\\"), let dot = text.lastIndex(of: "."), !text.contains("<computed") else {
            return "a \(wrapper) property of \(owner)"
        }
        var name = text[text.index(after: dot)...]
        if name.hasPrefix("_") { name = name.dropFirst() }
        return "\(wrapper) " + text[text.index(after: text.startIndex)..<dot] + "." + name
    }
}
