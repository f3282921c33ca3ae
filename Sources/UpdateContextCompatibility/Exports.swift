// Code moving over imports this product alone: it keeps seeing what moved to UpdateContextSwiftUI in 0.2.0
// (`updatesOnly(onDeliveryOf:)` and `updatesOnly(onRenderOf:)`), and the core.
@_exported import UpdateContextSwiftUI
