// The schedulers (`CoalescingScheduler`, `ManualScheduler`, …) and `UpdateDiagnostics` that a queue needs
// come with `import NotificationCoalescing`.
@_exported import CoalescingRuntime
