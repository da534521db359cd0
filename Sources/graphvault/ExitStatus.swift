import GraphVault

/// Every exit status the tool uses (sysexits.h), decided in one place and documented in
/// `--help`, the man page and the README.
enum ExitStatus: Int32, CaseIterable {
  case success = 0
  case usage = 64
  case dataError = 65
  case noInput = 66
  case cannotCreate = 73
  case ioError = 74
  case temporaryFailure = 75
  case permissionDenied = 77
  case configuration = 78

  /// What the status means to a user or a script.
  var meaning: String {
    switch self {
    case .success: return "success"
    case .usage: return "usage error (bad arguments or options)"
    case .dataError:
      return
        "bad data: not a Core Data store, or a damaged or forged archive"
    case .noInput: return "input missing or unreadable"
    case .cannotCreate: return "destination exists (use --force), or its folder is missing"
    case .ioError: return "I/O error (disk full, write failed)"
    case .temporaryFailure: return "in use by another run or process; retry later (or use --wait)"
    case .permissionDenied:
      return "password missing or wrong, archive not encrypted, or access denied"
    case .configuration:
      return "no model or migration path, archive newer than model, no S3 credentials"
    }
  }

  /// The status for a failure.
  init(_ error: VaultError) { self.init(kind: error.kind) }

  /// The status for a kind of failure.
  init(kind: VaultError.Kind) {
    switch kind {
    case .inputMissing: self = .noInput
    case .invalidInput: self = .dataError
    case .destinationExists, .destinationUnavailable: self = .cannotCreate
    case .ioFailure: self = .ioError
    case .locked: self = .temporaryFailure
    case .modelUnavailable: self = .configuration
    case .accessDenied: self = .permissionDenied
    case .configuration: self = .configuration
    case .usage: self = .usage
    }
  }

  /// The status of a run that went on past archives it could not read (a listing, a search,
  /// a check of a location), from their failures: 65 when any is damaged (what a monitor must
  /// hear first), else 77 when a password did not open one, else the first one's; nil for none.
  static func worst(of failures: [VaultError.Kind]) -> ExitStatus? {
    let statuses = failures.map(ExitStatus.init(kind:))
    for status in [ExitStatus.dataError, .permissionDenied] where statuses.contains(status) {
      return status
    }
    return statuses.first
  }

  /// The table shown in `--help`.
  static var helpTable: String {
    allCases.map { "  \(String($0.rawValue).padding(to: 4))\($0.meaning)" }.joined(separator: "\n")
  }
}

extension String {
  fileprivate func padding(to width: Int) -> String {
    count >= width ? self + " " : self + String(repeating: " ", count: width - count)
  }
}
