/// The tool's version, printed by `--version` and recorded in every archive's header.
enum ToolVersion {
  static let current = "0.1.0"
}
