import ArchiveFormat
import ArchiveStorage
import Foundation

extension VerifyService {
  /// Checks every archive of the folder or `s3://` prefix at `location`, as restic's and
  /// borg's `check` do a repository: each archive in `subset` (every one when nil) is verified
  /// whole, exactly as ``verify(archive:password:allowingUnencrypted:meter:)`` does one;
  /// the others have their header and index read and checked. An archive that cannot be read
  /// (a wrong password, a plain archive where a password was given, damage) is reported and
  /// the others are still checked. Each archive's result goes to `report` as it is found.
  /// - Throws: ``VaultError``: the location is missing or holds no archive (66), or cannot be
  ///   listed.
  public static func verify(
    location: Location, password: PasswordSource? = nil, allowingUnencrypted: Bool = false,
    subset: DataSubset? = nil, meter: ProgressMeter? = nil,
    report: (LocationReport.Archive) throws -> Void = { _ in }
  ) throws(VaultError) -> LocationReport {
    try vault {
      guard !location.isStandardStream, location.mayExist else {
        throw VaultError(.inputMissing, "no folder at this path (\(location))")
      }
      let backend = try location.folder()
      let archives = ArchiveNaming.byStoreNewestFirst(try backend.list())
      guard !archives.isEmpty else {
        throw VaultError(.inputMissing, "no archive in \(location)")
      }
      meter?.setUnit("archives")
      meter?.setTotal(objects: archives.count)
      var results: [LocationReport.Archive] = []
      for archive in archives {
        meter?.begin(archive.name)
        let address = location.sibling(archive.name, in: backend)
        let whole = subset?.contains(archive.name) ?? true
        let result =
          whole
          ? try checkWhole(address, password: password, allowingUnencrypted: allowingUnencrypted)
          : checkStructure(
            address, bytes: archive.size, password: password,
            allowingUnencrypted: allowingUnencrypted)
        results.append(result)
        try report(result)
        meter?.add(objects: 1)
      }
      return LocationReport(
        location: location.description, ok: results.allSatisfy(\.ok),
        subset: subset?.description, archives: results,
        leftovers: ((try? backend.leftovers()) ?? []).count)
    }
  }

  /// One archive verified whole; what keeps it from being read becomes its failure.
  private static func checkWhole(
    _ address: Location, password: PasswordSource?, allowingUnencrypted: Bool
  ) throws -> LocationReport.Archive {
    do {
      let found = try verify(
        archive: address, password: password, allowingUnencrypted: allowingUnencrypted)
      return LocationReport.Archive(
        archive: address.description, ok: found.ok, dataChecked: true,
        objects: found.objects.values.reduce(0, +), problems: found.problems,
        failure: found.ok ? nil : .invalidInput)
    } catch {
      // A failure of the storage itself (no credentials, a bucket that is gone) is the
      // location's, not this archive's.
      if error.kind == .configuration { throw error }
      return LocationReport.Archive(
        archive: address.description, ok: false, dataChecked: true, objects: 0,
        problems: [error.detail],
        failure: error.kind)
    }
  }

  /// One archive's header and index read and checked (``ListService``).
  private static func checkStructure(
    _ address: Location, bytes: Int64, password: PasswordSource?, allowingUnencrypted: Bool
  ) -> LocationReport.Archive {
    let (summary, _) = ListService.summarize(address, bytes: bytes, password: password)
    var problem: String?
    var failure = summary.failure
    switch summary.state {
    case .complete:
      if password != nil && !allowingUnencrypted && !summary.encrypted {
        problem = "\(MemberStream.notEncrypted) (\(address))"
        failure = .accessDenied
      }
    case .incomplete:
      problem = "\(ArchiveLayout.index): missing: the archive is incomplete (\(address))"
      failure = .invalidInput
    case .passwordNeeded, .wrongPassword, .unreadable, .leftover:
      problem = summary.error ?? summary.stateText
    }
    return LocationReport.Archive(
      archive: address.description, ok: problem == nil, dataChecked: false,
      objects: summary.totalObjects,
      problems: problem.map { [$0] } ?? [], failure: problem == nil ? nil : failure ?? .invalidInput
    )
  }
}
