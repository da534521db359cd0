import Foundation

/// How archives are named: `<store name>-<UTC time to the millisecond>.gvault`, so that a
/// folder's names sort by time within each store.
public enum ArchiveNaming {
  /// The extension every archive name ends with.
  public static let fileExtension = "gvault"

  /// The name of an archive of the store at `storePath` made at `time`
  /// (`Library-20261122T030000.123Z.gvault` for `Library.sqlite`).
  public static func name(forStoreAt storePath: String, at time: Date) -> String {
    name(forStoreAt: storePath, milliseconds: milliseconds(time))
  }

  /// The first name not in `taken` for an archive of `storePath` made at `time`: the time's
  /// own name, else the next free millisecond, so that names stay distinct and still sort by
  /// time however close together backups start.
  public static func freeName(
    forStoreAt storePath: String, at time: Date, taken: (String) -> Bool
  ) -> String {
    var moment = milliseconds(time)
    while true {
      let name = name(forStoreAt: storePath, milliseconds: moment)
      if !taken(name) { return name }
      moment += 1
    }
  }

  /// The part of an archive's name that names its store (`Library` for `Library.sqlite`).
  public static func storeName(_ storePath: String) -> String {
    URL(fileURLWithPath: storePath).deletingPathExtension().lastPathComponent
  }

  /// `archives` by the store they were made of (by name), each store's newest first (their
  /// names end in the time); a name that is not graphvault's counts as its own store.
  public static func byStoreNewestFirst(_ archives: [StoredArchive]) -> [StoredArchive] {
    archives.sorted {
      let (a, b) = (
        storeName(ofArchive: $0.name) ?? $0.name, storeName(ofArchive: $1.name) ?? $1.name
      )
      return a != b ? a < b : $0.name > $1.name
    }
  }

  /// The store part of an archive's name as graphvault names them (`Library` for
  /// `Library-20261122T030000.123Z.gvault`), or of a leftover of one (its hidden temporary
  /// `.NAME.tmp-UUID`, or an unfinished upload `NAME?uploadId=…`); nil for other names.
  public static func storeName(ofArchive name: String) -> String? {
    var archive = Substring(name)
    if archive.hasPrefix("."), let marker = archive.range(of: ".tmp-") {
      archive = archive[archive.index(after: archive.startIndex)..<marker.lowerBound]
    }
    if let upload = archive.range(of: "?uploadId=") { archive = archive[..<upload.lowerBound] }
    let suffix = ".\(fileExtension)"
    guard archive.hasSuffix(suffix) else { return nil }
    let stem = archive.dropLast(suffix.count)
    // <store>-YYYYMMDDTHHMMSS.mmmZ
    let stampLength = 20
    guard stem.count > stampLength + 1, let dash = stem.dropLast(stampLength).last, dash == "-"
    else { return nil }
    let stamp = stem.suffix(stampLength)
    let shape = stamp.enumerated().allSatisfy { offset, character in
      switch offset {
      case 8: character == "T"
      case 15: character == "."
      case 19: character == "Z"
      default: character.isASCII && character.isNumber
      }
    }
    return shape ? String(stem.dropLast(stampLength + 1)) : nil
  }

  /// The time in an archive's name (`Library-20261122T030000.123Z.gvault`), in ISO 8601
  /// (`2026-11-22T03:00:00.123Z`); nil for a name without one.
  public static func time(ofArchive name: String) -> String? {
    guard let store = storeName(ofArchive: name), !name.hasPrefix(".") else { return nil }
    let stamp = Array(name.dropFirst(store.count + 1).prefix(20))
    func part(_ range: Range<Int>) -> String { String(stamp[range]) }
    return "\(part(0..<4))-\(part(4..<6))-\(part(6..<8))T\(part(9..<11)):\(part(11..<13)):"
      + "\(part(13..<15)).\(part(16..<19))Z"
  }

  /// Whether `name` is an archive's name.
  public static func isArchive(_ name: String) -> Bool {
    name.hasSuffix(".\(fileExtension)") && !name.hasPrefix(".")
  }

  private static func milliseconds(_ time: Date) -> Int64 {
    Int64((time.timeIntervalSince1970 * 1000).rounded(.down))
  }

  private static func name(forStoreAt storePath: String, milliseconds: Int64) -> String {
    "\(storeName(storePath))-\(stamp(milliseconds)).\(fileExtension)"
  }

  /// `20261122T030000.123Z`: basic ISO 8601, UTC, milliseconds.
  private static func stamp(_ total: Int64) -> String {
    var seconds = time_t(total.quotientAndRemainder(dividingBy: 1000).quotient)
    var milliseconds = total - Int64(seconds) * 1000
    if milliseconds < 0 {
      seconds -= 1
      milliseconds += 1000
    }
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let millis = String(milliseconds)
    return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
      + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))."
      + String(repeating: "0", count: 3 - millis.count) + millis + "Z"
  }
}
