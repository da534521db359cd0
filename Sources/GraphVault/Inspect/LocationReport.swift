/// What `graphvault verify LOCATION` found in a folder or `s3://` prefix of archives.
public struct LocationReport: Codable, Sendable {
  /// One archive of the location.
  public struct Archive: Codable, Sendable {
    /// The archive's path or URL.
    public let archive: String
    /// Whether it passed.
    public let ok: Bool
    /// Whether it was read whole and every check run (``VerifyService/verify(archive:password:allowingUnencrypted:meter:)``);
    /// else (outside this run's ``DataSubset``) its header and index were read and checked.
    public let dataChecked: Bool
    /// Its objects, from what was read.
    public let objects: Int
    /// The first problems found, each naming a member, object or reference.
    public let problems: [String]
    /// What kind of failure kept it from being read (a wrong password, a missing part), when
    /// one did; a damaged archive's problems are in ``problems``.
    public let failure: VaultError.Kind?
  }

  /// The location.
  public let location: String
  /// Whether every archive passed.
  public let ok: Bool
  /// The archives read whole this run, as `N/T`, when not all were.
  public let subset: String?
  /// Every archive, stores by name and each store's newest first.
  public let archives: [Archive]
  /// Temporary files that runs which did not finish left (the next backup or prune removes
  /// them); never a failure.
  public let leftovers: Int

  /// The archives that did not pass.
  public var failed: [Archive] { archives.filter { !$0.ok } }
}
