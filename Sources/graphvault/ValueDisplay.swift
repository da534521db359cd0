import ArgumentParser
import Foundation
import GraphVault

/// How `diff` and `find` show objects to a person: whole values in a file or a pipe and with
/// `--full`; on a terminal, a value cut after ``valueLimit`` characters and an object's line
/// after ``lineLimit``. Key attributes come first; with `--show`, an object's line holds the
/// named properties alone, in that order.
struct ValueDisplay {
  /// A value's characters shown on a terminal before it is cut.
  static let valueLimit = 60
  /// An object's line's characters shown on a terminal before it is cut.
  static let lineLimit = 100

  /// Whether values and lines are shown whole.
  let whole: Bool
  /// The properties an object's line shows, in order (all when empty).
  let shown: [String]

  /// The display for these options: whole unless standard output is a terminal and `--full`
  /// was not given.
  init(_ options: DisplayOptions) {
    self.init(whole: options.full || isatty(STDOUT_FILENO) != 1, shown: options.shownProperties)
  }

  init(whole: Bool, shown: [String] = []) {
    self.whole = whole
    self.shown = shown
  }

  /// A value as shown: a long one cut, keeping a quoted string's closing quote.
  func value(_ text: String) -> String {
    guard !whole, text.count > Self.valueLimit else { return text }
    let cut = String(text.prefix(Self.valueLimit)) + "…"
    return text.hasPrefix("\"") && text.hasSuffix("\"") ? cut + "\"" : cut
  }

  /// An object's values on one line, `NAME=VALUE, …`: `keys` first and the rest by name, or
  /// the shown properties; cut on a terminal.
  func line(_ values: [String: String], keys: [String]) -> String {
    line(ordered: KeyAttributes.ordered(values.keys, keys: keys).map { ($0, values[$0]!) })
  }

  /// An object's values, already in their order, on one line: all of them, or the shown
  /// properties in the order `--show` gives; cut on a terminal.
  func line(ordered values: [(name: String, value: String)]) -> String {
    let chosen =
      shown.isEmpty
      ? values
      : shown.compactMap { name in values.first { $0.name == name } }
    return line(chosen.map { "\($0.name)=\(value($0.value))" })
  }

  /// `pairs` joined with commas, cut on a terminal.
  func line(_ pairs: [String]) -> String {
    let line = pairs.joined(separator: ", ")
    return whole || line.count <= Self.lineLimit ? line : String(line.prefix(Self.lineLimit)) + "…"
  }
}

/// The options of how objects are shown, shared by `diff` and `find`.
struct DisplayOptions: ParsableArguments {
  @Flag(help: "Show whole values on a terminal too (they are whole in a file or a pipe).")
  var full = false

  @Option(
    parsing: .singleValue,
    help: ArgumentHelp(
      "Show these properties on an object's line, in this order, and no others (repeatable, or comma-separated).",
      valueName: "property"))
  var show: [String] = []

  /// The properties named by `--show`, in order.
  var shownProperties: [String] {
    show.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
      .filter { !$0.isEmpty }
  }
}
