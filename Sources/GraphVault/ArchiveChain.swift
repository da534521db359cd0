import ArchiveFormat
import ArchiveStorage
import Foundation

/// An archive opened for its content, as restore, verify, export, diff and find read it: a
/// full archive alone, or an incremental one with its chain of parents, found by name beside
/// it (in the same folder or `s3://` prefix) back to the full archive, and read with it as one
/// (``ChainScanner``).
struct ArchiveChain {
  /// What gives the content's events.
  let source: any ArchiveEventSource
  /// Each archive read and its scan, the full one first (one for a full archive).
  let scans: [(location: Location, scanner: ArchiveScanner)]

  /// The longest chain followed: far beyond any `--full-every`, short of a loop.
  static let longestChain = 10_000

  /// Opens the archive at `location` and, when it is incremental, its parents, each read up to
  /// its objects, with the password from `password`. A chain gives each entity's objects in
  /// ascending key order, as one archive does.
  /// - Throws: ``VaultError``: 65 when a parent is missing (naming it) or the chain is not
  ///   one; what opening an archive throws.
  static func open(
    _ location: Location, password: PasswordSource?, allowingUnencrypted: Bool,
    meter: ProgressMeter? = nil, options: ArchiveScanner.Options = ArchiveScanner.Options()
  ) throws -> ArchiveChain {
    func scan(_ address: Location) throws -> (ArchiveScanner, ArchivedStore?) {
      try Self.scan(
        address, password: password, allowingUnencrypted: allowingUnencrypted, meter: meter,
        options: options)
    }
    let (newest, store) = try scan(location)
    guard let store, let parent = store.header.parent else {
      return ArchiveChain(source: newest, scans: [(location, newest)])
    }
    guard !location.isStandardStream else {
      throw VaultError(
        .invalidInput,
        "the archive on standard input is incremental: it is read with its parents, from the folder or prefix that holds them"
      )
    }
    let (backend, name) = try location.archive()
    var links = [
      ChainScanner.Link(name: name, scanner: newest, store: store)
    ]
    var scans = [(location, newest)]
    var next: ArchiveHeader.Parent? = parent
    var seen: Set<String> = [name]
    while let wanted = next {
      let child = links[links.count - 1].name
      guard seen.insert(wanted.name).inserted, links.count < longestChain else {
        throw VaultError(
          .invalidInput, "the chain of \(location) loops back to \(wanted.name): it is damaged")
      }
      guard ArchiveNaming.isArchive(wanted.name), !wanted.name.contains("/"),
        backend.exists(wanted.name)
      else {
        throw VaultError(
          .invalidInput,
          "the parent \(wanted.name) of \(child) is missing from \(backend.location): an incremental archive is read with every archive of its chain back to the full one (\(location))"
        )
      }
      let address = location.sibling(wanted.name, in: backend)
      let (scanner, parentStore) = try scan(address)
      guard let read = parentStore else {
        throw VaultError(
          .invalidInput, "the parent \(address) of \(child) holds no store: it is damaged")
      }
      links.append(ChainScanner.Link(name: wanted.name, scanner: scanner, store: read))
      scans.append((address, scanner))
      next = read.header.parent
    }
    return ArchiveChain(
      source: ChainScanner(
        links: links.reversed(), collectingProblems: options.collectingProblems),
      scans: scans.reversed())
  }

  /// A scan of the archive at `location`, read up to its objects
  /// (``ArchiveScanner/readStore()``): the scan, and what it holds before them (nil when it
  /// ends, or a collecting scan stops, before).
  static func scan(
    _ location: Location, password: PasswordSource?, allowingUnencrypted: Bool,
    meter: ProgressMeter? = nil, options: ArchiveScanner.Options = ArchiveScanner.Options()
  ) throws -> (scanner: ArchiveScanner, store: ArchivedStore?) {
    // The next member is read and hashed while the scan decodes the one before.
    let scanner = ArchiveScanner(
      stream: ReadAheadMembers(
        try ArchiveAccess.members(
          location, password: password, allowingUnencrypted: allowingUnencrypted, meter: meter)),
      options: options)
    return (scanner, try ArchiveAccess.reading(location) { try scanner.readStore() })
  }

  /// What each archive read holds before its objects, the full one first.
  var stores: [ArchivedStore] { scans.compactMap(\.scanner.store) }

  /// Whether the archive read is incremental.
  var isChain: Bool { scans.count > 1 }

  /// Each archive's trailer checked against its index (``ArchiveAccess/checkTrailer(_:index:)``).
  func checkTrailers() throws {
    for (location, scanner) in scans {
      try ArchiveAccess.checkTrailer(location, index: scanner.readIndex)
    }
  }

  /// The trailer problems of every archive read (``ArchiveAccess/trailerProblem(_:index:)``).
  func trailerProblems() throws -> [String] {
    try scans.compactMap { location, scanner in
      guard let index = scanner.readIndex,
        let problem = try ArchiveAccess.trailerProblem(location, index: index)
      else { return nil }
      return isChain ? "\(location.lastComponent): \(problem)" : problem
    }
  }
}
