import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore
import PropertyList

/// What `graphvault verify` found.
public struct VerifyReport: Codable, Sendable {
  /// The archive.
  public let archive: String
  /// Whether the archive passed every check.
  public let ok: Bool
  /// Whether the index is present and last.
  public let complete: Bool
  /// The number of members read.
  public let members: Int
  /// Objects per entity read.
  public let objects: [String: Int]
  /// The first problems found (at most ``VerifyService/problemLimit``), each naming a member,
  /// object or reference.
  public let problems: [String]
  /// Entities all of whose members are intact (their objects could still be extracted).
  public let intactEntities: [String]
}

/// `graphvault verify`: checks an archive without restoring it.
public enum VerifyService {
  /// How many problems a report lists.
  public static let problemLimit = 20

  /// Checks the archive exactly as a restore reads it, writing nothing: the same scan
  /// (``ArchiveScanner``: member order, checksums and counts against the index, header, model,
  /// metadata, schema, primary keys, model cache, every object and row, every reference,
  /// `Z_MAX`) and, in memory, what a restore's store would judge (rows of other tables, values
  /// under unique indexes). The report is OK exactly when a restore at the archive's version
  /// would succeed; it lists the first problems and the entities whose members all passed.
  ///
  /// Memory follows the number of objects by a few bits each (their keys), not their size.
  ///
  /// A sealed archive is opened with the password from `password`; each of its members must
  /// also pass authentication. With a password, an archive that is not encrypted is refused
  /// unless `allowingUnencrypted`.
  /// - Throws: ``VaultError``: the archive is missing or unreadable (66), its password is
  ///   missing or wrong (77), reading it failed (74); every problem of its content is in the
  ///   report.
  public static func verify(
    archive: Location, password: PasswordSource? = nil, allowingUnencrypted: Bool = false,
    meter: ProgressMeter? = nil
  ) throws(VaultError) -> VerifyReport {
    try vault {
      try ArchiveAccess.requireInput(archive)
      var options = ArchiveScanner.Options()
      options.collectingProblems = problemLimit
      var scanner: (any ArchiveEventSource)?
      var chain: ArchiveChain?
      let sink = VerifySink(meter: meter)
      var found: [String] = []
      var damaged = Set<String>()
      do {
        // Opening reads ahead: a damaged stream can show at once. An incremental archive is
        // checked with its whole chain, as a restore reads it.
        let opened = try ArchiveChain.open(
          archive, password: password, allowingUnencrypted: allowingUnencrypted, meter: meter,
          options: options)
        chain = opened
        scanner = opened.source
        try ObjectPipeline(source: opened.source.objectSource, sink: sink).run { error, member in
          // What the store would refuse: a problem of the archive, as the scan's are.
          let failure = VaultError(wrapping: error)
          guard failure.kind == .invalidInput else { throw failure }
          found.append("\(member): \(failure.detail)")
          if let entity = ArchiveLayout.entity(ofObjectsMember: member) { damaged.insert(entity) }
        }
      } catch {
        let failure = VaultError(wrapping: error)
        guard failure.kind == .invalidInput else { throw failure }
        found.append(
          "the archive cannot be read past member \(scanner?.memberCount ?? 0): \(failure.detail)")
      }
      found += try chain?.trailerProblems() ?? []
      let problems = Array(
        ((scanner?.problems.map(\.description) ?? []) + found).prefix(problemLimit))
      damaged.formUnion(scanner?.damagedEntities ?? [])
      let objects = scanner?.objects ?? [:]
      let entities = Set(objects.keys).union(damaged)
      return VerifyReport(
        archive: archive.description, ok: problems.isEmpty, complete: scanner?.isComplete ?? false,
        members: scanner?.memberCount ?? 0, objects: objects, problems: problems,
        intactEntities: entities.subtracting(damaged).sorted())
    }
  }
}
