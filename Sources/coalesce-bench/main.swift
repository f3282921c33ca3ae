import Foundation

// coalesce-bench: what coalescing costs and buys, measured side by side in one run against Foundation's
// NotificationQueue, one Dispatch block per request, Observation tracking, and a hand-written floor.

var argumentList = Array(CommandLine.arguments.dropFirst())

/// Takes `--name VALUE` out of the arguments.
@MainActor
func value(of option: String, what: String) -> String? {
    guard let index = argumentList.firstIndex(of: option) else { return nil }
    guard index + 1 < argumentList.count, !argumentList[index + 1].hasPrefix("--") else {
        FileHandle.standardError.write(Data("coalesce-bench: \(option) needs \(what) (see --help)\n".utf8))
        exit(2)
    }
    defer { argumentList.removeSubrange(index...(index + 1)) }
    return argumentList[index + 1]
}
let only = value(of: "--only", what: "a scenario name")
let svgDirectory = value(of: "--svg", what: "a directory")
let arguments = Set(argumentList)
if arguments.contains("--help") || arguments.contains("-h") {
    print(
        """
        usage: coalesce-bench [--quick] [--json] [--strict] [--only SCENARIO] [--svg DIR]
          --quick   a short run (well under 30 s) that still checks every delivery; sizes are capped
          --json    print the report as JSON instead of the table
          --strict  also exit non-zero when a speed or memory target is not met
          --only    run one scenario: memory, dirty, transaction, diagnostics, burst, fan-out, mixed, tracking,
                    typed-message, cross-thread, fast-source, enqueue, seed
          --svg     also write the charts as self-contained SVG into DIR (fan-out.svg, fast-source.svg)
        Exit status: 1 when any delivery check fails (or, with --strict, a target is missed); 2 on bad usage.
        """)
    exit(0)
}
let known: Set<String> = ["--quick", "--json", "--strict"]
if let unknown = arguments.subtracting(known).first {
    FileHandle.standardError.write(Data("coalesce-bench: unknown option \(unknown) (see --help)\n".utf8))
    exit(2)
}

if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
    run(arguments: arguments, only: only, svgDirectory: svgDirectory)
} else {
    // Observation, one of the baselines, needs these systems; the libraries themselves do not.
    FileHandle.standardError.write(Data("coalesce-bench: needs macOS 14 or newer (the Observation baseline)\n".utf8))
    exit(2)
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
func run(arguments: Set<String>, only: String?, svgDirectory: String?) {
    let config = Config(quick: arguments.contains("--quick"))
    var machine = "\(ProcessInfo.processInfo.activeProcessorCount) cores"
    #if os(Linux)
    machine += ", Linux"
    #elseif os(macOS)
    machine += ", macOS"
    #endif
    var bench = Bench(config: config, report: Report(mode: config.quick ? "quick" : "full", machine: machine))
    let started = Date()
    let scenarios: [(String, (inout Bench) -> Void)] = [
        ("memory", { $0.memory() }),  // first, on a fresh heap, so that RSS growth means something
        ("dirty", { $0.dirtyRequest() }),
        ("transaction", { $0.transactionRequest() }),
        ("diagnostics", { $0.diagnosticsCost() }),
        ("burst", { $0.burst() }),
        ("fan-out", { $0.fanOutScenario() }),
        ("mixed", { $0.mixedFlags() }),
        ("tracking", { $0.tracking() }),
        ("typed-message", { $0.typedMessagesIfAvailable() }),
        ("cross-thread", { $0.crossThread() }),
        ("fast-source", { $0.fastSource() }),
        ("enqueue", { $0.enqueueScaling() }),
        ("seed", { $0.seedShape() }),  // last: its queues are never freed and slow every later turn
    ]
    if let only, !scenarios.contains(where: { $0.0 == only }) {
        FileHandle.standardError.write(Data("coalesce-bench: unknown scenario \(only) (see --help)\n".utf8))
        exit(2)
    }
    for (name, run) in scenarios where only == nil || only == name {
        run(&bench)
    }
    bench.evaluateTargets()
    progress(String(format: "done in %.1f s", Date().timeIntervalSince(started)))

    let report = bench.report
    if arguments.contains("--json") {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try! encoder.encode(report), as: UTF8.self))
    } else {
        print("coalesce-bench (\(report.mode) run, \(report.machine)); times are medians, ns unless noted\n")
        print(report.table())
    }
    if let svgDirectory {
        do {
            for file in try Charts.write(report, to: URL(fileURLWithPath: svgDirectory)) {
                progress("wrote \(file.path)")
            }
        } catch {
            FileHandle.standardError.write(Data("coalesce-bench: cannot write the charts: \(error)\n".utf8))
            exit(1)
        }
    }
    if !report.allChecksPassed {
        FileHandle.standardError.write(Data("coalesce-bench: a delivery check FAILED\n".utf8))
        exit(1)
    }
    if arguments.contains("--strict") && report.targets.contains(where: { $0.met == false }) {
        FileHandle.standardError.write(Data("coalesce-bench: a target was not met (--strict)\n".utf8))
        exit(1)
    }
}
