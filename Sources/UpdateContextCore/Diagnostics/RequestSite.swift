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
        /// Another setter of the library's, or the library requesting for the user, described: the
        /// `StateUpdatingContext.state` setter, a `@ViewInvalidating(.update)` property, a publisher's value, a
        /// change to an `@Observable` value that a tracked updater read, or a tracked updater that changed, while
        /// it ran, a value it had read (a write-back: the context requesting itself, as a `@NeedsUpdate`
        /// property set in `updateView` does).
        case named(String)
        /// The library's own follow-up (a tracked updater's extra delivery after a change made on another
        /// thread): never counted as the context requesting itself.
        case followUp
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
        case .code(let file, let line): UpdateDiagnostics.Report.CallSite(file: file, line: line)
        case .property(let owner, let path, let wrapper):
            .named(Self.propertyName(owner: owner, path: path, wrapper: "\(wrapper)"))
        case .named(let what): .named(what)
        case .followUp: .named("the follow-up of a tracked change heard on another thread")
        case .recorded(let site): site
        }
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
