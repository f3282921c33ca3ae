import Foundation

/// One line of the table: a scenario at one size, ours and each baseline, in one unit.
struct Row: Codable {
    var scenario: String
    var n: Int
    var unit: String
    var ours: Double?
    var foundationQueue: Double?
    var seedShape: Double?
    var dispatchPerRequest: Double?
    var observation: Double?
    var floor: Double?
    /// Ours ÷ floor from samples taken side by side: the median of each round's ratio, where both sides saw
    /// the same machine state (`nil`: the ratio of the two medians).
    var pairedFloorRatio: Double?
    var oursDeliveries: String
    var note: String = ""
    /// Whether bigger figures are better (a throughput), not smaller (a time, a size, a delivery rate).
    var higherIsBetter = false

    /// Ours ÷ floor: the paired ratio when the scenario measured one, else the ratio of the medians.
    var floorRatio: Double? {
        pairedFloorRatio ?? floor.flatMap { floor in ours.map { $0 / floor } }
    }

    /// How many times better ours is than `other` (above 1: ours wins).
    func advantage(over other: Double?) -> Double? {
        guard let other, let ours, ours > 0, other > 0 else { return nil }
        return higherIsBetter ? ours / other : other / ours
    }
}

/// A check that is not about speed: exact deliveries, nothing lost. Any failure fails the run.
struct Check: Codable {
    var name: String
    var passed: Bool
    var detail: String
}

/// One target of BENCHMARK.md, evaluated on this run's figures.
struct Target: Codable {
    var figure: String
    var target: String
    var measured: String
    /// `nil` when the run did not measure it (a `--quick` run skips the large sizes).
    var met: Bool?
}

struct Report: Codable {
    var mode: String
    var machine: String
    var rows: [Row] = []
    var checks: [Check] = []
    var targets: [Target] = []
}

extension Report {
    var allChecksPassed: Bool { checks.allSatisfy(\.passed) }

    func table() -> String {
        func format(_ value: Double?) -> String {
            guard let value else { return "–" }
            if value >= 1e6 { return String(format: "%.3g", value) }
            if value >= 100 { return String(format: "%.0f", value) }
            if value >= 10 { return String(format: "%.1f", value) }
            return String(format: "%.2f", value)
        }
        func ratio(_ value: Double?) -> String {
            guard let value else { return "–" }
            return value >= 100 ? String(format: "%.0f×", value) : String(format: "%.1f×", value)
        }
        let header = [
            "scenario", "N", "unit", "ours", "NotificationQueue", "seed shape", "dispatch/req", "Observation", "floor",
            "ours÷floor", "vs NQ", "vs Obs", "vs dispatch", "deliveries (ours)",
        ]
        var lines: [[String]] = [header]
        for row in rows {
            lines.append([
                row.scenario, String(row.n), row.unit, format(row.ours), format(row.foundationQueue),
                format(row.seedShape), format(row.dispatchPerRequest), format(row.observation), format(row.floor),
                ratio(row.floorRatio),
                ratio(row.advantage(over: row.foundationQueue)),
                ratio(row.advantage(over: row.observation)),
                ratio(row.advantage(over: row.dispatchPerRequest)),
                row.oursDeliveries + (row.note.isEmpty ? "" : "  (\(row.note))"),
            ])
        }
        var out = align(lines)
        out += "\nChecks (exact deliveries; any failure fails the run)\n"
        out += align(
            [["check", "result", "detail"]] + checks.map { [$0.name, $0.passed ? "ok" : "FAILED", $0.detail] })
        out += "\nTargets (BENCHMARK.md; ratios from this run)\n"
        out += align(
            [["figure", "target", "measured", "status"]]
                + targets.map {
                    [
                        $0.figure, $0.target, $0.measured,
                        $0.met.map { $0 ? "met" : "not met" } ?? "not measured (--quick)",
                    ]
                })
        return out
    }

    private func align(_ lines: [[String]]) -> String {
        let widths = (0..<lines[0].count).map { column in lines.map { $0[column].count }.max() ?? 0 }
        return lines.enumerated().map { index, line in
            let text = zip(line, widths).enumerated().map { column, pair in
                let (cell, width) = pair
                let pad = String(repeating: " ", count: width - cell.count)
                // Text columns left, numbers right.
                return column == 0 || column == 2 || column == line.count - 1 || index == 0 ? cell + pad : pad + cell
            }.joined(separator: "  ")
            let trimmed = text.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
            return index == 0 ? trimmed + "\n" + String(repeating: "-", count: trimmed.count) : trimmed
        }.joined(separator: "\n") + "\n"
    }
}
