import Foundation

/// How the package answers a mistake it can recover from (an extra `resume()`, `update()` called off the
/// main thread): debug builds stop at the caller's line, as `assertionFailure` does; release builds — a
/// shipping app — report it through ``UpdateDiagnostics`` (a `.misuse` report: standard error on Linux,
/// the unified log on Apple platforms, or the app's own handler) and carry on with the documented recovery.
///
/// Mistakes that cannot be recovered from (a scheduler that is not the main thread's) stop the program in
/// every build with ``unrecoverable(_:file:line:)``, naming the API and the caller's line where the API can
/// take it.
package enum Misuse {
    /// Stops the program: a mistake nothing sensible can follow. `fatalError`, not `precondition`: the
    /// message and the caller's `#fileID:#line` survive `-O` (a release build's precondition prints only
    /// "precondition failure").
    package static func unrecoverable(_ message: @autoclosure () -> String, file: StaticString, line: UInt) -> Never {
        fatalError(message(), file: file, line: line)
    }

    /// Whether the package was built without optimization, with assertions on: a debug build (what debug-only
    /// reports and the stop at a recoverable misuse follow).
    @inline(__always)
    package static var isDebugBuild: Bool {
        var debug = false
        assert(
            {
                debug = true
                return true
            }())
        return debug
    }

    /// Reports a recoverable mistake of the context or queue labelled `label`; the caller then recovers.
    /// Debug builds stop here, with the message naming the caller's line, unless
    /// ``UpdateDiagnostics/stopsAtMisuseInDebugBuilds`` is off. Never call it under a lock.
    package static func recoverable(_ message: String, label: String = "", file: StaticString, line: UInt) {
        if UpdateDiagnostics.stopsAtMisuseInDebugBuilds { assertionFailure(message, file: file, line: line) }
        // Release builds (assertionFailure does nothing there), and tests: say so; the caller recovers.
        UpdateDiagnostics.emit(
            .misuse, label: label, message: message + " (recovered)",
            callSite: UpdateDiagnostics.Report.CallSite(file: file, line: line))
    }
}
