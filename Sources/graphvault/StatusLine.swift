import Foundation
import GraphVault

/// Shows how far a long command has got, from a ``ProgressMeter`` read on a timer of its own:
/// on a terminal, one line on standard error redrawn in place a few times a second and erased
/// at the end; with `--json`, one JSON object a line on standard error
/// (`{"type":"status", …}`, restic's convention) at most once a second, the last one at the
/// end; otherwise (a log, a pipe, `--quiet`) nothing at all. Within a command's step (its
/// `phase`), the counts only grow.
final class StatusLine: @unchecked Sendable {
  /// How the status is shown.
  enum Mode {
    /// A line redrawn in place on a terminal.
    case terminal
    /// JSON status lines.
    case json
  }

  /// The meter the command updates.
  let meter = ProgressMeter()
  private let command: String
  private let mode: Mode?
  private let started = Date()
  private let condition = NSCondition()
  private var stopped = false
  private var running = false
  /// Samples of (seconds, done) for the rate, the oldest first.
  private var history: [(Double, Double)] = []

  /// A status line for `command`, shown as `options` and standard error allow. A command
  /// that `printsAsItGoes` shows no line redrawn in place when standard output is a terminal
  /// too, where the two would mix.
  init(command: String, options: GlobalOptions, printsAsItGoes: Bool = false) {
    self.command = command
    if options.quiet {
      mode = nil
    } else if options.json {
      mode = .json
    } else {
      mode =
        isatty(STDERR_FILENO) == 1 && !(printsAsItGoes && isatty(STDOUT_FILENO) == 1)
        ? .terminal : nil
    }
  }

  /// Runs `body` with the status shown until it returns or throws.
  func showing<R>(_ body: (ProgressMeter) throws -> R) rethrows -> R {
    start()
    do {
      let result = try body(meter)
      stop(succeeded: true)
      return result
    } catch {
      stop(succeeded: false)
      throw error
    }
  }

  private var interval: Double { mode == .json ? 1 : 0.25 }

  private func start() {
    guard mode != nil else { return }
    running = true
    Thread.detachNewThread { [self] in
      condition.lock()
      while !stopped {
        condition.unlock()
        draw(final: false)
        condition.lock()
        _ = condition.wait(until: Date().addingTimeInterval(interval))
      }
      running = false
      condition.broadcast()
      condition.unlock()
    }
  }

  private func stop(succeeded: Bool) {
    guard mode != nil else { return }
    condition.lock()
    stopped = true
    condition.broadcast()
    while running { condition.wait() }
    condition.unlock()
    switch mode {
    case .terminal: write("\r\u{1B}[K")
    case .json: if succeeded { draw(final: true) }
    case nil: break
    }
  }

  private func write(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
  }

  // MARK: Drawing

  private func draw(final: Bool) {
    let reading = meter.snapshot()
    let elapsed = Date().timeIntervalSince(started)
    let fraction = reading.fractionDone
    let remaining = final ? 0 : remainingSeconds(reading, elapsed: elapsed)
    switch mode {
    case .terminal:
      write(
        "\r" + Self.fit(parts(reading, elapsed: elapsed, remaining: remaining), to: Self.width())
          + "\u{1B}[K")
    case .json:
      var fields: [(String, String)] = [
        ("type", Self.quoted("status")), ("command", Self.quoted(command)),
        ("phase", Self.quoted(reading.phase)),
        ("item", Self.quoted(reading.item)), ("unit", Self.quoted(reading.unit)),
        ("objects_done", "\(reading.objectsDone)"),
        ("objects_total", reading.objectsTotal.map(String.init) ?? "null"),
        ("bytes_done", "\(reading.bytesDone)"),
        ("bytes_total", reading.bytesTotal.map(String.init) ?? "null"),
        ("percent_done", fraction.map { String(format: "%.4f", $0) } ?? "null"),
        ("seconds_elapsed", String(format: "%.2f", elapsed)),
        ("seconds_remaining", remaining.map { String(format: "%.1f", $0) } ?? "null"),
      ]
      if final { fields.append(("final", "true")) }
      write("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}\n")
    case nil:
      break
    }
  }

  /// Seconds left at the rate of the last few seconds, once there is a rate and a total.
  private func remainingSeconds(_ reading: ProgressMeter.Snapshot, elapsed: Double) -> Double? {
    guard let fraction = reading.fractionDone else { return nil }
    condition.lock()
    defer { condition.unlock() }
    history.append((elapsed, fraction))
    while let first = history.first, elapsed - first.0 > 10 { history.removeFirst() }
    guard elapsed >= 1, let first = history.first, fraction > first.1 else { return nil }
    let rate = (fraction - first.1) / (elapsed - first.0)
    return (1 - fraction) / rate
  }

  /// The line's parts, most important first; `fit` drops from the end of the optional ones.
  private func parts(_ reading: ProgressMeter.Snapshot, elapsed: Double, remaining: Double?)
    -> [String]
  {
    var parts = [reading.phase.isEmpty ? command : "\(command): \(reading.phase)"]
    var objects = Self.grouped(reading.objectsDone)
    if let total = reading.objectsTotal { objects += " of " + Self.grouped(total) }
    parts.append(objects + " " + reading.unit)
    if let fraction = reading.fractionDone {
      parts.append(String(format: "%.0f%%", fraction * 100))
    }
    if let remaining { parts.append("ETA " + Self.clock(remaining)) }
    var bytes = Self.megabytes(reading.bytesDone)
    if let total = reading.bytesTotal { bytes += " of " + Self.megabytes(total) }
    parts.append(bytes)
    if elapsed > 0.5 {
      parts.append(Self.megabytes(Int64(Double(reading.bytesDone) / elapsed)) + "/s")
    }
    if !reading.item.isEmpty { parts.append(reading.item) }
    parts.append(Self.clock(elapsed))
    return parts
  }

  /// The parts joined by two spaces, as many as fit in `width` columns (the command and the
  /// objects always; then cut).
  static func fit(_ parts: [String], to width: Int) -> String {
    var kept = parts
    while kept.count > 2 && kept.joined(separator: "  ").count > width - 1 { kept.removeLast() }
    let line = kept.joined(separator: "  ")
    return line.count > width - 1 ? String(line.prefix(max(width - 1, 1))) : line
  }

  /// The terminal's width in columns (80 when it cannot be told).
  static func width() -> Int {
    var size = winsize()
    if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
      return Int(size.ws_col)
    }
    return Int(ProcessInfo.processInfo.environment["COLUMNS"] ?? "") ?? 80
  }

  static func grouped(_ value: Int) -> String {
    let digits = String(value)
    var result = ""
    for (offset, character) in digits.enumerated() {
      if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
      result.append(character)
    }
    return result
  }

  static func megabytes(_ bytes: Int64) -> String {
    String(format: "%.1f MB", Double(bytes) / 1_000_000)
  }

  static func clock(_ seconds: Double) -> String {
    let total = Int(seconds.rounded())
    return total >= 3600
      ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
      : String(format: "%d:%02d", total / 60, total % 60)
  }

  static func quoted(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }
}
