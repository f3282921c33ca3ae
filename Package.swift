// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "CoalescedViewUpdates",
    // Where Swift concurrency runs. What needs newer systems (Observation tracking: iOS 17 / macOS 14) is
    // behind @available; nothing uses the Synchronization module (iOS 18 / macOS 15).
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    products: [
        .library(name: "NotificationCoalescing", targets: ["NotificationCoalescing"]),
        // The canonical path alone (ViewUpdating, @NeedsUpdate, the context, transactions, the schedulers a
        // context needs, diagnostics): what an app can depend on and own by itself.
        .library(name: "UpdateContextCore", targets: ["UpdateContextCore"]),
        // The core with the layers: the UIKit 26 pass, typed-message and notification inputs, async sequences,
        // StateUpdatingContext, keyboard animation, and NotificationCoalescing.
        .library(name: "UpdateContext", targets: ["UpdateContext"]),
        // SwiftUI and Combine: the observable faces, the gates on a context's deliveries, the Combine trigger
        // and deliveries publisher.
        .library(name: "UpdateContextSwiftUI", targets: ["UpdateContextSwiftUI"]),
        // The shapes of earlier systems, for code moving over: @ViewInvalidating, StateRendering,
        // @RenderedState and the Updaters-shaped updatesOnly gates.
        .library(name: "UpdateContextCompatibility", targets: ["UpdateContextCompatibility"]),
    ],
    targets: [
        // Atomics and a main-thread check that exist on every supported system (no product exports it).
        .target(name: "CCoalescingSupport"),
        // What both libraries share — schedulers, diagnostics, locks, misuse, thread identity — re-exported by
        // UpdateContextCore and by NotificationCoalescing. No product of its own.
        .target(name: "CoalescingRuntime", dependencies: ["CCoalescingSupport"]),
        .target(name: "NotificationCoalescing", dependencies: ["CoalescingRuntime", "CCoalescingSupport"]),
        .target(name: "UpdateContextCore", dependencies: ["CoalescingRuntime", "CCoalescingSupport"]),
        .target(
            name: "UpdateContext",
            dependencies: ["UpdateContextCore", "NotificationCoalescing", "CoalescingRuntime", "CCoalescingSupport"]),
        .target(
            name: "UpdateContextSwiftUI",
            dependencies: ["UpdateContext", "NotificationCoalescing", "CCoalescingSupport"]),
        .target(
            name: "UpdateContextCompatibility",
            dependencies: ["UpdateContext", "UpdateContextSwiftUI", "NotificationCoalescing", "CCoalescingSupport"]),
        // Views using every built-in @ViewInvalidating invalidation, so that the Apple type-check compiles
        // them for UIKit and AppKit. No product exports it.
        .target(name: "InvalidationExamples", dependencies: ["UpdateContext", "UpdateContextCompatibility"]),
        // A SwiftUI screen using every update gate and face, and UIKit/AppKit controllers using the Combine
        // trigger, so that the Apple type-check compiles them. No product exports it.
        .target(
            name: "SwiftUIExamples",
            dependencies: ["UpdateContext", "UpdateContextSwiftUI", "UpdateContextCompatibility"]),
        // The benchmark is an executable that no product exports: it stays out of the public surface.
        .executableTarget(
            name: "coalesce-bench",
            dependencies: ["NotificationCoalescing", "UpdateContext", "CMallocStats", "CoalescingTestSupport"]),
        // malloc statistics for the benchmark's memory figures and the soak test, and the atomic counters of
        // the tests' and the benchmark's producer threads (no product exports it).
        .target(name: "CMallocStats"),
        // What the tests and the benchmark share, once: the precedence table and its timeline interpreter,
        // the reference model, counters. No product exports it.
        .target(
            name: "CoalescingTestSupport",
            dependencies: [
                "NotificationCoalescing", "UpdateContext", "UpdateContextSwiftUI", "UpdateContextCompatibility",
                "CCoalescingSupport", "CMallocStats",
            ]),
        .testTarget(
            name: "NotificationCoalescingTests",
            dependencies: ["NotificationCoalescing", "CoalescingRuntime", "CMallocStats", "CoalescingTestSupport"]),
        .testTarget(
            name: "UpdateContextTests",
            dependencies: [
                "UpdateContext", "UpdateContextCore", "CoalescingRuntime", "UpdateContextSwiftUI",
                "UpdateContextCompatibility", "NotificationCoalescing",
                "CMallocStats", "CoalescingTestSupport",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
