import ArchiveFormat
import ArchiveStorage
import Foundation
import PropertyList

extension RestoreService {
  /// The archive in the folder or `s3://` prefix `location` that holds the store named
  /// `store` as it was at `time`: the newest archive of that store made at or before `time`
  /// (by its header's creation time), full or incremental (an incremental one is restored with
  /// its chain). `store` may be left out when the location holds archives of one store only.
  /// Headers are read newest first, each by ranged reads when the archive is framed, until one
  /// is old enough.
  /// - Throws: ``VaultError``: 66 when the location is missing or holds no archive of the
  ///   store made by then; 64 when it holds several stores and none was named.
  public static func archive(
    in location: Location, at time: Date, store: String? = nil, password: PasswordSource? = nil
  ) throws(VaultError) -> Location {
    try vault {
      guard location.isRemote || location.isFolder else {
        throw VaultError(.inputMissing, "no folder at this path (\(location))")
      }
      let backend = try location.folder()
      let archives = try backend.list().map(\.name).filter {
        ArchiveNaming.storeName(ofArchive: $0) != nil
      }
      let stores = Set(archives.compactMap(ArchiveNaming.storeName(ofArchive:)))
      let wanted: String
      if let store {
        wanted = store
      } else if stores.count == 1, let only = stores.first {
        wanted = only
      } else if stores.isEmpty {
        throw VaultError(.inputMissing, "no archive in \(location)")
      } else {
        throw VaultError(
          .usage,
          "\(location) holds archives of \(stores.count) stores (\(stores.sorted().joined(separator: ", "))): name one with --store"
        )
      }
      let limit = time.timeIntervalSince1970
      for name in archives.filter({ ArchiveNaming.storeName(ofArchive: $0) == wanted })
        .sorted(by: >)
      {
        let address = location.sibling(name, in: backend)
        guard let created = try? header(of: address, password: password).created,
          created.secondsSince1970 <= limit
        else { continue }
        return address
      }
      throw VaultError(
        .inputMissing,
        "no archive of \(wanted) in \(location) was made at or before \(PropertyListDate(secondsSince1970: limit))"
      )
    }
  }

  /// The header of the archive at `address`: from its frame when the archive is framed, else
  /// its first member (opened with `password` when sealed).
  static func header(of address: Location, password: PasswordSource?) throws -> ArchiveHeader {
    if let framed = try ArchiveAccess.framed(
      address, password: nil, allowingUnencrypted: true, incremental: true)
    {
      return try ArchiveAccess.header(of: framed)
    }
    let stream = try ArchiveAccess.members(address, password: password, allowingUnencrypted: true)
    guard
      let member = try stream.next(hash: false, wantBytes: { $0 == ArchiveLayout.header }),
      member.path == ArchiveLayout.header, let bytes = member.bytes
    else {
      throw VaultError(.invalidInput, "not a graphvault archive (no graphvault.plist) (\(address))")
    }
    return ArchiveHeader(
      reading: try ArchiveAccess.propertyList(bytes, member: ArchiveLayout.header))
  }
}
