// One import for an app: `import UpdateContext` also gives the engine underneath — the schedulers
// (`CoalescingScheduler`, `ManualScheduler`, …), `UpdateDiagnostics`, the notification contexts and their
// typed-message forms — which the canonical path's tests, diagnostics and inputs use.
@_exported import NotificationCoalescing
