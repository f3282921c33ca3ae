// One import for an app: `import UpdateContext` brings the canonical path (UpdateContextCore, with the
// schedulers and `UpdateDiagnostics` it re-exports), the notification contexts and their typed-message forms
// (NotificationCoalescing), and the layers this module adds.
@_exported import NotificationCoalescing
@_exported import UpdateContextCore

// UIKit is imported here, in the module's first file (keep this file first in path order: a file before it,
// such as a `ContextDelivery.swift` beside it, brought the failure back): otherwise the compiler loads it through the re-exports,
// cannot read its version, and `canImport(UIKit, _version:)` (the iOS 26 checks of the pass and keyboard
// layers) answers yes on every SDK (seen with Swift 6.3 and the iOS 18.6 SDK).
#if canImport(UIKit) && !os(watchOS)
import UIKit
#endif
