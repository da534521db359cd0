import ArchiveFormat
import ArchiveStorage
import Foundation
import ObjectStore
import PropertyList

/// The newest point of a chain of archives that an incremental backup continues: its name
/// and index digest (what the new archive names as its parent), and the chain's change
/// sketches at that point (the full archive's, with each incremental's deltas applied), read
/// from the ledgers at the start of each archive and, for a full archive of format 5, from its
/// sketches after the objects (alone where it is framed).
struct ChainTip {
  /// What the new archive's header says of its parent.
  let parent: ArchiveHeader.Parent
  /// The seed of the chain's hashes and sketches.
  let seed: UInt64
  /// The chain's sketches at the parent, by set name.
  let sketches: [String: ChangeSketch]
  /// The SHA-256 of the model cache at the parent, when the store had one.
  let modelCache: String?
  /// The fingerprint of the parent's model.
  let fingerprint: String

  /// Why a backup asked to be incremental writes a full archive.
  struct NoParent: Error {
    let reason: String
  }

  /// The chain that ends at the newest complete archive in `backend` (reached as `place` is) of
  /// the store named `storeName` whose source has UUID `uuid` (or at `named`, when given): nil,
  /// with the reason, when there is none to build on (no archive of the store, one of an older
  /// format, a chain `fullEvery` long already).
  static func find(
    in backend: any StorageBackend, at place: Location, storeName: String, uuid: String,
    named: String?,
    password: PasswordSource?, fullEvery: Int?
  ) throws -> Result<ChainTip, NoParent> {
    let candidates: [String]
    if let named {
      guard backend.exists(named) else {
        throw VaultError(
          .inputMissing, "no archive \(named) in \(backend.location) to be the parent")
      }
      candidates = [named]
    } else {
      candidates = try backend.list().map(\.name)
        .filter { ArchiveNaming.storeName(ofArchive: $0) == storeName }
        .sorted(by: >)
    }
    var skipped: [String] = []
    for name in candidates {
      let address = place.sibling(name, in: backend)
      guard let opened = try? open(address, password: password),
        opened.header.sourceUUID == uuid
      else {
        skipped.append(name)
        continue
      }
      if named == nil, opened.changes == nil {
        return .failure(
          NoParent(
            reason:
              "the newest archive of this store here (\(name)) has no change ledger (archive format \(opened.header.formatVersion))"
          ))
      }
      guard let ledger = opened.changes else {
        throw VaultError(
          .invalidInput,
          "\(address) has no change ledger (archive format \(opened.header.formatVersion)): an incremental backup needs a parent of format 3"
        )
      }
      let depth = opened.header.parent?.depth ?? 0
      if let fullEvery, depth + 1 >= fullEvery {
        return .failure(
          NoParent(
            reason: "the chain of \(name) is \(depth + 1) archives long (--full-every \(fullEvery))"
          ))
      }
      // The parent's index names it; an archive whose index cannot be read is not complete.
      guard let index = try? indexDigest(address, password: password) else {
        if named != nil {
          throw VaultError(.invalidInput, "the parent \(address) is damaged or incomplete")
        }
        skipped.append(name)
        continue
      }
      let sketches = try chainSketches(ending: address, password: password)
      return .success(
        ChainTip(
          parent: ArchiveHeader.Parent(
            name: name, created: opened.header.created ?? PropertyListDate(secondsSince1970: 0),
            index: index, depth: depth + 1),
          seed: ledger.seed, sketches: sketches, modelCache: ledger.modelCache,
          fingerprint: opened.header.plist["model"]?["fingerprint"]?.stringValue ?? ""))
    }
    return .failure(
      NoParent(
        reason: candidates.isEmpty
          ? "there is no archive of this store here yet"
          : "no archive of this store here is complete and of this store's UUID (\(skipped.count) looked at)"
      ))
  }

  /// The sketches of the chain ending at the archive at `address`: the ledgers of it and its
  /// parents, read from their starts back to the full archive (``ArchiveChain``), then each
  /// incremental's deltas applied in order.
  private static func chainSketches(ending address: Location, password: PasswordSource?) throws
    -> [String: ChangeSketch]
  {
    let chain = try ArchiveChain.open(address, password: password, allowingUnencrypted: true)
    let ledgers = chain.stores.compactMap(\.changes)
    guard ledgers.count == chain.scans.count, let full = ledgers.first, !full.isIncremental,
      ledgers.allSatisfy({ $0.seed == full.seed })
    else {
      throw VaultError(
        .invalidInput,
        "the chain of \(address) does not start at a full archive, or an archive of it has no change ledger"
      )
    }
    var sketches = full.sets
    if full.sketchesFollow {
      sketches = try lateSketches(of: chain.scans[0], seed: full.seed)
    }
    for incremental in ledgers.dropFirst() {
      guard let next = incremental.applied(to: sketches) else {
        throw VaultError(
          .invalidInput, "the chain of \(address) names a set its full archive lacks")
      }
      sketches = next
    }
    return sketches
  }

  /// The sketches a full archive of format 5 holds after its objects: read alone where it is
  /// framed (``FramedArchive/member(_:)``), else by reading on to its end with `scan`.
  private static func lateSketches(
    of scan: (location: Location, scanner: ArchiveScanner), seed: UInt64
  ) throws -> [String: ChangeSketch] {
    let address = scan.location
    return try ArchiveAccess.reading(address) {
      if let framed = try ArchiveAccess.framed(
        address, password: nil, allowingUnencrypted: true, incremental: true)
      {
        let member = ArchiveLayout.sketches
        return try ChangeLedger.sets(
          fromSketches: try ArchiveAccess.propertyList(framed.member(member), member: member),
          seed: seed)
      }
      while try scan.scanner.next() != nil {}
      guard scan.scanner.readToTheEnd, let sketches = scan.scanner.sketches else {
        throw VaultError(.invalidInput, "the archive is incomplete (\(address))")
      }
      return sketches
    }
  }

  /// What the archive at `address` holds before its objects (its ledger included), read from
  /// its start.
  static func open(_ address: Location, password: PasswordSource?) throws -> ArchivedStore {
    guard
      let store = try ArchiveChain.scan(address, password: password, allowingUnencrypted: true)
        .store
    else {
      throw VaultError(.invalidInput, "the archive holds no store (\(address))")
    }
    return store
  }

  /// The SHA-256 of the index of the archive at `address`: from where a framed archive's
  /// trailer says it is, else by reading the archive to its end (and checking it on the way).
  static func indexDigest(_ address: Location, password: PasswordSource?) throws -> String {
    if let framed = try ArchiveAccess.framed(
      address, password: nil, allowingUnencrypted: true, incremental: true)
    {
      return framed.indexDigest
    }
    let (scanner, _) = try ArchiveChain.scan(
      address, password: password, allowingUnencrypted: true)
    return try ArchiveAccess.reading(address) {
      while try scanner.next() != nil {}
      guard scanner.readToTheEnd, let digest = scanner.indexDigest else {
        throw VaultError(.invalidInput, "the archive is incomplete (\(address))")
      }
      return digest
    }
  }
}
