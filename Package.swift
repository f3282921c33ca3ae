// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "CoalescedViewUpdates",
    // Atomics and Observation come from the toolchain's Synchronization module, which needs these OS versions.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "NotificationCoalescing", targets: ["NotificationCoalescing"]),
        .library(name: "UpdateContext", targets: ["UpdateContext"]),
    ],
    targets: [
        .target(name: "NotificationCoalescing"),
        .target(name: "UpdateContext", dependencies: ["NotificationCoalescing"]),
        // The benchmark is an executable that no product exports: it stays out of the public surface.
        .executableTarget(
            name: "coalesce-bench", dependencies: ["NotificationCoalescing", "UpdateContext", "CMallocStats"]),
        // malloc statistics for the benchmark's memory figures and the soak test (no product exports it).
        .target(name: "CMallocStats"),
        .testTarget(name: "NotificationCoalescingTests", dependencies: ["NotificationCoalescing"]),
        .testTarget(
            name: "UpdateContextTests", dependencies: ["UpdateContext", "NotificationCoalescing", "CMallocStats"]),
    ],
    swiftLanguageModes: [.v6]
)
