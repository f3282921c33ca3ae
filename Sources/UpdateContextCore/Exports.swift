// The schedulers (`CoalescingScheduler`, `ManualScheduler`, …) and `UpdateDiagnostics` that a context needs
// come with `import UpdateContextCore`.
@_exported import CoalescingRuntime
