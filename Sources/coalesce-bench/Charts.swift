import Foundation

/// Self-contained SVG charts of a report (`--svg DIR`): no dependency, no external font or script.
enum Charts {
    /// A series: a name, a colour, whether it is dashed, and its points.
    struct Series {
        var name: String
        var color: String
        var dashed = false
        var points: [(x: Double, y: Double)]
    }

    /// Writes every chart the report has data for into `directory`; returns the files written.
    static func write(_ report: Report, to directory: URL) throws -> [URL] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var written: [URL] = []
        if let fanOut = fanOutChart(report) {
            let url = directory.appendingPathComponent("fan-out.svg")
            try fanOut.write(to: url, atomically: true, encoding: .utf8)
            written.append(url)
        }
        if let source = fastSourceChart(report) {
            let url = directory.appendingPathComponent("fast-source.svg")
            try source.write(to: url, atomically: true, encoding: .utf8)
            written.append(url)
        }
        return written
    }

    // MARK: the charts

    /// Fan-out: cost per context against N, log-log, ours and every baseline.
    static func fanOutChart(_ report: Report) -> String? {
        let rows = report.rows.filter { $0.scenario == "fan-out (per context)" }.sorted { $0.n < $1.n }
        guard rows.count >= 2 else { return nil }
        func series(_ name: String, _ color: String, dashed: Bool = false, _ value: (Row) -> Double?) -> Series {
            Series(
                name: name, color: color, dashed: dashed,
                points: rows.compactMap { row in value(row).map { (Double(row.n), $0) } })
        }
        let all = [
            series("ours", "#d62728") { $0.ours },
            series("floor (dirty flag + array)", "#7f7f7f", dashed: true) { $0.floor },
            series("DispatchQueue.main.async", "#1f77b4") { $0.dispatchPerRequest },
            series("Observation", "#2ca02c") { $0.observation },
            series("NotificationQueue (one)", "#9467bd") { $0.foundationQueue },
            series("seed shape (queue per context)", "#8c564b") { $0.seedShape },
        ].filter { !$0.points.isEmpty }
        return lineChart(
            title: "Fan-out: cost per context (request + cycle + delivery)",
            subtitle: "\(report.machine), \(report.mode) run; lower is better; log-log",
            xLabel: "contexts dirtied in one cycle (N)", yLabel: "ns per context", series: all)
    }

    /// The fast background source: deliveries per second and main-thread CPU, four ways.
    static func fastSourceChart(_ report: Report) -> String? {
        func row(_ prefix: String, _ label: String) -> Row? {
            report.rows.first { $0.scenario == "fast source: \(prefix) (ours \(label))" }
        }
        guard let turnRate = row("deliveries/s", "per turn"), let frameRate = row("deliveries/s", "per frame"),
            let turnCPU = row("main-thread CPU", "per turn"), let frameCPU = row("main-thread CPU", "per frame")
        else { return nil }
        let names = ["ours, per frame", "ours, per turn", "Observation, per turn", "DispatchQueue.main.async"]
        let colors = ["#d62728", "#ff9896", "#2ca02c", "#1f77b4"]
        let rates = [frameRate.ours, turnRate.ours, turnRate.observation, turnRate.dispatchPerRequest]
        let cpus = [frameCPU.ours, turnCPU.ours, turnCPU.observation, turnCPU.dispatchPerRequest]
        return barChart(
            title: "A background source at ~10 kHz",
            subtitle: "\(report.machine), \(report.mode) run; lower is better; log scale",
            panels: [
                ("deliveries per second", zip(names, zip(colors, rates)).map { ($0, $1.0, $1.1) }),
                ("main-thread CPU, ms per second", zip(names, zip(colors, cpus)).map { ($0, $1.0, $1.1) }),
            ])
    }

    // MARK: drawing

    private static let width = 820.0
    private static let font = "font-family=\"Helvetica, Arial, sans-serif\""

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Decades covering `values` (at least one decade).
    static func decades(_ values: [Double]) -> (low: Int, high: Int) {
        let positive = values.filter { $0 > 0 }
        let low = Int(floor(log10(positive.min() ?? 1)))
        let high = Int(ceil(log10(positive.max() ?? 10)))
        return (low, max(high, low + 1))
    }

    private static func label(power: Int) -> String {
        switch power {
        case 0..<4: return String(Int(pow(10, Double(power))))
        case 4..<6: return "\(Int(pow(10, Double(power - 3))))k"
        case 6..<9: return "\(Int(pow(10, Double(power - 6))))M"
        default: return "1e\(power)"
        }
    }

    private static func header(height: Double, title: String, subtitle: String) -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
        viewBox="0 0 \(Int(width)) \(Int(height))" \(font)>
        <rect width="100%" height="100%" fill="#ffffff"/>
        <text x="20" y="28" font-size="17" font-weight="bold" fill="#222">\(escape(title))</text>
        <text x="20" y="48" font-size="12" fill="#555">\(escape(subtitle))</text>

        """
    }

    static func lineChart(title: String, subtitle: String, xLabel: String, yLabel: String, series: [Series])
        -> String
    {
        let height = 460.0
        let (left, right, top, bottom) = (80.0, width - 260, 70.0, height - 60)
        let xs = decades(series.flatMap { $0.points.map(\.x) })
        let ys = decades(series.flatMap { $0.points.map(\.y) })
        func px(_ x: Double) -> Double {
            left + (log10(x) - Double(xs.low)) / Double(xs.high - xs.low) * (right - left)
        }
        func py(_ y: Double) -> Double {
            bottom - (log10(y) - Double(ys.low)) / Double(ys.high - ys.low) * (bottom - top)
        }
        var svg = header(height: height, title: title, subtitle: subtitle)
        for power in xs.low...xs.high {
            let x = format(px(pow(10, Double(power))))
            svg += "<line x1=\"\(x)\" y1=\"\(format(top))\" x2=\"\(x)\" y2=\"\(format(bottom))\" stroke=\"#e5e5e5\"/>\n"
            svg +=
                "<text x=\"\(x)\" y=\"\(format(bottom + 18))\" font-size=\"11\" text-anchor=\"middle\" fill=\"#444\">"
            svg += "\(label(power: power))</text>\n"
        }
        for power in ys.low...ys.high {
            let y = format(py(pow(10, Double(power))))
            svg += "<line x1=\"\(format(left))\" y1=\"\(y)\" x2=\"\(format(right))\" y2=\"\(y)\" stroke=\"#e5e5e5\"/>\n"
            svg += "<text x=\"\(format(left - 8))\" y=\"\(y)\" font-size=\"11\" text-anchor=\"end\" "
            svg += "dominant-baseline=\"middle\" fill=\"#444\">\(label(power: power))</text>\n"
        }
        svg += "<rect x=\"\(format(left))\" y=\"\(format(top))\" width=\"\(format(right - left))\" "
        svg += "height=\"\(format(bottom - top))\" fill=\"none\" stroke=\"#999\"/>\n"
        svg += "<text x=\"\(format((left + right) / 2))\" y=\"\(format(height - 20))\" font-size=\"12\" "
        svg += "text-anchor=\"middle\" fill=\"#333\">\(escape(xLabel))</text>\n"
        svg +=
            "<text x=\"20\" y=\"\(format((top + bottom) / 2))\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\" "
        svg += "transform=\"rotate(-90 20 \(format((top + bottom) / 2)))\">\(escape(yLabel))</text>\n"
        for (index, line) in series.enumerated() {
            let dash = line.dashed ? " stroke-dasharray=\"6 4\"" : ""
            let points = line.points.map { "\(format(px($0.x))),\(format(py($0.y)))" }.joined(separator: " ")
            svg +=
                "<polyline points=\"\(points)\" fill=\"none\" stroke=\"\(line.color)\" stroke-width=\"2.5\"\(dash)/>\n"
            for point in line.points {
                svg += "<circle cx=\"\(format(px(point.x)))\" cy=\"\(format(py(point.y)))\" r=\"3.5\" "
                svg += "fill=\"\(line.color)\"><title>\(escape(line.name)): N=\(Int(point.x)), "
                svg += "\(String(format: "%.3g", point.y)) ns</title></circle>\n"
            }
            let legendY = top + 10 + Double(index) * 22
            svg += "<line x1=\"\(format(right + 20))\" y1=\"\(format(legendY))\" x2=\"\(format(right + 44))\" "
            svg += "y2=\"\(format(legendY))\" stroke=\"\(line.color)\" stroke-width=\"2.5\"\(dash)/>\n"
            svg +=
                "<text x=\"\(format(right + 52))\" y=\"\(format(legendY))\" font-size=\"12\" dominant-baseline=\"middle\" "
            svg += "fill=\"#222\">\(escape(line.name))</text>\n"
        }
        return svg + "</svg>\n"
    }

    static func barChart(
        title: String, subtitle: String,
        panels: [(title: String, bars: [(name: String, color: String, value: Double?)])]
    ) -> String {
        let barHeight = 22.0
        let panelHeight = 40 + Double(panels.map(\.bars.count).max() ?? 0) * (barHeight + 8)
        let height = 70 + Double(panels.count) * panelHeight + 20
        let (left, right) = (200.0, width - 90)
        var svg = header(height: height, title: title, subtitle: subtitle)
        for (index, panel) in panels.enumerated() {
            let top = 70 + Double(index) * panelHeight
            let values = panel.bars.compactMap(\.value)
            let scale = decades(values)
            func px(_ value: Double) -> Double {
                left + (log10(max(value, pow(10, Double(scale.low)))) - Double(scale.low))
                    / Double(scale.high - scale.low) * (right - left)
            }
            svg += "<text x=\"20\" y=\"\(format(top + 12))\" font-size=\"13\" font-weight=\"bold\" fill=\"#333\">"
            svg += "\(escape(panel.title))</text>\n"
            let axisBottom = top + 22 + Double(panel.bars.count) * (barHeight + 8)
            for power in scale.low...scale.high {
                let x = format(px(pow(10, Double(power))))
                svg +=
                    "<line x1=\"\(x)\" y1=\"\(format(top + 20))\" x2=\"\(x)\" y2=\"\(format(axisBottom))\" stroke=\"#e5e5e5\"/>\n"
                svg += "<text x=\"\(x)\" y=\"\(format(axisBottom + 12))\" font-size=\"10\" text-anchor=\"middle\" "
                svg += "fill=\"#555\">\(label(power: power))</text>\n"
            }
            for (row, bar) in panel.bars.enumerated() {
                let y = top + 24 + Double(row) * (barHeight + 8)
                svg += "<text x=\"\(format(left - 8))\" y=\"\(format(y + barHeight / 2))\" font-size=\"12\" "
                svg += "text-anchor=\"end\" dominant-baseline=\"middle\" fill=\"#222\">\(escape(bar.name))</text>\n"
                guard let value = bar.value else { continue }
                svg += "<rect x=\"\(format(left))\" y=\"\(format(y))\" width=\"\(format(max(px(value) - left, 1)))\" "
                svg += "height=\"\(format(barHeight))\" fill=\"\(bar.color)\"><title>\(escape(bar.name)): "
                svg += "\(String(format: "%.3g", value))</title></rect>\n"
                svg += "<text x=\"\(format(px(value) + 6))\" y=\"\(format(y + barHeight / 2))\" font-size=\"12\" "
                svg +=
                    "dominant-baseline=\"middle\" fill=\"#222\">\(String(format: value >= 100 ? "%.0f" : "%.1f", value))</text>\n"
            }
        }
        return svg + "</svg>\n"
    }
}
